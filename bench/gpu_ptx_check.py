"""Compile every GPU kernel to PTX, with or without a GPU (a check, not a timing).

The test suite runs the kernels under numba's CUDA simulator, which executes
Python and so cannot catch what only the CUDA compiler sees (types of atomics,
shared arrays, device-function calls). This script compiles each kernel of
`runtime`'s GPU kernel modules (`traversal_kernels_gpu`, `primitives_gpu`,
`mst_kernels_gpu`), the multilevel partitioner's (`runtime.multilevel.*_kernels_gpu`) and
`vcut.gpu_greedy` for a compute capability (default 9.0, H100/H200) with
NVVM and prints its PTX size and whether it uses atomics. It needs the
maintained CUDA target (``pip install -e '.[gpu]'``); without a driver the
current device's compute capability is replaced by ``--cc``.

Usage: python bench/gpu_ptx_check.py [--cc 9.0]
"""

import argparse
import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cc", default="9.0")
    args = ap.parse_args()
    cc = tuple(int(x) for x in args.cc.split("."))
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        sys.exit("unset NUMBA_ENABLE_CUDASIM: the simulator compiles nothing")
    from numba import cuda
    from numba import types as T

    try:
        import numba.cuda.dispatcher as dispatcher
    except ImportError:
        dispatcher = None
    if dispatcher is not None and not cuda.is_available():  # no driver: compile for --cc
        fake = types.SimpleNamespace(compute_capability=cc)
        dispatcher.get_current_device = lambda: fake
    from runtime import mst_kernels_gpu, primitives_gpu, traversal_kernels_gpu

    G = types.SimpleNamespace(**{**vars(primitives_gpu), **vars(traversal_kernels_gpu),
                                 **vars(mst_kernels_gpu)})

    i8a, f8a = T.Array(T.int64, 1, "C"), T.Array(T.float64, 1, "C")
    i8, b1, f8 = T.int64, T.boolean, T.float64
    i4a, u1a = T.Array(T.int32, 1, "C"), T.Array(T.uint8, 1, "C")  # Borůvka: 4-byte indices
    sigs = {
        "bs_kernel": (i8a, i8a, f8a, f8a, i8a, i8, i8, i8a, i8a, i8a, i8a),
        "resident_levels_kernel": (i8a, i8a, f8a, f8a, i8a, i8a, i8, i8, i8, i8, i8a, i8a, i8a, i8a),
        "block_levels_kernel": (i8a, i8a, f8a, f8a, i8a, i8a, i8, i8, i8, i8, i8, i8a, i8a, i8a),
        "ns_kernel": (i8a, i8a, f8a, i8a, i8a, i8, f8a, i8a, i8, i8, i8a, i8a, i8a, i8a),
        "hp_kernel": (i8a, i8a, f8a, f8a, i8a, i8, i8a, i8, i8, i8a, i8a, i8a, i8a, i8a, i8a),
        "reset_done_kernel": (i8a, i8, i8a),
        "delta_kernel": (i8a, i8a, f8a, f8a, f8a, i8a, i8a, i8a, i8a, i8a, i8a, i8a, i8a, f8a,
                         i8a, f8a, f8, i8, i8a),
        "do_top_down_kernel": (i8a, i8a, i8a, i8a, i8a, i8, i8, i8a, i8a),
        "do_bottom_up_kernel": (i8a, i8a, i8a, i8a, i8, i8, i8a, i8a),
        "ep_kernel": (i8a, i8a, f8a, i8a, f8a, i8a, i8, i8, i8a, i8a, i8a, b1, i8a),
        "src_of_kernel": (i8a, i8a, i8),
        "worklist_degrees_kernel": (i8a, i8a, i8, i8a, i8a),
        "wd_offsets_kernel": (i8a, i8, i8, i8, i8a, i8a),
        "wd_kernel": (i8a, i8a, f8a, f8a, i8a, i8, i8a, i8a, i8, i8, i8, i8a, i8a, i8a, i8a),
        "block_scan_kernel": (i8a, i8a, i8a, i8),
        "add_offsets_kernel": (i8a, i8a, i8),
        "histogram_kernel": (i8a, i8, i8, i8a),
        "segmented_min_kernel": (f8a, i8a, f8a),
        "segmented_sum_kernel": (f8a, i8a, f8a),
        "mst_reset_kernel": (i8a,),
        "mst_discover_kernel": (i8a, i4a, i4a, i4a, i8a, i8a, i8, i8a, i8a, i8a),
        "mst_target_kernel": (i8a, i8, i8a, i4a, i4a, i4a, i8a, i8),
        "mst_hook_kernel": (i8a, i8, i8a, i8a, i4a, u1a),
        "mst_jump_kernel": (i8a, i8, i8a, i4a, i8a, i8, i8a, i8a),
        "mst_labels_kernel": (i4a, i8a),
    }
    # DeviceCSR holds 4-byte neighbour ids while they fit: the CSR kernels, with those too
    for name in ("bs_kernel", "resident_levels_kernel", "block_levels_kernel", "ns_kernel",
                 "hp_kernel", "delta_kernel", "do_top_down_kernel", "do_bottom_up_kernel",
                 "ep_kernel", "wd_kernel"):
        sig = list(sigs[name])
        sig[1] = i4a  # the second argument is the neighbour ids in each of them
        sigs[name + " (4-byte ids)"] = tuple(sig)
    # the greedy family's batched stream (vcut.gpu_greedy): dense replica rows, 2-D uint64
    from vcut import gpu_greedy as GG

    u8m = T.Array(T.uint64, 2, "C")
    greedy = {"greedy_decide_kernel": (i8a, i8a, i8a, i8, i8, u8m, f8a, f8a, f8a, i8, i8a, i8a,
                                       i8a),
              "greedy_scatter_kernel": (i8a, u8m, i8a, i8, u8m, i8a),
              "greedy_rounds_kernel": (i8a, i8a, i8a, i8a, i8a, f8a, f8a, i8, i4a, u8m, i8a, i8a,
                                       i8a, i8a, i8a, i4a, i8a, i8a, i8a, i8a, i8a, i8, i8, i8,
                                       i8)}
    sig = list(greedy["greedy_rounds_kernel"])
    sig[0] = sig[1] = sig[3] = i4a  # ends and stream order in 4 bytes while they fit
    greedy["greedy_rounds_kernel (4-byte ids)"] = tuple(sig)
    sigs.update(greedy)
    # the multilevel partitioner's GPU phases (runtime.multilevel.*_kernels_gpu): int64 arrays
    from runtime.multilevel import (coarsening_kernels_gpu, jet_kernels_gpu,
                                    refinement_kernels_gpu, split_graph_kernels_gpu)

    ML = types.SimpleNamespace(**{**vars(primitives_gpu), **vars(coarsening_kernels_gpu),
                                  **vars(refinement_kernels_gpu), **vars(jet_kernels_gpu),
                                  **vars(split_graph_kernels_gpu)})

    multilevel = {
        "fill_kernel": (i8a, i8, i8),
        "propose_kernel": (i8a, i8a, i8a, i8a, i8a, i8a, i8, i8a, i8a, i8, i8, i8, i8a),
        "propose_heavy_kernel": (i8a, i8a, i8a, i8a, i8a, i8a, i8, i8a, i8a, i8a, i8, i8),
        "handshake_kernel": (i8a, i8a, i8, i8a, i8a, i8a), "received_kernel": (i8a, i8a, i8, i8a),
        "offer_kernel": (i8a, i8a, i8a, i8a, i8, i8a), "accept_kernel": (i8a, i8a, i8, i8a),
        "heavy_kernel": (i8a, i8a, i8a, i8a, i8, i8a, i8a, i8a),
        "two_hop_kernel": (i8a, i8a, i8a, i8a, i8a, i8a, i8, i8),
        "island_flags_kernel": (i8a, i8a, i8, i8a), "island_scatter_kernel": (i8a, i8a, i8, i8a),
        "island_pair_kernel": (i8a, i8, i8a, i8, i8a), "finish_match_kernel": (i8a, i8),
        "leader_flags_kernel": (i8a, i8, i8a), "cmap_kernel": (i8a, i8a, i8, i8a, i8a),
        "coarse_bounds_kernel": (i8a, i8a, i8a, i8a, i8, i8a, i8a),
        "contract_rows_kernel": (i8a, i8a, i8a, i8a, i8a, i8a, i8a, i8a, i8, i8, i8a, i8a, i8a),
        "count_flags_kernel": (i8a, i8, i8, i8a),
        "contract_rows_heavy_kernel": (i8a, i8a, i8a, i8a, i8a, i8a, i8a, i8a, i8a, i8, i8a, i8a,
                                       i8a),
        "contract_compact_kernel": (i8a, i8a, i8a, i8a, i8a, i8a, i8, i8a, i8a, i8a),
        "project_kernel": (i8a, i8a, i8, i8a), "loads_kernel": (i8a, i8a, i8, i8a),
        "cut_kernel": (i8a, i8a, i8a, i8a, i8, i8, i8a),
        "best_move_kernel": (i8a, i8a, i8a, i8a, i8a, i8a, i8a, i8, i8, i8, i8a, i8a, i8, i8a,
                             i8a),
        "best_move_heavy_kernel": (i8a, i8a, i8a, i8a, i8a, i8a, i8a, i8, i8, i8a, i8, i8a, i8a),
        "heavy_flags_kernel": (i8a, i8, i8, i8a),
        "select_kernel": (i8a, i8a, i8a, i8a, i8a, i8, i8, i8a),
        "select_heavy_kernel": (i8a, i8a, i8a, i8a, i8a, i8a, i8, i8a),
        "request_kernel": (i8a, i8a, i8a, i8, i8a),
        "commit_kernel": (i8a, i8a, i8a, i8a, i8a, i8a, i8, i8a, i8a, i8a),
        "apply_kernel": (i8a, i8a, i8a, i8a, i8a, i8),
        "gather_kernel": (i8a, i8, i8a, i8a, i8a, i8a, i8a, i8a),
        "set_parts_kernel": (i8a, i8a, i8, i8a, i8a, i8a),
        "keys_kernel": (i8, i8, i8a),
        "incidence_count_kernel": (i8a, i8a, i8, i8a),
        "incidence_scatter_kernel": (i8a, i8a, i8, i8a, i8a, i8a, i8a),
        "incidence_sort_kernel": (i8a, i8a, i8, i8a, i8a),
        "split_counts_kernel": (i8a, i8a, i8a, i8, i8a, i8, i8, i8a, i8a),
        "split_rows_kernel": (i8a, i8a, i8a, i8, i8a, i8, i8, i8a, i8a, i8a, i8a, i8a),
        "sort_rows_kernel": (i8a, i8a, i8a, i8, i8a), "sum_kernel": (i8a, i8a, i8, i8a),
        "jet_candidates_kernel": (i8a,) * 8 + (i8, i8, i8, i8a, i8a, i8a, i8),
        "jet_after_kernel": (i8a,) * 7 + (i8, i8a),
        "jet_apply_kernel": (i8a,) * 5 + (i8, i8a),
        "jet_evict_kernel": (i8a,) * 8 + (i8, i8a, i8a, i8, i8a, i8a, i8a, i8a, i8),
        "jet_sub_kernel": (i8a,) * 6 + (i8, i8a),
        "jet_shed_kernel": (i8a,) * 8 + (i8, i8a),
        "copy_kernel": (i8a, i8, i8a),
    }
    sigs.update({f"multilevel {k}": v for k, v in multilevel.items()})
    print(f"| kernel | PTX bytes (sm_{cc[0]}{cc[1]}) | atomics |\n|---|---:|---|")
    failed = 0
    for name, sig in sigs.items():
        try:
            mod = GG if name in greedy else ML if name.startswith("multilevel ") else G
            ptx, _ = cuda.compile_ptx(getattr(mod, name.split()[-1] if mod is ML
                                              else name.split()[0]).py_func, sig, cc=cc)
            print(f"| {name} | {len(ptx):,} | {'yes' if 'atom.' in ptx else 'no'} |")
        except Exception as exc:  # report every kernel, then fail
            failed += 1
            print(f"| {name} | FAILED: {type(exc).__name__}: {str(exc).splitlines()[0][:120]} | |")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
