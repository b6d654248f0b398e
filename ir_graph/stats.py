"""Graph statistics: sizes, degree power law, path lengths, critical path.

Power-law fit (Clauset, Shalizi & Newman, SIAM Review 51(4), 2009,
doi:10.1137/070710111): for every candidate ``x_min`` (distinct degrees with
at least `MIN_TAIL` nodes at or above), the discrete maximum-likelihood
exponent of ``P(d) = d^-alpha / zeta(alpha, x_min)`` over the tail
``d >= x_min`` is found numerically; the chosen ``x_min`` minimises the
Kolmogorov-Smirnov distance between the tail's empirical CDF and the fitted
one. Degrees are total degrees (in + out); nodes of degree 0 are not part
of any tail.

Average shortest-path length: hop distances on the undirected graph, averaged
over ordered pairs of distinct nodes that reach each other. Exact (BFS from
every node) for graphs up to `EXACT_PATH_NODES` nodes; otherwise BFS from
``samples`` random sources (seeded), reported with the standard error of the
mean over sources.

For comparison with figures computed the simple way, ``alpha_all`` is the
continuous maximum-likelihood (Hill) estimate over all positive degrees with
``x_min = 1``: ``1 + n / sum(ln d)``. It describes the whole distribution,
bulk included, not its tail.

Directed average path length (DAGs): the same average over pairs ``(u, v)``
with a directed path from ``u`` to ``v``, from the same sources.

Critical path: the longest path of the DAG (IR graphs), by total edge weight
and by edge count; for undirected graphs it is not defined (reported as None).
"""

from dataclasses import asdict, dataclass

import numpy as np

from vcut_base.atomic import atomic_output
from vcut_base.errors import InputError

from .bfs_kernels import bfs_distances
from .critical_path_kernels import longest_path
from .zeta import hurwitz_zeta
from .zeta_kernels import ks_distance, zeta_one

__all__ = ["GraphStats", "graph_stats", "fit_power_law", "PowerLawFit", "degree_plot",
           "EXACT_PATH_NODES", "MIN_TAIL"]

EXACT_PATH_NODES = 2000
MIN_TAIL = 50


@dataclass(frozen=True)
class PowerLawFit:
    """Discrete power-law fit of a degree sample (`fit_power_law`).

    Attributes
    ----------
    alpha : float
        The exponent of ``P(d) ~ d^-alpha`` over the tail ``d >= x_min``
        (NaN when the sample is too small to fit).
    x_min : int
        Where the tail begins: the candidate that minimises ``ks`` (0 when
        not fitted).
    ks : float
        Kolmogorov-Smirnov distance between the tail's empirical CDF and the
        fitted one (NaN when not fitted).
    n_tail : int
        Degrees in the tail (when not fitted: the positive degrees there were).

    Examples
    --------
    >>> from ir_graph import PowerLawFit, fit_power_law, read_graph
    >>> fit = fit_power_law(read_graph("tests/data/power.graph.gz").degrees())
    >>> isinstance(fit, PowerLawFit), round(fit.alpha, 2), fit.x_min, fit.n_tail
    (True, 7.63, 10, 52)
    """

    alpha: float
    x_min: int
    ks: float
    n_tail: int


@dataclass(frozen=True)
class GraphStats:
    """Statistics of a graph (`graph_stats`; see the module docstring).

    Attributes
    ----------
    nodes, edges : int
        Node and edge counts.
    total_weight : float
        Sum of the edge weights.
    self_loops, duplicate_edges : int
        Self-loops, and edges that repeat an earlier one in the undirected
        simple graph (either direction).
    max_degree : int
        Largest total degree (in + out).
    mean_degree : float
        Mean total degree.
    alpha, x_min, ks, n_tail
        The discrete power-law fit of the degrees (`PowerLawFit`; ``alpha``
        NaN when fewer than `MIN_TAIL` nodes have a degree).
    alpha_all : float
        Hill's continuous estimate over all positive degrees, ``x_min = 1``.
    avg_path_length : float
        Mean hop distance over ordered pairs of distinct nodes that reach each
        other, undirected.
    avg_path_length_stderr : float
        Its standard error over the sampled sources (0 when exact).
    path_sources : int
        BFS sources used.
    path_exact : bool
        Whether every node was a source (graphs up to `EXACT_PATH_NODES`).
    avg_directed_path_length : float
        The same along directed paths (NaN for undirected graphs).
    critical_path_weight : float
        Weight of the heaviest path of a DAG whose edges all have
        ``src < dst`` (IR graphs); NaN otherwise.
    critical_path_edges : int
        Edges of the longest path by edge count; -1 when not a DAG.

    Examples
    --------
    >>> import numpy as np
    >>> from ir_graph import Graph, GraphStats, graph_stats
    >>> ring = Graph(n=6, src=np.arange(6), dst=(np.arange(6) + 1) % 6, weight=np.ones(6))
    >>> s = graph_stats(ring)
    >>> isinstance(s, GraphStats), s.nodes, s.edges, s.max_degree, s.avg_path_length
    (True, 6, 6, 2, 1.8)
    >>> s.to_dict()["path_exact"]
    True
    """

    nodes: int
    edges: int
    total_weight: float
    self_loops: int
    duplicate_edges: int
    max_degree: int
    mean_degree: float
    alpha: float
    x_min: int
    ks: float
    n_tail: int
    alpha_all: float
    avg_path_length: float
    avg_path_length_stderr: float
    path_sources: int
    path_exact: bool
    avg_directed_path_length: float
    critical_path_weight: float
    critical_path_edges: int

    def to_dict(self):
        return asdict(self)


