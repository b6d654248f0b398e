"""The registry of vertex cuts (`vcut.cuts`): names, options, presets, ``--preset``."""

import hashlib
import json
from dataclasses import fields

import numpy as np
import pytest

from ir_graph import write_graph
from runtime.generators import rmat
from tests.helpers import ir_dag, path_graph, run_cli, run_cli_error
from vcut.cli import build_parser
from vcut.cuts import (
    ALGORITHMS,
    CUTS,
    GREEDY,
    PRESETS,
    lookup,
    make_options,
    option_names,
)
from vcut.cuts.best import BestOptions
from vcut.cuts.greedy import GreedyOptions
from vcut.cuts.hdrf import HdrfOptions
from vcut.cuts.par import ParOptions
from vcut.partition import partition_graph
from vcut_base.errors import InputError


def _sha(part):
    return hashlib.sha256(part.assignment.astype(np.int32).tobytes()).hexdigest()


# -- names ----------------------------------------------------------------------------------
def test_every_name_resolves_to_a_family_with_default_options():
    assert ALGORITHMS == tuple(CUTS) and len(ALGORITHMS) == 20
    for algo in ALGORITHMS:
        cut = lookup(algo)
        assert cut.options.__dataclass_params__.frozen, algo
        assert isinstance(make_options(algo), cut.options)
        assert option_names(algo) == tuple(f.name for f in fields(cut.options))
    assert GREEDY == ("pg", "libra", "w-pg", "wb-pg", "w-libra", "wb-libra")
    assert {lookup(a).family for a in ALGORITHMS} == {
        "greedy", "hashing", "hdrf", "ne", "hep", "spac", "wvp", "hypergraph", "par", "best"}


def test_every_name_partitions_a_path():
    g = path_graph(40)
    for algo in ALGORITHMS:
        if algo == "hypergraph":  # Mt-KaHyPar is optional
            continue
        part = partition_graph(g, 2, algo)
        assert part.info["algo"] == algo and set(part.assignment.tolist()) <= {0, 1}, algo


def test_the_cli_offers_every_name():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a.choices, dict)
               and "partition" in a.choices)
    algo = next(a for a in sub.choices["partition"]._actions if a.dest == "algo")
    assert tuple(algo.choices) == ALGORITHMS + ("multilevel",)


def test_an_unknown_name_is_refused():
    with pytest.raises(InputError) as exc:
        partition_graph(path_graph(4), 2, "no-such-cut")
    assert str(exc.value) == ("unknown algorithm 'no-such-cut'; use one of random, pg, libra, "
                              "w-pg, wb-pg, w-libra, wb-libra, dbh, hdrf, spac, wvp-random, "
                              "wvp-greedy, hypergraph, par, ne, hep, best, graphx-1d, graphx-2d, "
                              "graphx-crvc")


# -- options --------------------------------------------------------------------------------
def test_an_unknown_option_names_it_and_the_familys_fields():
    with pytest.raises(InputError) as exc:
        partition_graph(path_graph(4), 2, "hdrf", options={"lam": 2})
    assert str(exc.value) == ("unknown option 'lam' for hdrf; its options (HdrfOptions) are "
                              "refine, imbalance, order")
    with pytest.raises(InputError) as exc:
        make_options("wb-libra", {"beta": 6.0})
    assert str(exc.value) == ("unknown option 'beta' for wb-libra; its options (GreedyOptions) "
                              "are lam, order, batch, apply, refine, imbalance")


@pytest.mark.parametrize("algo, knob, message", [
    ("hdrf", {"numa": (1, 2, 3)}, "the NUMA model is par's; hdrf does not take one"),
    ("ne", {"tau": 3.0}, "tau is HEP's degree threshold; it does not apply to ne"),
    ("dbh", {"grains": 0.5}, "block runs are scheduled whole by par; dbh does not take them"),
    ("hdrf", {"batch": 8}, "batched streaming is for the greedy family (pg, libra, w-pg, wb-pg, "
                           "w-libra, wb-libra); drop --batch for hdrf"),
    ("ne", {"apply": "rounds"}, "--apply is for the greedy family's batched stream: give --batch "
                                "or --device gpu, or drop --apply"),
    ("par", {"refine": True}, "par's replicas are refined by vcut analyze, where the simulator "
                              "judges what a move costs in time; drop --refine"),
])
def test_an_option_of_another_family_keeps_its_message(algo, knob, message):
    with pytest.raises(InputError) as exc:
        make_options(algo, knob)
    assert str(exc.value) == message


