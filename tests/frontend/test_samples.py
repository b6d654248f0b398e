"""The bundled samples trace correctly: same output as a native gcc build."""

import pytest

from tests.helpers import assert_traces_like_native, samples_manifest

MANIFEST = samples_manifest()


@pytest.mark.parametrize("sample", MANIFEST, ids=[s["name"] for s in MANIFEST])
def test_sample_traces_with_native_output(sample):
    assert_traces_like_native(sample)
