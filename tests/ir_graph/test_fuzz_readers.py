"""Fuzzing every reader and the command lines of `tests.fuzzing` (partition, bfs, mst,
graph, schedule, compare; issue 11, section 4).

Hypothesis drives the seeded mutations of `tests.fuzzing` over valid seed
files of every format: each mutated file must be read (or the command must
succeed) or be refused with a `VcutError` of a documented exit status; any
other exception is a failure. The cases run in this process; one test runs a
small campaign in a subprocess with forked workers, where a signal (a kernel
reading out of bounds) is caught and reported instead of ending pytest.
Sizes are chosen for about a minute on two cores; ``bench/fuzz.py`` runs the
long campaign.
"""

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import fuzzing
from tests.helpers import ROOT

#: examples per target (hypothesis), chosen by the cost of a case
EXAMPLES = {"metis": 1000, "edgelist": 1000, "snap-txt": 600, "mtx": 1000, "lg": 600,
            "gzip-text": 600, "graph-npz": 800, "trace-npz": 600, "partition-file": 800,
            "machine-json": 1000, "cli-partition": 600, "cli-bfs": 600, "cli-mst": 300, "cli-graph": 400,
            "cli-quality": 150, "cli-multilevel": 100, "cli-schedule": 60, "cli-compare": 60}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("fuzz"))
    return fuzzing.make_seeds(d), d


def _check(target, corpus, rng):
    seeds, workdir = corpus
    out = fuzzing.run_case(target, seeds, rng, workdir)
    assert not fuzzing.is_failure(out), f"{target}: {out}"


def _fuzz_test(target):
    @settings(max_examples=EXAMPLES[target], deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(rng=st.randoms(use_true_random=False))
    def test(corpus, rng):
        _check(target, corpus, rng)

    test.__name__ = f"test_fuzz_{target.replace('-', '_')}"
    test.__doc__ = f"Mutated inputs of target {target!r}: no traceback, only documented exits."
    return test


for _target in EXAMPLES:
    globals()[f"test_fuzz_{_target.replace('-', '_')}"] = _fuzz_test(_target)


def test_every_target_has_a_fuzz_test():
    """Each target of `tests.fuzzing` runs here."""
    assert set(EXAMPLES) == set(fuzzing.TARGETS)


def test_seed_files_are_valid(corpus):
    """The unmutated seeds are read without error (so mutations start from valid files)."""
    from frontend import load_trace
    from ir_graph import read_graph
    from mapping.machine import load_machine
    from vcut.output import read_assignment

    seeds, _ = corpus
    for kind in ("metis", "edgelist", "snap", "mtx", "lg", "graph_npz"):
        assert read_graph(seeds[kind]).m > 0, kind
    assert load_trace(seeds["trace"]).dynamic_instructions > 0
    assert len(read_assignment(seeds["partition"])) == 30
    assert load_machine(seeds["machine"]).cores == 8


def test_no_signal_in_forked_campaign(tmp_path):
    """Cases through the numba kernels in forked workers: a signal would be reported, not fatal."""
    code = (
        "import json, sys; from tests import fuzzing as F\n"
        f"seeds = F.make_seeds({str(tmp_path)!r})\n"
        "res = F.campaign(['cli-partition', 'cli-bfs', 'cli-graph', 'cli-quality', "
        "'cli-multilevel'], 40, 11, seeds, "
        f"{str(tmp_path)!r}, timeout=120)\n"
        "print(json.dumps({t: r['failures'] for t, r in res.items()}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.returncode == 0, proc.stderr[-2000:]
    failures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert failures == {"cli-partition": [], "cli-bfs": [], "cli-graph": [], "cli-quality": [],
                        "cli-multilevel": []}
