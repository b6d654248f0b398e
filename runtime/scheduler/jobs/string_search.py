"""String search: every occurrence of a pattern in a large text (the source's first workload).

Sub-load u is the u-th chunk of ceil(len / n_units) bytes of the text (the last
may be shorter; ``n_units`` is lowered when the last chunks would be empty, e.g.
10 bytes in 6 units are 5 chunks of 2) and finds the matches that *start* in its
chunk (it reads len(pattern) - 1 bytes past the chunk's end). A GPU call ships
its chunks (with their overlaps) in one array, runs one thread per position in
one launch and copies one flag per position back.
"""

import numpy as np

from vcut_base.jitcache import njit
from runtime import config

from .base import Job
from .registry import register_job

__all__ = ["StringSearch"]

ALPHABET = b"acgtuv"


@njit(cache=True, nogil=True)
def _search(text, pattern, lo, hi):
    m = len(pattern)
    out = np.empty(max(hi - lo, 0), np.int64)
    k = 0
    for i in range(lo, min(hi, len(text) - m + 1)):
        j = 0
        while j < m and text[i + j] == pattern[j]:
            j += 1
        if j == m:
            out[k] = i
            k += 1
    return out[:k]


class StringSearch(Job):
    kind = "string-search"
    #: bytes a second alone, on the H200 host (docs/notes/gpu-h200.md: 50 MB in 500 sub-loads took
    #: 0.221 s on the CPU, 0.156 s on the H200, whose path is bound by the host's packing of
    #: the chunks and reading of the flags, not by the kernel)
    sim_rates = {"cpu": 2.3e8, "gpu": 3.2e8}

    def __init__(self, text, pattern, n_units):
        text = np.frombuffer(bytes(text), np.uint8) if not isinstance(text, np.ndarray) \
            else np.ascontiguousarray(text, np.uint8)
        pattern = np.frombuffer(bytes(pattern), np.uint8).copy()
        if len(pattern) == 0:
            raise ValueError("string search: the pattern is empty")
        if len(pattern) > len(text):
            raise ValueError(f"string search: the pattern ({len(pattern)} bytes) is longer "
                             f"than the text ({len(text)} bytes)")
        n_units = int(n_units)
        if not 1 <= n_units <= len(text):
            raise ValueError(f"string search: {n_units} sub-loads for {len(text)} bytes; use "
                             f"1 .. {len(text)}")
        self.text, self.pattern = text, pattern
        self.chunk = -(-len(text) // n_units)
        self.n_units = -(-len(text) // self.chunk)   # no empty chunks: may be < n_units

    @classmethod
    def generate(cls, size_bytes, pattern=b"vcut", n_units=256, seed=0):
        """A seeded random text over a six-letter alphabet with the pattern planted
        about once every 4 KB (and wherever chance puts it)."""
        size = int(size_bytes)
        rng = np.random.default_rng(seed)
        text = np.frombuffer(ALPHABET, np.uint8)[rng.integers(0, len(ALPHABET), size)]
        p = np.frombuffer(pattern, np.uint8)
        if size >= len(p):
            at = rng.integers(0, size - len(p) + 1, max(1, size // 4096))
            for a in at.tolist():
                text[a:a + len(p)] = p
        return cls(text, pattern, n_units)

    def _range(self, u):
        lo = u * self.chunk
        return lo, min(lo + self.chunk, len(self.text))

    def unit_work(self):
        return float(self.chunk)

    def unit_threads(self):
        return self.chunk  # a thread per position

    def unit_bytes(self):
        return self.chunk + len(self.pattern) - 1

    def setup_bytes(self):
        return len(self.pattern)

    def run_cpu(self, units):
        return [_search(self.text, self.pattern, *self._range(u)) for u in units.tolist()]

    def run_gpu(self, units, gpu):
        cuda = gpu.cuda
        m = len(self.pattern)
        pieces, offsets, own = [], [0], []
        for u in units.tolist():
            lo, hi = self._range(u)
            piece = self.text[lo:min(hi + m - 1, len(self.text))]
            pieces.append(piece)
            own.append(hi - lo)
            offsets.append(offsets[-1] + len(piece))
        buf = np.concatenate(pieces) if pieces else np.zeros(0, np.uint8)
        k = _kernels()
        d_pat = k.on_device(gpu, self, "pattern",
                            lambda: cuda.to_device(self.pattern, stream=gpu.stream))
        d_buf = cuda.to_device(buf, stream=gpu.stream)           # the bundle: one transfer
        d_flags = cuda.device_array(len(buf), np.uint8, stream=gpu.stream)
        tpb = config.THREADS_PER_BLOCK
        if len(buf):
            k.search[(len(buf) + tpb - 1) // tpb, tpb, gpu.stream](
                d_buf, d_pat, d_flags)                            # one launch
        flags = d_flags.copy_to_host(stream=gpu.stream)
        gpu.stream.synchronize()
        out = []
        for u, start, n in zip(units.tolist(), offsets, own):
            hit = np.flatnonzero(flags[start:start + n]).astype(np.int64)
            # a match must lie inside this chunk's piece (not run into the next piece)
            hit = hit[start + hit + m <= offsets[len(out) + 1]]
            out.append(hit + self._range(u)[0])
        return out

    def combine(self, results):
        return np.concatenate([results[u] for u in range(self.n_units)]) if self.n_units \
            else np.zeros(0, np.int64)

    def reference(self):
        text, pat, out, i = self.text.tobytes(), self.pattern.tobytes(), [], -1
        while True:
            i = text.find(pat, i + 1)
            if i < 0:
                return np.array(out, np.int64)
            out.append(i)

    def describe(self):
        return {"kind": self.kind, "units": self.n_units, "bytes": int(len(self.text)),
                "pattern": self.pattern.tobytes().decode("latin-1")}


def _kernels():
    from . import job_kernels_gpu  # lazy: numba.cuda is optional

    return job_kernels_gpu


def _build(size, units, given, seed, **kw):
    return StringSearch.generate(size, n_units=units, seed=seed, **kw)


#: size: text bytes (the draws, int64, and the text: 10 bytes each)
register_job("string-search", StringSearch, size=8e6, units=256, limits=(1, 2**34),
             peak_bytes=lambda size, units: 10 * size, build=_build, units_of="bytes")