def alpha_mle(x, x_min, logsum=None):
    """Discrete MLE of alpha for the tail ``x >= x_min`` (``logsum``: ``np.log(x).sum()``,
    when the caller has it)."""
    n = len(x)
    logsum = np.log(x).sum() if logsum is None else logsum
    x_min = float(x_min)

    def nll(a):
        return n * np.log(zeta_one(a, x_min)) + a * logsum

    return float(_fminbound(nll, 1.0001, 8.0, xatol=1e-6))


def _fminbound(func, lo, hi, xatol=1e-5, maxfun=500):
    """The minimum of ``func`` on ``[lo, hi]``: Brent's bounded method, step for step
    as ``scipy.optimize.minimize_scalar(func, bounds=(lo, hi), method="bounded",
    options={"xatol": xatol})`` takes it (the same ``x``, bit for bit; a test checks).

    Here because importing `scipy.optimize` costs a tenth of a second, a good
    part of a whole ``vcut partition`` run, which needs only this (Eq. 10's
    exponent). Golden-section steps with parabolic interpolation (Forsythe,
    Malcolm & Moler, *Computer Methods for Mathematical Computations*, 1977,
    ``fmin``); ``maxfun`` evaluations at most.
    """
    sqrt_eps = np.sqrt(2.2e-16)
    golden_mean = 0.5 * (3.0 - np.sqrt(5.0))
    a, b = lo, hi
    fulc = a + golden_mean * (b - a)
    nfc, xf = fulc, fulc
    rat = e = 0.0
    x = xf
    fx = func(x)
    num = 1
    ffulc = fnfc = fx
    xm = 0.5 * (a + b)
    tol1 = sqrt_eps * np.abs(xf) + xatol / 3.0
    tol2 = 2.0 * tol1
    while np.abs(xf - xm) > (tol2 - 0.5 * (b - a)):
        golden = 1
        if np.abs(e) > tol1:  # try a parabola through the three best points
            golden = 0
            r = (xf - nfc) * (fx - ffulc)
            q = (xf - fulc) * (fx - fnfc)
            p = (xf - fulc) * q - (xf - nfc) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = np.abs(q)
            r = e
            e = rat
            if (np.abs(p) < np.abs(0.5 * q * r)) and (p > q * (a - xf)) and (p < q * (b - xf)):
                rat = (p + 0.0) / q
                x = xf + rat
                if ((x - a) < tol2) or ((b - x) < tol2):
                    si = np.sign(xm - xf) + ((xm - xf) == 0)
                    rat = tol1 * si
            else:
                golden = 1
        if golden:
            e = a - xf if xf >= xm else b - xf
            rat = golden_mean * e
        si = np.sign(rat) + (rat == 0)
        x = xf + si * np.maximum(np.abs(rat), tol1)
        fu = func(x)
        num += 1
        if fu <= fx:
            if x >= xf:
                a = xf
            else:
                b = xf
            fulc, ffulc = nfc, fnfc
            nfc, fnfc = xf, fx
            xf, fx = x, fu
        else:
            if x < xf:
                a = x
            else:
                b = x
            if (fu <= fnfc) or (nfc == xf):
                fulc, ffulc = nfc, fnfc
                nfc, fnfc = x, fu
            elif (fu <= ffulc) or (fulc == xf) or (fulc == nfc):
                fulc, ffulc = x, fu
        xm = 0.5 * (a + b)
        tol1 = sqrt_eps * np.abs(xf) + xatol / 3.0
        tol2 = 2.0 * tol1
        if num >= maxfun:
            break
    return xf


