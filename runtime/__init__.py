"""CPU/GPU graph kernels, load-balanced traversal and job scheduling (see docs/runtime.md).

The public names are those of their subpackages, imported on first use so that
``import runtime`` loads neither a subpackage nor numba (start-up).
"""

from vcut_base.lazy import lazy_names

__all__ = ["schedule", "multilevel_partition", "minimum_spanning_forest"]

#: Where each public name lives; a submodule is imported when one of its names
#: is first used.
_HOMES = {
    "scheduler": ("schedule",),
    "multilevel": ("multilevel_partition",),
    "mst": ("minimum_spanning_forest",),
}

__getattr__, __dir__ = lazy_names(globals(), _HOMES)
