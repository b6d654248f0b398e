"""vcut: weighted balanced vertex-cut partitioning of (IR) graphs.

The partitioner's public names are importable from here (``from vcut import
partition_graph``); the whole analysis as a library is `vcut.pipeline`, and the
``vcut`` command line is `vcut.cli`. A name's submodule is imported when the name
is first used, so that ``import vcut`` stays cheap for the command line's start-up.
"""

from vcut_base.lazy import lazy_names

__all__ = [
    "ALGORITHMS", "EdgePartition", "partition_graph", "partition_from_assignment",
    "PartitionMetrics", "partition_metrics",
]

#: Where each public name lives (see `vcut_base.lazy.lazy_names`).
_HOMES = {
    "partition": ("ALGORITHMS", "EdgePartition", "partition_graph", "partition_from_assignment"),
    "metrics": ("PartitionMetrics", "partition_metrics"),
}

__getattr__, __dir__ = lazy_names(globals(), _HOMES)
