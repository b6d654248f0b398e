"""ir_graph: weighted dynamic dependency graphs built from frontend traces.

::

    from frontend import trace_program
    from ir_graph import build_graph, graph_stats, read_graph, write_graph
    g = build_graph(trace_program("samples/fft.c"), weights="model")
    write_graph(g, "fft.graph")
    graph_stats(g).alpha
"""

from vcut_base.lazy import lazy_names

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
    "NodeWindow",
    "RoiWindow",
    "spaced_windows",
    "CONTROL_MODELS",
    "BRANCH_CYCLES",
    "ControlFlow",
    "control_flow",
    "static_control",
    "with_control",
    "model_table",
]

#: Where each public name lives; a submodule is imported when one of its names
#: is first used, so that reading a graph file does not import scipy (stats)
#: or the graph builder's kernels.
_HOMES = {
    "build": ("build_graph", "CacheModel", "WEIGHT_MODELS", "EXCLUDED_INTRINSICS"),
    "graph": ("Graph", "OPCLASSES"),
    "formats": ("read_graph", "write_graph", "FORMATS"),
    "stats": ("graph_stats", "GraphStats", "fit_power_law", "PowerLawFit", "degree_plot"),
    "windows": ("NodeWindow", "RoiWindow", "spaced_windows"),
    "control": ("CONTROL_MODELS", "BRANCH_CYCLES", "ControlFlow", "control_flow",
                "static_control", "with_control", "model_table"),
}

__getattr__, __dir__ = lazy_names(globals(), _HOMES)
