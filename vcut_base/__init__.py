"""vcut_base: the vocabulary every vcut package stands on.

The lowest layer, imported by frontend, ir_graph, runtime, mapping and vcut and
importing none of them:

- `errors`: the exception classes, one per exit status, and message excerpts;
- `inputs`: untrusted input files (size limits, gzip, regular files only);
- `memory`: the memory budget (`check_memory`, `available_bytes`);
- `atomic`: outputs written to a temporary file and renamed into place;
- `arrays`: large arrays spilled to memory-mapped files (``--spill``);
- `npzfile`: versioned ``.npz`` reading with size checks;
- `progress`: compiled kernels run in a worker thread that reports progress;
- `jitcache`: numba's ``njit`` with a cache lock shared by processes;
- `scratch`: private scratch directories and their removal without following links;
- `lazy`: package names imported from their submodule on first use (PEP 562).
"""
