"""mapping: memory-centric placement of clusters onto NUMA / mesh machines."""
