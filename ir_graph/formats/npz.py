"""vcut's own graph format: every array and attribute of a `Graph` in a versioned ``.npz``."""

import json

import numpy as np

from vcut_base.arrays import spill, spill_directory
from vcut_base.errors import GraphFormatError
from vcut_base.inputs import check_input_file
from vcut_base.npzfile import read_versioned_npz, save_npz

from ..graph import Graph, check_node_count, index_dtype

__all__ = ["read_npz", "write_npz", "GRAPH_FORMAT_VERSION"]

GRAPH_FORMAT_VERSION = 1
_OPTIONAL = ("node_sid", "node_opclass", "node_object", "node_depth", "node_weight", "edge_kind",
             "labels", "roi_starts")
#: dtype the arrays of a graph ``.npz`` that kernels read are given (after their
#: kind and values are checked); the other node attributes keep theirs.
_NPZ_DTYPES = {"weight": np.float64, "node_weight": np.float64, "node_object": np.int64,
               "roi_starts": np.int64}


def read_npz(path):
    check_input_file(path, "graph file", GraphFormatError)
    meta, arrays = read_versioned_npz(
        path, kind="graph", version=GRAPH_FORMAT_VERSION, error=GraphFormatError,
        remake="rebuild it with 'vcut graph'", required=("src", "dst", "weight"),
        optional=_OPTIONAL, mmap=spill_directory() is not None,  # --spill: mapped
    )
    info = meta.pop("graph", None)
    if not isinstance(info, dict) or not isinstance(info.get("n"), int) or \
            isinstance(info.get("n"), bool) or not isinstance(info.get("directed"), bool):
        raise GraphFormatError(
            f"{path}: meta 'graph' must be {{\"n\": node count, \"directed\": true|false}}, "
            f"got {info!r:.80}; rebuild the file with 'vcut graph'")
    meta.pop("format", None)
    meta.pop("format_version", None)
    n = info["n"]
    check_node_count(n, path)
    g = Graph(n=n, directed=info["directed"], meta=meta, **arrays).validate(path)
    # the kinds are checked: normalise the dtypes the kernels are compiled for
    idt = index_dtype(max(n, g.m))
    conv = {"src": idt, "dst": idt, **_NPZ_DTYPES}
    return Graph(n=n, directed=info["directed"], meta=meta,
                 **{k: spill(np.ascontiguousarray(a, dtype=conv.get(k, a.dtype)))
                    for k, a in arrays.items()})


def write_npz(g, fh):
    arrays = {"src": g.src, "dst": g.dst, "weight": g.weight}
    for k in _OPTIONAL:
        if getattr(g, k) is not None:
            arrays[k] = getattr(g, k)
    meta = dict(g.meta, format="vcut-graph", format_version=GRAPH_FORMAT_VERSION,
                graph={"n": int(g.n), "directed": bool(g.directed)})
    arrays["meta"] = np.array(json.dumps(meta))
    save_npz(fh, arrays)
    return {}
