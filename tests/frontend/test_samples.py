"""The bundled samples trace correctly: same output as a native gcc build."""

import numpy as np
import pytest

from frontend import compile_program, trace_program
from tests.conftest import samples_manifest

MANIFEST = samples_manifest()


@pytest.mark.parametrize("sample", MANIFEST, ids=[s["name"] for s in MANIFEST])
def test_sample_traces_with_native_output(sample):
    src = sample["path"]
    t = trace_program(compile_program(src, defines=sample["defines"]))
    assert t.meta["stdout"] == sample["stdout"]
    assert t.exit_code == 0 and not t.truncated
    assert t.dynamic_instructions == int((t.block_counts() * t.static.blk_ninstr).sum())
    assert np.all(t.locate_accesses() >= 0)
