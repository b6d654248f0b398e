"""Fuzzing ``vcut compare`` (target ``cli-compare`` of `tests.fuzzing`).

Hypothesis drives the seeded cases: the small seed trace or graphs (half the time
mutated) with random ``-p`` lists (past the vertex count, zero, malformed, past int32),
``--methods``, ``--machine``, mapping, threshold, lambda, order, seed, window and
weights flags, ``-o`` and ``--json``. Each run must succeed, writing both files of
``-o``, or be refused with one error line and a documented exit status, leaving
nothing behind. A few seconds in all; ``bench/fuzz.py --targets cli-compare`` runs the
long campaign.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import fuzzing

#: examples per target (hypothesis)
EXAMPLES = {"cli-compare": 60}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("fuzz"))
    return fuzzing.make_seeds(d), d


@settings(max_examples=EXAMPLES["cli-compare"], deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(rng=st.randoms(use_true_random=False))
def test_fuzz_cli_compare(corpus, rng):
    """Mutated ``vcut compare`` command lines: no traceback, only documented exits."""
    seeds, workdir = corpus
    out = fuzzing.run_case("cli-compare", seeds, rng, workdir)
    assert not fuzzing.is_failure(out), f"cli-compare: {out}"