def test_options_as_a_dataclass_or_a_mapping_give_the_same_partition():
    g = rmat(7, 6, seed=4)
    a = partition_graph(g, 4, "wb-libra", GreedyOptions(lam=1.05, order="bfs"), seed=2)
    b = partition_graph(g, 4, "wb-libra", {"lam": 1.05, "order": "bfs"}, seed=2)
    assert np.array_equal(a.assignment, b.assignment)
    assert a.info["lambda"] == 1.05 and a.info["order"] == "bfs"
    with pytest.raises(InputError, match="the options of hdrf are a HdrfOptions or a mapping"):
        partition_graph(g, 4, "hdrf", GreedyOptions())
    with pytest.raises(InputError, match="lambda must be at least 1"):
        GreedyOptions(lam=0.5)
    with pytest.raises(InputError, match="unknown edge order 'up'"):
        HdrfOptions(order="up")


# -- presets --------------------------------------------------------------------------------
#: today's par and best on small graphs (before the registry, at 344b418; best's again at
#: 8beb882, when it began to run on the edges in canonical order, and when it began to run
#: on the canonical graph, renumbered): sha256 of the int32 assignment
PAR_DEFAULT = "bf39b11747b089e72cba8d173bde9e42b380727101bb24c779c287746943b9d6"
BEST_DEFAULT = "153c5fdf1c8c3885fe2708211d30ecd05ea54a9058c15bd9c757ac7e90f19cb6"


def test_default_presets_are_todays_defaults_bit_for_bit():
    assert PRESETS == ("fast", "default", "strong")
    assert vars(ParOptions.preset("default")) == vars(ParOptions())
    assert vars(BestOptions.preset("default")) == vars(BestOptions())
    g = ir_dag(300, 900, seed=1)
    for options in (None, {"preset": "default"}, ParOptions.preset("default")):
        part = partition_graph(g, 4, "par", options)
        assert _sha(part) == PAR_DEFAULT
        assert part.info["model_makespan"] == pytest.approx(2305.6666666666665)
        assert part.info["beta"] == 12.0 and "gammas" not in part.info
    h = rmat(8, 8, seed=2)
    for options in (None, {"preset": "default"}, BestOptions.preset("default")):
        part = partition_graph(h, 4, "best", options)
        assert _sha(part) == BEST_DEFAULT and part.info["starts"] == 4


def test_fast_and_strong_presets_are_valid():
    g = ir_dag(300, 900, seed=1)
    default = partition_graph(g, 4, "par")
    fast = partition_graph(g, 4, "par", {"preset": "fast"})
    assert fast.info["beta"] == 1.5 and len(fast.info["prices"]) == 1
    strong = partition_graph(g, 4, "par", {"preset": "strong"})
    assert [gm for gm, _ in strong.info["gammas"]] == [0.0, 0.25, 0.5, 1.0]
    assert strong.info["model_makespan"] == min(s for _, s in strong.info["gammas"])
    assert strong.info["model_makespan"] <= default.info["model_makespan"]
    for part in (fast, strong):
        assert part.assignment.min() >= 0 and part.assignment.max() < 4
    h = rmat(8, 8, seed=2)
    fast = partition_graph(h, 4, "best", {"preset": "fast"}).info
    # one expansion, FM alone: no dissolving pass ran
    assert (fast["starts"], fast["candidates"], fast["refine_passes"]) == (1, "ne", 0)
    strong = partition_graph(h, 4, "best", {"preset": "strong"})
    assert strong.info["starts"] == 8
    default = partition_graph(h, 4, "best")
    assert strong.metrics.replication_factor <= default.metrics.replication_factor


def test_an_explicit_knob_overrides_the_preset():
    assert ParOptions.preset("fast", beta=6.0).beta == 6.0
    assert make_options("par", {"preset": "fast", "beta": 6.0}).beta == 6.0
    strong = make_options("par", {"preset": "strong", "gamma": 0.5})
    assert strong.gamma == 0.5 and strong.gammas is None
    assert make_options("best", {"preset": "strong", "starts": 2}).starts == 2
    assert make_options("best", {"preset": "fast", "fm_budget": 0.5}).fm_budget == 0.5


