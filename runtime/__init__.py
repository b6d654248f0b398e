"""runtime: CPU/GPU job scheduling and shared load-balanced graph kernels."""
