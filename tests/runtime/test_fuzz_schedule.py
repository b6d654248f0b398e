"""Fuzzing ``vcut schedule`` (target ``cli-schedule`` of `tests.fuzzing`).

Hypothesis drives the seeded cases: random job kinds at small sizes and at their
boundaries, sub-loads, rounds, policies, seeds, ``--devices`` specs of the CPU and
simulated devices with mutated model numbers (a ``gpu`` request must be refused here),
``--check``, ``--json`` and ``--report``. Each run must succeed with every sub-load run
once, or be refused with one error line and a documented exit status, leaving nothing
behind; any other outcome fails. A few seconds in all; ``bench/fuzz.py --targets
cli-schedule`` runs the long campaign.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import fuzzing

#: examples per target (hypothesis)
EXAMPLES = {"cli-schedule": 60}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("fuzz"))
    return fuzzing.make_seeds(d), d


@settings(max_examples=EXAMPLES["cli-schedule"], deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(rng=st.randoms(use_true_random=False))
def test_fuzz_cli_schedule(corpus, rng):
    """Mutated ``vcut schedule`` command lines: no traceback, only documented exits."""
    seeds, workdir = corpus
    out = fuzzing.run_case("cli-schedule", seeds, rng, workdir)
    assert not fuzzing.is_failure(out), f"cli-schedule: {out}"