@pytest.mark.parametrize("bad", [-0.1, float("inf"), float("nan"), True, "0.1"])
def test_best_refuses_an_fm_budget_that_is_not_a_number_of_moves(bad):
    with pytest.raises(InputError) as exc:
        make_options("best", {"fm_budget": bad})
    assert str(exc.value) == ("best's fm_budget must be a number of FM moves per edge >= 0, "
                              f"got {bad!r}")


@pytest.mark.parametrize("name", ["fm_passes", "fm_limit"])
@pytest.mark.parametrize("bad", [0, -3, 1.5, True, "8"])
def test_best_refuses_fm_passes_and_limits_that_are_not_whole_numbers(name, bad):
    with pytest.raises(InputError) as exc:
        make_options("best", {name: bad})
    assert str(exc.value) == f"best's {name} must be a whole number >= 1, got {bad!r}"


def test_the_strong_preset_runs_a_deeper_fm():
    from vcut.cuts.best import STRONG_FM
    from vcut.quality import FM_BUDGET, FM_LIMIT, FM_PASSES

    strong, default = make_options("best", {"preset": "strong"}), make_options("best", {})
    assert (strong.fm_budget, strong.fm_passes, strong.fm_limit) == (3.0, 32, 64) == (
        STRONG_FM["fm_budget"], STRONG_FM["fm_passes"], STRONG_FM["fm_limit"])
    assert (default.fm_budget, default.fm_passes, default.fm_limit) == (
        FM_BUDGET, FM_PASSES, FM_LIMIT) == (0.3, 8, 16)
    assert make_options("best", {"preset": "strong", "fm_passes": 2}).fm_passes == 2


def test_unknown_presets_and_presets_of_other_cuts_are_refused():
    with pytest.raises(InputError) as exc:
        make_options("par", {"preset": "quick"})
    assert str(exc.value) == "unknown preset 'quick'; use one of fast, default, strong"
    with pytest.raises(InputError) as exc:
        make_options("hdrf", {"preset": "fast"})
    assert str(exc.value) == ("presets (fast, default, strong) are for par and best; hdrf has "
                              "none: drop --preset")


# -- the command line -----------------------------------------------------------------------
def test_preset_on_the_command_line(tmp_path, capsys):
    g = ir_dag(300, 900, seed=1)
    path = tmp_path / "g.npz"
    write_graph(g, str(path))
    docs = {}
    for preset in ("fast", "default", "strong"):
        code, out, _ = run_cli(capsys, "partition", path, "-p", "4", "--algo", "par",
                               "--preset", preset, "--json")
        assert code == 0
        docs[preset] = json.loads(out)
    code, out, _ = run_cli(capsys, "partition", path, "-p", "4", "--algo", "par", "--json")
    plain = json.loads(out)
    assert {k: v for k, v in docs["default"].items() if k != "seconds"} == \
        {k: v for k, v in plain.items() if k != "seconds"}
    assert docs["fast"]["beta"] == 1.5
    assert docs["strong"]["model_makespan"] <= plain["model_makespan"]
    # an explicit knob overrides the preset
    code, out, _ = run_cli(capsys, "partition", path, "-p", "4", "--algo", "par", "--preset",
                           "fast", "--beta", "6", "--json")
    assert code == 0 and json.loads(out)["beta"] == 6.0
    code, out, _ = run_cli(capsys, "partition", path, "-p", "4", "--algo", "par", "--preset",
                           "strong", "--gamma", "0.5", "--json")
    assert code == 0 and json.loads(out)["gamma"] == 0.5
    code, out, _ = run_cli(capsys, "partition", path, "-p", "4", "--algo", "best", "--preset",
                           "fast", "--json")
    assert code == 0 and json.loads(out)["starts"] == 1
    assert run_cli_error(capsys, "partition", path, "-p", "4", "--algo", "hdrf",
                         "--preset", "fast") == \
        (2, "error: presets (fast, default, strong) are for par and best; hdrf has none: "
            "drop --preset")
