#!/bin/bash
# One prepared run of the GPU checks on a lent device machine (the `device` tool), sized to
# finish in about 9 minutes of its 10-minute command limit: the GPU tests on the card, the
# Borůvka MST against scipy, the greedy family's GPU batches against the sequential stream
# (RMAT 21, ~16 M edges), and the traversal benchmark's GPU strategies (Δ-stepping included).
#
# Before the call, on this machine (both folders are git-ignored; name them in `carry`):
#   .whl/      a numpy 2.4 wheel for the device's Python (numba-cuda 0.30.4 fails with numpy 2.5),
#              and pymetis / kaminpar for bench_multilevel's references (the image has neither):
#              pip download --no-deps numpy==2.4.6 pymetis kaminpar --only-binary=:all: \
#                  --python-version 3.12 --platform manylinux_2_28_x86_64 \
#                  --platform manylinux2014_x86_64 -d .whl
#   .devdata/  the datasets the benchmarks read (../shared does not travel), e.g.
#              cp ../shared/datasets/{luxembourg_osm.mtx.gz,email-Enron.txt.gz,delaunay_n16.edges.gz,rgg_n_2_16_s0.mtx.gz,soc-Epinions1-lcc.txt.gz,cnr-2000.arcs.txt.gz} .devdata/
# Then: run(command="bash bench/gpu_session.sh", carry=[".whl", ".devdata"], timeout_s=600)
# Results come back under $OUT: env.txt (card, step times), tests.txt, mst.txt, batched.txt,
# traversal.txt.
# `bash bench/gpu_session.sh all` runs every GPU test file (8 processes) and one short benchmark
# per GPU issue: multilevel vs METIS on cnr-2000 / delaunay_n16 (+ rmat18, grid1024) with its
# profile, SPAC's multilevel backend on CPU and GPU, the greedy batches, the MST, grid / road
# traversals; sized from the H200 runs of 2026-12-04 (tests 94 s, multilevel 101 s, spac 50+
# s, batched 43 s, mst 21 s, traversal 50 s: about 6 minutes with the install), leaving room in
# a 15-minute device budget for a second call (`auto` next).
# `bash bench/gpu_session.sh rounds` runs the greedy family's GPU tests and its batches on
# RMAT 21 (16 M edges; both apply forms beside their CPU twins at B = 64 k) and RMAT 22.
# `bash bench/gpu_session.sh schedule` runs issue 17's: the scheduler tests on the card and
# bench_schedule.py --gpu --real-only at 4 and 16 rounds (string search 50 MB, matmul 6000²).
# `bash bench/gpu_session.sh traversal` runs issue 16's open case: the GPU tests, then BFS / SSSP
# on grid256, luxembourg_osm and email-Enron with the resident loop as before (the grid tier
# alone, 64 levels a launch, cap one node per warp), as now (the one-block tier first, 1024
# levels a launch, the grid's cap >= 65,536), the grid tier alone, and that on 32 blocks.
# `bash bench/gpu_session.sh auto` runs the traversal's GPU tests, then RMAT 22's BFS, the
# large case behind `auto`'s GPU rule for `do` (GPU_DO_MIN_EDGES), not yet run with the new loop.
# `bash bench/gpu_session.sh partition` runs issue 15's checks alone: the multilevel, Jet and
# greedy GPU tests, then bench_multilevel.py --gpu --profile with the cut counted by a thread
# a vertex and by a warp a vertex (--cut-width 1 / 32; where each cell's GPU seconds go).
cd "$(dirname "$0")/.." || exit 3
OUT=${OUT:-/tmp/gpu-session}
mkdir -p "$OUT"
if ls .whl/*.whl > /dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 3
fi
export PYTHONPATH=/tmp/site:$PWD VCUT_REAL_GPU=1 VCUT_DATASETS=$PWD/.devdata PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
nvidia-smi -L > "$OUT/env.txt" 2>&1
step() {  # step NAME SECONDS COMMAND...: run with a time limit, log its duration
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout "$limit" "$@" > "$OUT/$name.txt" 2>&1
    echo "$name: exit $?, $((SECONDS - t0)) s" >> "$OUT/env.txt"
}
if [ "$1" = partition ]; then  # issue 15's checks alone (~6.5 min)
    # the cut counted by a thread a vertex (the default) and by a warp a vertex (CUT_WIDTH =
    # 32): Jet counts it after every round, half its kernel time on the power-law graphs on
    # 2026-12-04; the profile lines give `cut`'s seconds in each
    step tests 80 python3 -m pytest -q -p no:cacheprovider -n 8 --timeout 70 --tb=short \
        tests/runtime/multilevel/test_multilevel_gpu.py tests/runtime/multilevel/test_jet.py tests/vcut/test_gpu_greedy.py
    step multilevel 150 python3 bench/bench_multilevel.py --gpu --profile --cut-width 1 \
        --datasets .devdata --graphs cnr-2000.arcs.txt.gz,delaunay_n16.edges.gz --ks 8,64 \
        --repeat 1 --csv "$OUT/multilevel.csv"
    step multilevel_w32 150 python3 bench/bench_multilevel.py --gpu --profile --cut-width 32 \
        --datasets .devdata --graphs cnr-2000.arcs.txt.gz,delaunay_n16.edges.gz --ks 8,64 \
        --repeat 1 --csv "$OUT/multilevel_w32.csv"
    tail -3 "$OUT/tests.txt"
    grep -h -E "profile|GPU cut count|GPU:" "$OUT/multilevel.txt" "$OUT/multilevel_w32.txt" \
        | cut -c1-220
    cat "$OUT/env.txt"
    exit 0
fi
if [ "$1" = schedule ]; then  # issue 17's card figures: HASS with its call-time models (~6 min)
    step tests 100 python3 -m pytest -q -p no:cacheprovider -n 4 --timeout 90 --tb=short \
        tests/runtime/scheduler/test_scheduler_jobs.py tests/runtime/scheduler/test_scheduler.py
    step schedule4 200 python3 bench/bench_schedule.py --gpu --real-only --rounds 4
    step schedule16 200 python3 bench/bench_schedule.py --gpu --real-only --rounds 16
    tail -3 "$OUT/tests.txt"
    cat "$OUT/schedule4.txt" "$OUT/schedule16.txt" "$OUT/env.txt"
    exit 0
fi
if [ "$1" = rounds ]; then  # the greedy batches applied in rounds on the device (~5 min)
    step tests 150 python3 -m pytest -q -p no:cacheprovider -n 4 --timeout 120 --tb=short \
        tests/vcut/test_gpu_greedy.py tests/vcut/test_rounds.py
    step batched 150 python3 bench/bench_batched.py --device gpu --rmat-only --scale 21 \
        --batches 65536
    step batched2 100 python3 bench/bench_batched.py --device gpu --rmat-only --scale 21 \
        --batches 8192,1048576 --no-cpu-batches
    step batched22 110 python3 bench/bench_batched.py --device gpu --rmat-only --scale 22 \
        --batches 65536 --no-cpu-batches
    tail -3 "$OUT/tests.txt"
    cat "$OUT/env.txt"
    exit 0
fi
if [ "$1" = traversal ]; then  # issue 16's open case: the GPU against the 16-thread CPU (~6 min)
    # the small high-diameter and e-mail graphs: the resident loop as it was (the grid tier
    # alone, 64 levels a launch, its cap one node per warp), as it is now (the one-block tier,
    # then the grid with a cap of >= 65,536 nodes, 1024 levels a launch), the grid tier alone
    # as now, and that on 32 blocks (a cheaper barrier); the CPU strategies once. Sized from
    # the H200 run of 2026-12-04 (tests 22 s, the configuration as it was 53 s; the other three
    # need > 60 s)
    step tests 100 python3 -m pytest -q -p no:cacheprovider -n 4 --timeout 90 --tb=short \
        tests/runtime/test_gpu.py tests/runtime/test_gpu_stack.py
    G=grid256,luxembourg_osm,email-Enron
    step trav_before 60 python3 bench/bench_traversal.py --device gpu --no-cpu --repeat 3 \
        --graphs $G --gpu-config LEVELS_PER_LAUNCH=64,BLOCK_FRONTIER=0,RESIDENT_FRONTIER=0
    step trav_now 90 python3 bench/bench_traversal.py --device gpu --repeat 3 --graphs $G
    step trav_grid 75 python3 bench/bench_traversal.py --device gpu --no-cpu --repeat 3 \
        --graphs $G --gpu-config BLOCK_FRONTIER=0
    step trav_grid32 75 python3 bench/bench_traversal.py --device gpu --no-cpu --repeat 3 \
        --graphs $G --gpu-config BLOCK_FRONTIER=0,RESIDENT_BLOCKS=32
    tail -3 "$OUT/tests.txt"
    for f in trav_before trav_now trav_grid trav_grid32; do
        echo "== $f"; grep -E "GPU tunables|@gpu|scipy|@cpu" "$OUT/$f.txt" | cut -c1-200
    done
    cat "$OUT/env.txt"
    exit 0
fi
if [ "$1" = auto ]; then  # what `auto` should choose on a card (~3.5 min): RMAT 22's BFS
    # (67 M edges, 128 M directed; bs, ep, ns, do), where `do` led bs 2 x with the loop of
    # 2026-11-26 and GPU_DO_MIN_EDGES sets do's threshold; the 2^20 graphs ran on 2026-12-04
    # (`--scale 20 --graphs rmat20,er20,grid1024`, 140 s). RMAT 22's generation, scipy and
    # the four strategies' compiles need more than 90 s
    step tests 100 python3 -m pytest -q -p no:cacheprovider -n 4 --timeout 90 --tb=short \
        tests/runtime/test_gpu.py
    step auto22 200 python3 bench/bench_traversal.py --device gpu --no-cpu --only-target
    tail -3 "$OUT/tests.txt"
    echo "== auto22"; grep -E "@gpu|scipy" "$OUT/auto22.txt" | cut -c1-160
    cat "$OUT/env.txt"
    exit 0
fi
if [ "$1" = all ]; then  # every GPU test file, then one short benchmark per issue (~8 min)
    python3 -m pip list 2> /dev/null | grep -i -E "^(numba|numba-cuda|numpy|llvmlite|scipy) " \
        >> "$OUT/env.txt"
    step tests 130 python3 -m pytest -q -p no:cacheprovider -n 8 --timeout 100 --tb=short \
        tests/runtime/test_gpu.py tests/runtime/test_gpu_stack.py tests/runtime/test_mst.py \
        tests/vcut/test_gpu_greedy.py tests/runtime/multilevel/test_multilevel_gpu.py \
        tests/runtime/multilevel/test_jet.py tests/runtime/scheduler/test_scheduler_jobs.py
    step multilevel 140 python3 bench/bench_multilevel.py --gpu --profile --datasets .devdata \
        --graphs cnr-2000.arcs.txt.gz,delaunay_n16.edges.gz --ks 8,64 --repeat 1 \
        --csv "$OUT/multilevel.csv"
    step spac 70 python3 bench/bench_spac.py --multilevel cpu,gpu --quick \
        --graphs soc-Epinions1-lcc.txt.gz,cnr-2000.arcs.txt.gz
    step batched 90 python3 bench/bench_batched.py --device gpu --rmat-only --scale 21 \
        --batches 65536
    step mst 25 python3 bench/bench_mst.py --device gpu --scale 20 --repeat 2
    step traversal 60 python3 bench/bench_traversal.py --device gpu --repeat 3 \
        --graphs grid256,luxembourg_osm
    tail -5 "$OUT/tests.txt"
    cat "$OUT/env.txt"
    exit 0
fi
step tests 150 python3 -m pytest -q -p no:cacheprovider -n 0 tests/runtime/test_gpu.py \
    tests/runtime/test_gpu_stack.py tests/runtime/test_mst.py tests/vcut/test_gpu_greedy.py
step mst 100 python3 bench/bench_mst.py --device gpu --scale 21 --repeat 2
step batched 110 python3 bench/bench_batched.py --device gpu --rmat-only --scale 21 \
    --batches 65536
step traversal 170 python3 bench/bench_traversal.py --device gpu --gpu-target --repeat 3
tail -3 "$OUT/tests.txt"
cat "$OUT/mst.txt" "$OUT/batched.txt" "$OUT/env.txt"
grep -i "delta\|rmat22\|error" "$OUT/traversal.txt" | head -40
