"""The load bundler: every sub-load bound for one GPU in a round becomes one call.

A GPU call pays a message start-up and a kernel start-up whatever its size, and
a small call leaves most of the GPU's cores idle; one bundle per GPU per round
pays them once (Chapter 3.2.2). The bundler joins the sub-loads and counts the
bundles it issues per round and device, so that tests can check that a GPU gets
one transfer and one launch per round (sub-loads it steals later are single
calls of their own, counted as steals).
"""

from collections import Counter

import numpy as np

__all__ = ["Bundler"]


class Bundler:
    def __init__(self):
        self.count = Counter()   # (round, device name) -> bundles issued

    def bundle(self, rnd, device, parts):
        """One call of every sub-load in ``parts`` (arrays of ids) for ``device``."""
        units = np.concatenate([np.asarray(p, dtype=np.int64) for p in parts]) if parts \
            else np.zeros(0, np.int64)
        if len(units):
            self.count[(rnd, device.name)] += 1
        return units
