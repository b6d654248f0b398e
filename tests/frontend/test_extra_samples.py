"""Our own programs (samples/extra.json, issue 14) trace correctly: same output as a native gcc build."""

import json
import os

import pytest

from tests.conftest import ROOT
from tests.frontend import test_samples

with open(os.path.join(ROOT, "samples", "extra.json")) as fh:
    EXTRA = json.load(fh)["samples"]
for _s in EXTRA:
    _s["path"] = os.path.join(ROOT, "samples", _s["source"])


@pytest.mark.parametrize("sample", EXTRA, ids=[s["name"] for s in EXTRA])
def test_extra_sample_traces_with_native_output(sample):
    # the same checks as the ten benchmarks: native stdout, clean exit, counts, accesses located
    test_samples.test_sample_traces_with_native_output(sample)