def fit_power_law(degrees, min_tail=MIN_TAIL, max_candidates=200):
    """Fit ``P(d) ~ d^-alpha`` to positive degrees (Clauset et al.).

    For every candidate ``x_min`` (distinct degrees with at least
    ``min_tail`` degrees at or above it) the discrete maximum-likelihood
    exponent of the tail ``d >= x_min`` is found (``alpha`` in 1.0001 .. 8);
    the candidate whose fit is closest to the tail (Kolmogorov-Smirnov
    distance) wins. Degrees below 1 are ignored.

    Parameters
    ----------
    degrees : array_like of int
        The degree sample (e.g. `Graph.degrees`).
    min_tail : int, default MIN_TAIL (50)
        Smallest tail considered for a candidate ``x_min``.
    max_candidates : int, default 200
        At most this many candidate ``x_min`` (the smallest distinct degrees).

    Returns
    -------
    PowerLawFit
        ``alpha`` is NaN when fewer than ``min_tail`` nodes have degree >= 1.

    Examples
    --------
    >>> from ir_graph import fit_power_law, read_graph
    >>> fit = fit_power_law(read_graph("tests/data/power.graph.gz").degrees())
    >>> round(fit.alpha, 2), fit.x_min, round(fit.ks, 3), fit.n_tail
    (7.63, 10, 0.029, 52)
    >>> fit_power_law([1, 2, 3])
    PowerLawFit(alpha=nan, x_min=0, ks=nan, n_tail=3)
    """
    x = np.sort(np.asarray(degrees, dtype=np.float64))
    x = x[x >= 1]
    if len(x) < min_tail:
        return PowerLawFit(float("nan"), 0, float("nan"), int(len(x)))
    cands, counts = np.unique(x, return_counts=True)
    # the tail from the j-th candidate holds cands[j:]: its empirical CDF counts up from
    # there, and its size and log-sum are what is left of the whole sample's
    before = np.r_[0, np.cumsum(counts)]
    logs = np.log(x)
    best = None
    for j, xm in enumerate(cands[:max_candidates]):
        start = int(before[j])
        size = len(x) - start
        if size < min_tail:
            break
        a = alpha_mle(x[start:], xm, logs[start:].sum())
        d = ks_distance(cands[j:], before[j + 1:] - start, size, a, float(xm))
        if best is None or d < best.ks:
            best = PowerLawFit(a, int(xm), d, int(size))
    return best


def _path_lengths(g, samples, seed, directed=False):
    if directed:
        order = np.argsort(g.src, kind="stable")
        indptr = np.zeros(g.n + 1, dtype=np.int64)
        np.cumsum(np.bincount(g.src, minlength=g.n), out=indptr[1:])
        indices = g.dst[order].astype(np.int64)
    else:
        indptr, indices = g.undirected_csr()
    n = g.n
    exact = n <= EXACT_PATH_NODES
    if exact:
        sources = np.arange(n)
    else:
        rng = np.random.default_rng(seed)
        sources = rng.choice(n, size=min(samples, n), replace=False)
    means = []
    total = 0.0
    pairs = 0
    for s in sources:
        dist = bfs_distances(indptr, indices, int(s))
        reach = dist > 0
        k = int(reach.sum())
        if k:
            total += float(dist[reach].sum())
            pairs += k
            means.append(float(dist[reach].mean()))
    if pairs == 0:
        return 0.0, 0.0, len(sources), exact
    avg = total / pairs
    stderr = 0.0 if exact or len(means) < 2 else float(np.std(means, ddof=1) / np.sqrt(len(means)))
    return avg, stderr, len(sources), exact


