"""ir_graph: weighted dynamic dependency graphs built from frontend traces.

::

    from frontend import trace_program
    from ir_graph import build_graph, graph_stats, read_graph, write_graph
    g = build_graph(trace_program("samples/fft.c"), weights="model")
    write_graph(g, "fft.graph")
    graph_stats(g).alpha
"""

from .build import EXCLUDED_INTRINSICS, WEIGHT_MODELS, CacheModel, build_graph
from .formats import FORMATS, read_graph, write_graph
from .graph import OPCLASSES, Graph
from .stats import GraphStats, PowerLawFit, degree_plot, fit_power_law, graph_stats

__all__ = [
    "build_graph",
    "CacheModel",
    "WEIGHT_MODELS",
    "EXCLUDED_INTRINSICS",
    "Graph",
    "OPCLASSES",
    "read_graph",
    "write_graph",
    "FORMATS",
    "graph_stats",
    "GraphStats",
    "fit_power_law",
    "PowerLawFit",
    "degree_plot",
]
