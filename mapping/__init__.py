"""mapping: memory-centric placement of clusters onto NUMA / mesh machines, and its cost.

::

    from mapping import analyze_graph, load_machine
    a = analyze_graph(graph, 8, "wb-libra", load_machine("mesh:4x4"))
    a.placement.core, a.result.makespan, a.result.hop_bytes
"""

from .analyze import METHODS, Analysis, analyze_graph, cluster_graph, compare_methods
from .interactions import (Clustering, ClusterInteractions, from_edge_partition,
                           from_vertex_partition, interactions)
from .machine import Machine, host, load_machine, machine_from_dict, table2
from .placement import MAPPERS, Placement, place
from .sampling import WindowSample, analyze_windows
from .simulate import SimResult, simulate

__all__ = [
    "analyze_graph", "compare_methods", "cluster_graph", "Analysis", "METHODS",
    "Clustering", "ClusterInteractions", "from_edge_partition", "from_vertex_partition",
    "interactions", "Machine", "table2", "host", "load_machine", "machine_from_dict",
    "MAPPERS", "Placement", "place", "SimResult", "simulate", "analyze_windows", "WindowSample",
]
