"""Tunables of the GPU kernels, in one place (tests patch them to exercise
multi-block code paths on small inputs).

``THREADS_PER_BLOCK``, ``SCAN_BLOCK`` and ``RESIDENT_THREADS`` are launch
parameters and may be changed at run time. ``SHARED_PUSH`` and
``SCAN_SHARED`` size shared-memory arrays and are read when the kernels are
compiled.
"""

#: threads per block of every traversal kernel launch
THREADS_PER_BLOCK = 256
#: entries of the per-block shared buffer that aggregates worklist pushes
SHARED_PUSH = 1024
#: threads per block of the scan kernel (at most SCAN_SHARED)
SCAN_BLOCK = 256
#: size of the scan kernel's shared array: the largest SCAN_BLOCK
SCAN_SHARED = 1024
#: resident threads used by WD's edgesPerThread = ceil(T / threads) and EP's grid;
#: None = the device's multiprocessors x max threads per multiprocessor
RESIDENT_THREADS = None
#: device memory to plan with, in bytes; None = ask the device (free memory)
DEVICE_MEMORY = None
#: frontiers of at most this many nodes run device-resident: a cooperative grid iterates up
#: to LEVELS_PER_LAUNCH levels per launch with a grid barrier between levels, the host reads
#: the size once per launch (BS, WD, HP); None = one node per warp of that grid (the most
#: resident blocks x THREADS_PER_BLOCK / 32: 8,448 on an H100 / H200) or RESIDENT_FRONTIER,
#: whichever is larger
SMALL_FRONTIER = None
#: the least frontier the default cap keeps on the device: a level run from the host costs a
#: launch and a blocking read (0.3-0.4 ms on an H200), while the grid's warps take a frontier
#: of this size in 8 nodes each (microseconds), so graphs of 10^5-10^6 edges, whose frontiers
#: fit, run every level resident (email-Enron from its hub: 9 levels, frontiers up to
#: 19,662 nodes; with one node per warp as the cap, its largest three ran from the host:
#: docs/notes/gpu-h200.md)
RESIDENT_FRONTIER = 65536
#: threads of the one-block tier of the device-resident loop (`traversal_gpu.block_tier`): frontiers
#: of up to BLOCK_FRONTIER nodes run there with a block barrier between levels, cheaper
#: than the grid's (estimates from the H200 runs of docs/notes/gpu-h200.md with their host
#: reads taken out: a one-block loop 0.5-2 us a level, the cooperative grid 3-4.5 us)
BLOCK_THREADS = 1024
#: None = 4 nodes per group of lanes (4,096 / the group width); 0 = no one-block tier
BLOCK_FRONTIER = None
#: levels one device-resident launch may run before the host looks again (at 64, a grid of
#: 765 levels took 12 launches and host reads, ~4 ms of its 7.0 ms on an H200:
#: docs/notes/gpu-h200.md)
LEVELS_PER_LAUNCH = 1024
#: blocks of the device-resident loop's cooperative grid; None = as many as can be resident
#: at once (a smaller grid synchronises faster, and takes fewer frontier nodes at a time)
RESIDENT_BLOCKS = None