def graph_stats(g, *, path_samples=32, seed=0):
    """Statistics of a `Graph` (see the module docstring).

    Sizes, degrees, the degree distribution's power-law fit
    (`fit_power_law`), average shortest-path lengths (exact up to
    `EXACT_PATH_NODES` nodes, else sampled) and, for DAGs whose edges all go
    from a lower to a higher id (IR graphs), the critical path.

    Parameters
    ----------
    g : Graph
        The graph (directed or not).
    path_samples : int, default 32
        BFS sources for the average path length of graphs above
        `EXACT_PATH_NODES` nodes.
    seed : int, default 0
        Seed of the source sample.

    Returns
    -------
    GraphStats

    Raises
    ------
    InputError
        ``path_samples`` < 1, or ``seed`` outside ``0 .. 2**63 - 1``.

    Examples
    --------
    A ring of six nodes: distances 1, 1, 2, 2, 3 from each node.

    >>> import numpy as np
    >>> from ir_graph import Graph, graph_stats
    >>> ring = Graph(n=6, src=np.arange(6), dst=(np.arange(6) + 1) % 6, weight=np.ones(6))
    >>> s = graph_stats(ring)
    >>> s.nodes, s.edges, s.mean_degree, s.avg_path_length, s.path_exact
    (6, 6, 2.0, 1.8, True)

    A DAG (a diamond 0 -> 1, 2 -> 3 with a heavy edge 0 -> 2):

    >>> dag = Graph(n=4, src=np.array([0, 0, 1, 2]), dst=np.array([1, 2, 3, 3]),
    ...             weight=np.array([1.0, 5.0, 1.0, 1.0]), directed=True)
    >>> s = graph_stats(dag)
    >>> s.critical_path_weight, s.critical_path_edges, s.avg_directed_path_length
    (6.0, 2, 1.2)
    >>> graph_stats(ring, path_samples=0)
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: path_samples must be a positive integer, got 0
    """
    if isinstance(path_samples, bool) or not isinstance(path_samples, (int, np.integer)) or \
            path_samples < 1:
        raise InputError(f"path_samples must be a positive integer, got {path_samples!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**63:
        raise InputError(f"the seed must be an integer in 0..{2**63 - 1}, got {seed!r}")
    deg = g.degrees()
    fit = fit_power_law(deg)
    loops, dup = g.simple_counts()
    avg, err, nsrc, exact = _path_lengths(g, path_samples, seed) if g.n else (0.0, 0.0, 0, True)
    if g.directed and g.n:
        davg = _path_lengths(g, path_samples, seed, directed=True)[0]
    else:
        davg = float("nan")
    pos = deg[deg > 0].astype(np.float64)
    logsum = np.log(pos).sum() if len(pos) else 0.0
    alpha_all = float(1.0 + len(pos) / logsum) if logsum > 0 else float("nan")
    if g.directed and g.m and np.all(g.src < g.dst):
        cw, ce = longest_path(g.n, g.src, g.dst, g.weight)
    else:
        cw, ce = float("nan"), -1
    return GraphStats(
        nodes=int(g.n), edges=g.m, total_weight=g.total_weight, self_loops=loops,
        duplicate_edges=dup, max_degree=int(deg.max()) if g.n else 0,
        mean_degree=float(deg.mean()) if g.n else 0.0, alpha=fit.alpha, x_min=fit.x_min,
        ks=fit.ks, n_tail=fit.n_tail, alpha_all=alpha_all, avg_path_length=avg,
        avg_path_length_stderr=err, path_sources=nsrc, path_exact=exact,
        avg_directed_path_length=davg, critical_path_weight=float(cw),
        critical_path_edges=int(ce),
    )


def degree_plot(g, path, fit=None, title=None):
    """Write a log-log plot of the degree distribution (PNG), with the fit.

    The fraction of nodes of each positive degree, and the fitted power law
    over its tail when there is one. Needs matplotlib (imported on first
    use; the Agg backend).

    Parameters
    ----------
    g : Graph
        The graph whose total degrees are plotted.
    path : str or path-like
        The PNG file, written atomically.
    fit : PowerLawFit, optional
        The fit to draw; default: `fit_power_law` of the degrees.
    title : str, optional
        Default: "degree distribution (N nodes, M edges)".

    Returns
    -------
    None

    Raises
    ------
    OutputError
        The path's directory does not exist or is not writable.

    Examples
    --------
    >>> import os, tempfile
    >>> from ir_graph import degree_plot, read_graph
    >>> g = read_graph("tests/data/power.graph.gz")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     degree_plot(g, os.path.join(tmp, "degrees.png"), title="power grid")
    ...     open(os.path.join(tmp, "degrees.png"), "rb").read(4)
    b'\\x89PNG'
    """
    import matplotlib.pyplot as plt  # lazy: matplotlib is optional

    fig = degree_figure(g, fit, title)
    with atomic_output(path) as fh:
        fig.savefig(fh, format="png")
    plt.close(fig)


def degree_figure(g, fit=None, title=None):
    """The matplotlib figure of `degree_plot` (the caller closes it)."""
    import matplotlib  # lazy: matplotlib is optional

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: matplotlib is optional

    deg = g.degrees()
    deg = deg[deg > 0]
    vals, counts = np.unique(deg, return_counts=True)
    fit = fit or fit_power_law(deg)
    fig, ax = plt.subplots(figsize=(5.5, 4.0), dpi=120)
    ax.loglog(vals, counts / counts.sum(), "o", ms=3, label="P(d)")
    if np.isfinite(fit.alpha):
        xs = np.arange(fit.x_min, vals.max() + 1)
        frac = fit.n_tail / len(deg)
        ys = frac * xs ** (-fit.alpha) / hurwitz_zeta(fit.alpha, fit.x_min)
        shown = ys >= 0.5 * (counts / counts.sum()).min()  # stay within the data's range
        xs, ys = xs[shown], ys[shown]
        ax.loglog(xs, ys, "-", label=f"fit: alpha = {fit.alpha:.2f}, x_min = {fit.x_min}")
    ax.set_xlabel("degree d")
    ax.set_ylabel("fraction of nodes")
    ax.set_title(title or f"degree distribution ({g.n:,} nodes, {g.m:,} edges)")
    ax.legend()
    fig.tight_layout()
    return fig
