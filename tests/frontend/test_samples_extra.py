"""Our own programs (samples/extra.json, issue 14) trace correctly: same output as a native gcc build."""

import pytest

from tests.helpers import assert_traces_like_native, samples_manifest

EXTRA = samples_manifest("extra.json")


@pytest.mark.parametrize("sample", EXTRA, ids=[s["name"] for s in EXTRA])
def test_extra_sample_traces_with_native_output(sample):
    # the same checks as the ten benchmarks: native stdout, clean exit, counts, accesses located
    assert_traces_like_native(sample)
