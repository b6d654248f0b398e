"""Partitioning a graph larger than the machine is happy to hold: in memory and with --spill.

Generates a simple RMAT graph (Graph500 probabilities, vertex ids shuffled,
unit weights; ``--scale S`` gives 2^S vertices and about 16 * 2^S edges), writes
it as a vcut ``.npz`` and as a text edge list, and runs the whole
``vcut partition GRAPH -p P -o OUT`` process on each, once in memory and once
with ``--spill DIR``, in a fresh process each. Per run: wall seconds, edges/s,
the peak of the anonymous memory (what must stay resident) and of the whole
resident set (with mapped file pages, which the kernel reclaims), sampled
every 20 ms, and the anonymous peak per edge and per vertex.

Issue 13's claim: with ``--spill`` the streaming cuts' memory is
O(|V| * p / 8 + chunk), not O(|E|): the anonymous bytes per edge fall and the
bytes per vertex stay bounded.

Usage::

    python bench/bench_partition_scale.py [--scale 23] [-p 8] [--algo wb-libra]
                                          [--workdir DIR] [--formats npz,edgelist]
"""

import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.bench_scale import ChildFailed, _run_child  # noqa: E402


def make_graph(workdir, scale, fmt):
    """Path of the RMAT graph of ``scale`` in format ``fmt`` (made once per workdir)."""
    suffix = {"npz": ".npz", "edgelist": ".edgelist"}[fmt]
    path = os.path.join(workdir, f"rmat{scale}{suffix}")
    if not os.path.exists(path):
        from ir_graph import write_graph
        from runtime.generators import rmat

        write_graph(rmat(scale, 16, seed=0), path)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=23, help="log2 of the vertex count")
    ap.add_argument("-p", type=int, default=8, help="clusters")
    ap.add_argument("--algo", default="wb-libra", help="partitioner")
    ap.add_argument("--formats", default="npz,edgelist", help="graph formats to read")
    ap.add_argument("--workdir", help="where graphs, outputs and spill files go")
    args = ap.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="vcut-bench-partition-")
    spill = os.path.join(workdir, "spill")
    os.makedirs(spill, exist_ok=True)
    print("| graph | format | mode | edges | wall | edges/s | RF | peak anon | bytes/edge "
          "| bytes/vertex | peak RSS with mapped files |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for fmt in args.formats.split(","):
        path = make_graph(workdir, args.scale, fmt)
        for mode, extra in (("in memory", []), ("--spill", ["--spill", spill])):
            out = os.path.join(workdir, "out.part")
            cmd = [sys.executable, "-m", "vcut.cli", "partition", path, "-p", str(args.p),
                   "--algo", args.algo, "-o", out, "--json", "--progress", "none", *extra]
            peaks = {}
            try:
                text, wall, _ = _run_child(cmd, peaks)
            except ChildFailed as exc:
                print(f"| rmat{args.scale} | {fmt} | {mode} | failed: {exc} | | | | | | | |",
                      flush=True)
                continue
            doc = json.loads(text)
            with open(out) as fh:  # one line per input edge
                m = sum(chunk.count("\n") for chunk in iter(lambda: fh.read(1 << 24), ""))
            n = 1 << args.scale
            print(f"| rmat{args.scale} | {fmt} | {mode} | {m:,} | {wall:.1f} s | "
                  f"{m / wall / 1e6:.2f} M | {doc['replication_factor']:.4f} | "
                  f"{peaks['anon'] / 1e9:.2f} GB | {peaks['anon'] / m:.1f} | "
                  f"{peaks['anon'] / n:.0f} | {peaks['rss'] / 1e9:.2f} GB |", flush=True)
            for name in (out, out + ".replicas.npz"):
                if os.path.exists(name):
                    os.remove(name)
    if not args.workdir:
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
