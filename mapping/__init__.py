"""mapping: memory-centric placement of clusters onto NUMA / mesh machines, and its cost.

::

    from mapping import load_machine, interactions, place, simulate
    m = load_machine("mesh:4x4")
    inter = interactions(clustering, object_bytes)
    pl = place(inter, m, "memory-centric", clustering=clustering)
    simulate(clustering, pl.core, m).makespan

The whole analysis (partition, map, simulate, report) is `vcut.pipeline`.
"""

from .interactions import (Clustering, ClusterInteractions, from_edge_partition,
                           from_vertex_partition, interactions)
from .machine import Machine, host, load_machine, machine_from_dict, table2
from .placement import MAPPERS, Placement, place
from .simulate import SimResult, simulate

__all__ = [
    "Clustering", "ClusterInteractions", "from_edge_partition", "from_vertex_partition",
    "interactions", "Machine", "table2", "host", "load_machine", "machine_from_dict",
    "MAPPERS", "Placement", "place", "SimResult", "simulate",
]
