"""CPU/GPU graph kernels, load-balanced traversal and job scheduling (see docs/runtime.md)."""

__all__ = ["schedule"]


def schedule(job, devices="auto", policy="hass", seed=0, **options):
    """Run a divisible job over the CPU and GPUs: `runtime.scheduler.schedule`."""
    from .scheduler import schedule as run

    return run(job, devices, policy, seed, **options)
