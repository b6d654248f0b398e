"""SPAC: split-and-connect, then a vertex partitioner (METIS, KaHIP or the runtime's
multilevel partitioner, on the CPU or the GPU) on the transformed graph
(`vcut.spac.spac_assign`)."""

from dataclasses import dataclass

from runtime.gpu import resolve_device
from runtime.vertex_partition import KAHIP_TARGETS
from vcut_base.errors import InputError

from ..spac import spac_assign
from .base import Assigned, RefinedOptions, new_assignment

__all__ = ["SpacOptions", "SPAC_VARIANTS", "device", "check", "run"]

SPAC_VARIANTS = ("contracted", "split")


@dataclass(frozen=True, eq=False)
class SpacOptions(RefinedOptions):
    """Options of SPAC.

    Attributes
    ----------
    backend : {"metis", "kahip", "multilevel"}
        The vertex partitioner of the transformed graph.
    variant : {"contracted", "split"}
        The split-and-connect form.
    refine, imbalance
        As `vcut.cuts.base.RefinedOptions`; ``imbalance`` is also the backend's
        balance tolerance.
    """

    backend: str = "metis"
    variant: str = "contracted"

    def __post_init__(self):
        if self.variant not in SPAC_VARIANTS:
            raise InputError(f"unknown SPAC variant {self.variant!r}; use contracted or split")
        super().__post_init__()


def device(options, p, device):
    """The multilevel backend's device (`runtime.gpu.resolve_device`) unless the CPU is
    asked; None (the CPU rule of every other cut) for the other backends."""
    if options.backend == "multilevel" and device != "cpu":
        return resolve_device(device)
    return None


def check(algo, options, graph, p, capacities, asked, device):
    """`InputError` for per-part capacities with KaHIP, before the transform."""
    if options.backend == "kahip" and capacities is not None:
        raise InputError(KAHIP_TARGETS)
    return options


def run(algo, options, cut):
    """SPAC of ``cut`` (a `vcut.cuts.base.CutInput`)."""
    out = new_assignment(cut.m)
    out[:], info = spac_assign(
        cut.src, cut.dst, cut.weight, cut.n, cut.p, backend=options.backend,
        contracted=options.variant == "contracted", imbalance=options.imbalance,
        targets=cut.targets, seed=cut.seed, device=cut.device,
    )
    return Assigned(out, info)
