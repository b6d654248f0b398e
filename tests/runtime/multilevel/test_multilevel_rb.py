"""``scheme="rb"``: recursive bisection of the whole graph (METIS's ``-ptype=rb``), then
the refiner on the graph; and the cap on how far a bisection coarsens."""

import json

import numpy as np
import pytest

from vcut_base.errors import InputError
from runtime.generators import rmat
from runtime.multilevel import csr_from_edges, initial, multilevel_partition
from tests.helpers import cut_of, on_disk, random_level


def bounds(lv, k, fractions=None, imbalance=0.03):
    """Each part's bound, as the partitioner defines it: floor((1 + imbalance) * target),
    at least ceil(target)."""
    total = int(lv.vwgt.sum())
    fr = np.full(k, 1.0 / k) if fractions is None else np.asarray(fractions) / sum(fractions)
    target = total * fr
    return np.maximum(np.floor((1 + imbalance) * target), np.ceil(target)).astype(np.int64)


def loads_of(lv, part, k):
    return np.bincount(part, weights=lv.vwgt, minlength=k).astype(np.int64)


@pytest.mark.parametrize("k", [2, 3, 5, 8])
@pytest.mark.parametrize("refiner", ["fm", "jet", "greedy"])
def test_rb_is_a_balanced_partition_of_the_whole_graph(k, refiner):
    lv = random_level(k, n=300, m=1200, vmax=3)
    r = multilevel_partition(lv, k, seed=4, scheme="rb", refiner=refiner)
    assert (r.scheme, r.refiner, r.device) == ("rb", refiner, "cpu")
    assert r.level_sizes == [(lv.n, lv.m)]  # no k-way hierarchy: one level, the graph
    assert r.part.min() >= 0 and r.part.max() < k and len(r.part) == lv.n
    assert r.cut == cut_of(lv, r.part)
    assert (loads_of(lv, r.part, k) <= bounds(lv, k)).all()
    assert r.loads.tolist() == loads_of(lv, r.part, k).tolist()
    again = multilevel_partition(lv, k, seed=4, scheme="rb", refiner=refiner)
    assert again.part.tolist() == r.part.tolist()  # deterministic for a seed


def test_rb_keeps_heterogeneous_targets():
    lv = random_level(7, n=400, m=1500, vmax=2)
    targets = [1, 2, 3, 2]
    r = multilevel_partition(lv, 4, seed=1, scheme="rb", targets=targets)
    assert (loads_of(lv, r.part, 4) <= bounds(lv, 4, targets)).all()
    assert r.cut == cut_of(lv, r.part)


def test_rb_falls_back_to_kway_where_the_bisections_break_a_bound():
    # 38 vertices of weight 1-4 into 15 parts at 0.1 %: the bisections leave a part one
    # over its bound with no single move to repair it; k-way meets every bound
    lv = random_level(9, n=38, m=143, vmax=4)
    want = multilevel_partition(lv, 15, seed=9, imbalance=0.001)
    r = multilevel_partition(lv, 15, seed=9, imbalance=0.001, scheme="rb")
    assert (loads_of(lv, want.part, 15) <= bounds(lv, 15, imbalance=0.001)).all()
    assert r.scheme == "kway" and r.part.tolist() == want.part.tolist()
    assert r.cut == cut_of(lv, r.part)


def test_rb_cuts_less_than_kway_on_rmat_graphs():
    # the case the scheme is for: a core with a periphery, where k-way coarsening merges
    # the two (measured on rmat18 at k = 8: 0.52 x METIS's cut against 1.57 x)
    g = rmat(10, 8, seed=1)
    lv = csr_from_edges(g.src, g.dst, g.weight, g.n)
    for k in (4, 8):
        kway = multilevel_partition(lv, k, seed=0)
        rb = multilevel_partition(lv, k, seed=0, scheme="rb")
        assert rb.cut == cut_of(lv, rb.part) and kway.cut == cut_of(lv, kway.part)
        assert rb.cut < kway.cut
        assert (loads_of(lv, rb.part, k) <= bounds(lv, k)).all()


def test_a_bisection_coarsens_to_at_most_the_cap(monkeypatch):
    seen = []
    real = initial.coarsen

    def spy(sub, k, seed, stop=None, edges=True, thin=None):
        seen.append((sub.n, stop))
        assert edges is False  # the bisections stop by the vertex rule alone
        assert thin == initial.THIN_LEVELS == 0.75  # and keep the levels that shrank
        return real(sub, k, seed, stop, edges, thin)

    monkeypatch.setattr(initial, "coarsen", spy)
    g = rmat(12, 4, seed=2)
    lv = csr_from_edges(g.src, g.dst, g.weight, g.n)
    multilevel_partition(lv, 4, seed=0, scheme="rb")
    # coarsen_to(n, 2) = max(n / 20, 60), capped at BISECT_CAP
    assert seen and all(stop == min(max(n // 20, 60), initial.BISECT_CAP) for n, stop in seen)
    assert seen[0] == (lv.n, initial.BISECT_CAP)  # the whole graph: 4096 / 20 > 200


def test_scheme_bad_input():
    lv = random_level(0)
    for bad in ("metis", "", None):
        with pytest.raises(InputError, match="scheme must be one of kway, rb"):
            multilevel_partition(lv, 4, scheme=bad)
    with pytest.raises(InputError, match="scheme 'rb' .* runs on the CPU"):
        multilevel_partition(lv, 4, device="gpu", scheme="rb")  # the simulator's GPU in CI
    assert multilevel_partition(lv, 4, device="auto", scheme="rb").device == "cpu"


def test_cli_scheme(tmp_path, capsys):
    from vcut.cli import main

    path, lv = on_disk(tmp_path, rmat(9, 8, seed=3))
    out = tmp_path / "g.part"
    assert main(["partition", str(path), "-p", "4", "--algo", "multilevel", "--scheme", "rb",
                 "-o", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    want = multilevel_partition(lv, 4, scheme="rb")
    assert (res["scheme"], res["refiner"], res["edge_cut"]) == ("rb", "fm", want.cut)
    assert [int(x) for x in out.read_text().split()] == want.part.tolist()
    assert main(["partition", str(path), "-p", "4", "--algo", "multilevel", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["scheme"] == "kway"
    assert main(["partition", str(path), "-p", "4", "--algo", "wb-libra", "--scheme",
                 "rb"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "error: --scheme is for --algo multilevel; drop it for --algo wb-libra")
    assert main(["partition", str(path), "-p", "4", "--algo", "multilevel", "--scheme",
                 "rb", "--device", "gpu"]) == 2
    assert "runs on the CPU" in capsys.readouterr().err
