"""The work pool: a job's sub-loads, handed out one round's load at a time.

The job is the partitioner plug-in of the source (it fixes the split into
equal independent sub-loads); the pool deals them into ``rounds`` loads of
(near) equal size, in sub-load order, as the source's task generator deposits
one load per round.
"""

import numpy as np

from vcut_base.errors import InputError

__all__ = ["WorkPool"]


class WorkPool:
    def __init__(self, job, rounds):
        rounds = int(rounds)
        if rounds < 1:
            raise InputError(f"--rounds {rounds}: use at least 1 round")
        if job.n_units < rounds:
            raise InputError(f"--rounds {rounds}: the job has only {job.n_units} sub-loads; "
                             f"use at most {job.n_units} rounds or more --units")
        self.job = job
        self.loads = np.array_split(np.arange(job.n_units, dtype=np.int64), rounds)

    def __len__(self):
        return len(self.loads)

    def __iter__(self):
        return iter(enumerate(self.loads))
