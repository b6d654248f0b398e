"""The job kinds of `runtime.scheduler`, by name (`JOB_KINDS`), and `make_job`.

The runtime's kinds register themselves when their modules are imported here, in the
order messages list them; a kind of a package above registers from its own module
(`register_job`; vcut's partition-batch: `vcut.partition_batch`).
"""

from .base import Job
from .registry import JOB_KINDS, JobKind, make_job, register_job
from .string_search import StringSearch  # noqa: I001 (registration order: the kinds' order)
from .matmul import Matmul
from .bfs_batch import BfsBatch

__all__ = ["Job", "StringSearch", "Matmul", "BfsBatch", "JOB_KINDS", "JobKind", "register_job",
           "make_job"]
