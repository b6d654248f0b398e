"""Statistics against values derived by hand or from known distributions."""

import networkx as nx
import numpy as np
import pytest

from ir_graph import CacheModel, Graph, fit_power_law, graph_stats


def test_power_law_fit_recovers_a_known_exponent():
    rng = np.random.default_rng(7)
    for alpha in (2.2, 2.8):
        x = rng.zipf(alpha, size=40000)
        fit = fit_power_law(x)
        assert abs(fit.alpha - alpha) < 0.05, (alpha, fit)
        assert fit.x_min <= 3


def test_path_lengths_and_critical_path_by_hand():
    # a directed path 0 -> 1 -> ... -> 9 with weights 1..9
    n = 10
    g = Graph(n=n, src=np.arange(9), dst=np.arange(1, 10), weight=np.arange(1.0, 10.0),
              directed=True).validate()
    s = graph_stats(g)
    # undirected path graph: mean distance over ordered pairs = (n + 1) / 3
    assert s.path_exact and s.avg_path_length == pytest.approx((n + 1) / 3)
    assert s.avg_path_length == pytest.approx(nx.average_shortest_path_length(nx.path_graph(n)))
    assert s.avg_directed_path_length == pytest.approx((n + 1) / 3)
    assert s.critical_path_weight == 45.0 and s.critical_path_edges == 9
    assert s.total_weight == 45.0 and s.nodes == 10 and s.edges == 9


def test_critical_path_takes_the_heaviest_route():
    #   0 -> 1 (5) -> 3 (1); 0 -> 2 (1) -> 3 (10)
    g = Graph(n=4, src=np.array([0, 0, 1, 2]), dst=np.array([1, 2, 3, 3]),
              weight=np.array([5.0, 1.0, 1.0, 10.0]), directed=True).validate()
    s = graph_stats(g)
    assert s.critical_path_weight == 11.0 and s.critical_path_edges == 2


def test_sampled_path_length_is_close_with_a_stated_error():
    nxg = nx.grid_2d_graph(50, 50)
    g = Graph.from_networkx(nx.convert_node_labels_to_integers(nxg))
    exact = nx.average_shortest_path_length(nx.convert_node_labels_to_integers(nxg))
    s = graph_stats(g, path_samples=64, seed=3)
    assert not s.path_exact and s.path_sources == 64
    assert abs(s.avg_path_length - exact) < 4 * s.avg_path_length_stderr + 1e-9
    assert s.avg_path_length_stderr > 0


def test_cache_model_by_hand():
    cm = CacheModel()  # 512 L1 sets x 4 ways, 1024 L2 sets x 8 ways, 32-byte blocks
    stride = 512 * 32  # same L1 set
    addr = [0, 4, 40, stride, 2 * stride, 3 * stride, 4 * stride, 0, 70]
    size = [4, 4, 4, 4, 4, 4, 4, 4, 8]
    lat, counts = cm.latencies(addr, size)
    # 0: miss; 4: same block hit; 40: new block miss; 4 more blocks in set 0
    # evict block 0 from the 4-way L1 set, so 0 again hits in L2; 70..77 is block 2 (miss)
    assert lat.tolist() == [110, 2, 110, 110, 110, 110, 110, 20, 110]
    assert counts.tolist() == [1, 1, 7]
    lat, _ = cm.latencies([30], [4])  # straddles blocks 0 and 1
    assert lat.tolist() == [220]


def _scipy_bounded(f, lo, hi, xatol, maxiter=500):
    from scipy import optimize

    return optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded",
                                    options={"xatol": xatol, "maxiter": maxiter}).x


@pytest.mark.parametrize("alpha", [1.5, 2.1, 2.8, 3.6])
def test_bounded_minimiser_is_scipys_bit_for_bit_on_zipf_likelihoods(alpha):
    """`_fminbound` replaces scipy.optimize (an import of 0.1 s) in the exponent fits."""
    from scipy import special

    from ir_graph.stats import _fminbound

    x = np.random.default_rng(int(alpha * 10)).zipf(alpha, 5000).astype(np.float64)
    for x_min in (1, 2, 3, 5, 8):
        tail = x[x >= x_min]
        n, logsum = len(tail), np.log(tail).sum()

        def nll(a, n=n, logsum=logsum, x_min=x_min):
            return n * np.log(special.zeta(a, x_min)) + a * logsum

        for xatol in (1e-6, 1e-3):
            assert _fminbound(nll, 1.0001, 8.0, xatol) == _scipy_bounded(nll, 1.0001, 8.0, xatol)


@pytest.mark.parametrize("alpha", [1.6, 2.3, 3.0])
def test_power_law_fit_is_the_scipy_reference_bit_for_bit(alpha):
    """The fit's sliced tails (one sort, one log, running counts) and compiled zeta give
    what the textbook loop gives with scipy's zeta and optimiser, every candidate tail
    recomputed from scratch."""
    from scipy import special

    from ir_graph import fit_power_law

    x = np.random.default_rng(int(alpha * 10)).zipf(alpha, 4000).astype(np.float64)
    best = None
    for x_min in np.unique(x)[:200]:
        tail = np.sort(x[x >= x_min])
        if len(tail) < 50:
            break
        n, logsum = len(tail), np.log(tail).sum()
        a = float(_scipy_bounded(
            lambda a: n * np.log(special.zeta(a, x_min)) + a * logsum, 1.0001, 8.0, 1e-6))
        vals, counts = np.unique(tail, return_counts=True)
        fit = 1.0 - special.zeta(a, vals + 1) / special.zeta(a, x_min)
        d = float(np.max(np.abs(np.cumsum(counts) / n - fit)))
        if best is None or d < best[2]:
            best = (a, int(x_min), d, n)
    got = fit_power_law(x)
    assert (got.alpha, got.x_min, got.ks, got.n_tail) == best


def test_bounded_minimiser_is_scipys_on_edge_cases():
    from ir_graph.stats import _fminbound

    cases = [
        (lambda a: (a - 3.0) ** 2, 1.0, 8.0),  # inside
        (lambda a: a, 1.0001, 8.0),  # at the lower bound
        (lambda a: -a, 1.0001, 8.0),  # at the upper bound
        (lambda a: 0.0 * a, 1.0, 2.0),  # flat
        (lambda a: np.cos(3 * a), 0.0, 10.0),  # several minima
        (lambda a: abs(a - 2.5), 2.0, 3.0),  # a kink
    ]
    for f, lo, hi in cases:
        for xatol, maxfun in ((1e-6, 500), (1e-12, 500), (1e-300, 7)):  # the last stops early
            assert _fminbound(f, lo, hi, xatol, maxfun) == _scipy_bounded(f, lo, hi, xatol, maxfun)
    assert _fminbound(lambda a: (a - 3.0) ** 2, 1.0, 8.0, 1e-9) == pytest.approx(3.0, abs=1e-8)
