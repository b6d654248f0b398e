"""CPU/GPU graph kernels, load-balanced traversal and job scheduling (see docs/runtime.md)."""

__all__ = ["schedule", "multilevel_partition", "minimum_spanning_forest"]


def schedule(job, devices="auto", policy="hass", seed=0, **options):
    """Run a divisible job over the CPU and GPUs: `runtime.scheduler.schedule`."""
    from .scheduler import schedule as run  # lazy: `import runtime` loads no subpackage (start-up)

    return run(job, devices, policy, seed, **options)


def multilevel_partition(graph, k, device="cpu", imbalance=0.03, seed=0, targets=None):
    """Multilevel edge-cut partitioning on the CPU or the GPU:
    `runtime.multilevel.multilevel_partition`."""
    from .multilevel import multilevel_partition as run  # lazy: as above

    return run(graph, k, device=device, imbalance=imbalance, seed=seed, targets=targets)


def minimum_spanning_forest(graph, device="cpu"):
    """Borůvka's minimum spanning forest: `runtime.mst.minimum_spanning_forest`."""
    from .mst import minimum_spanning_forest as run  # lazy: as above

    return run(graph, device)
