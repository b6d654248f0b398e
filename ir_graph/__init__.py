"""ir_graph: weighted dynamic dependency graphs built from frontend traces."""
