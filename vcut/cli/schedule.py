"""``vcut schedule``: run a divisible job over the CPU and GPUs under HASS or a baseline."""

import contextlib
import sys

from vcut_base.errors import InputError

from ._cluster import add_cluster_options, client_for
from ._common import add_common, help_groups, print_json, print_rows
from ._outputs import check_command_outputs, check_suffix

__all__ = ["register", "run"]

JOBS = ("string-search", "matmul", "bfs-batch", "partition-batch")


def register(sub):
    """Add the subcommand's parser to ``sub``."""
    p = sub.add_parser(
        "schedule",
        help="run a divisible job over the CPU and GPUs with HASS, min-min, greedy or Qilin",
        description="Split a job into equal independent sub-loads, deal them in rounds, and "
        "schedule each round over the devices: HASS (profiling, one bundled call per GPU, "
        "stealing from the CPU buffer, adaptation; seed 004 Chapter 3) or a baseline. "
        "Devices: cpu, gpu:N (CUDA), sim:cpu / sim:gpu with :key=value model parameters "
        "(speed, overhead, latency, bandwidth, launch, saturation, threads, memory, fail; "
        "unset, they model the H200 host: docs/runtime.md), auto, or "
        "dask: the CPU and GPUs (the GPU resource) of every worker of a Dask cluster.",
    )
    job, policy, devices, outputs = help_groups(
        p, ("job", "the work and how it is split and dealt"),
        ("scheduling", "the policy and its knobs"),
        ("devices", "where the sub-loads run"), "outputs")
    job.add_argument("--job", required=True, choices=JOBS, help="the job kind")
    job.add_argument("--size", type=float,
                     help="job size: text bytes (string-search), matrix order (matmul), RMAT "
                     "scale (bfs-batch), number of graphs (partition-batch); default per kind")
    job.add_argument("--units", type=int,
                     help="sub-loads the job is split into (default per kind)")
    job.add_argument("--rounds", type=int, default=10,
                     help="rounds the load is dealt in (default 10)")
    job.add_argument("--seed", type=int, default=0, help="seed of the generated job (default 0)")
    job.add_argument("--check", action="store_true",
                     help="also compute the job's plain CPU reference and compare")
    policy.add_argument("--policy", default="hass",
                        choices=["hass", "min-min", "greedy", "qilin", "all"],
                        help="scheduling policy, or all to compare them (default hass)")
    policy.add_argument("--profile-units", type=int,
                        help="HASS's profiling sample, in sub-loads: each GPU's first call, while "
                        "the CPU runs round 0's others one a call (default: what fills the GPU "
                        "or a tenth of a round's even share, at most an even share)")
    policy.add_argument("--training", type=float, default=0.3,
                        help="Qilin's training fraction of the input (default 0.3)")
    devices.add_argument("--devices", default="auto",
                         help="comma-separated devices, e.g. cpu,gpu:0 or cpu,sim:gpu:speed=4,"
                         "sim:gpu:speed=2 or dask (default auto: the CPU and every CUDA GPU; "
                         "dask with --workers/--scheduler)")
    add_cluster_options(devices, "with --devices dask (the default then): a local Dask cluster "
                        "of N worker processes (default: the CPUs here)")
    outputs.add_argument("--report", metavar="PATH",
                         help="plots of the shares per round, round makespans and device "
                         "timelines: an image for a .png path, a page for .html (- : the page on "
                         "standard output)")
    add_common(outputs)
    p.set_defaults(func=run)


def _cluster(args):
    """The Dask client the ``dask`` devices need (or a null context)."""
    from runtime.scheduler.device_specs import parse_devices  # lazy: start-up

    items = [s.strip() for s in args.devices.split(",")]
    on_cluster = "dask" in items
    if on_cluster and [s for s in items if s != "dask"]:  # the local part, before a cluster starts
        parse_devices(",".join(s for s in items if s != "dask"))
    if args.workers is not None or args.scheduler is not None:
        if args.devices == "auto":
            args.devices, on_cluster = "dask", True
        elif not on_cluster:
            raise InputError("--workers/--scheduler run on a Dask cluster's workers; add dask "
                             f"to --devices {args.devices!r} or drop them")
    return client_for(args) if on_cluster else contextlib.nullcontext()


def run(args, program_args):
    from runtime.scheduler.device_specs import parse_devices  # lazy: start-up

    check_command_outputs(args, [args.report])
    check_suffix(args.report, "--report", (".html", ".htm", ".png"),
                 "the report is an HTML page, or a PNG image")
    if args.units is not None and args.units < 1:
        raise InputError(f"--units {args.units}: use at least 1 sub-load")
    if args.rounds < 1:
        raise InputError(f"--rounds {args.rounds}: use at least 1 round")
    with _cluster(args) as client:
        # a bad device spec is refused before the job is built
        parse_devices(args.devices, client)
        return _run(args, client)


def _run(args, client):
    from runtime.scheduler import POLICIES, schedule  # lazy: start-up
    from runtime.scheduler.device_specs import parse_devices  # lazy: start-up
    from runtime.scheduler.jobs import make_job  # lazy: start-up
    from runtime.scheduler.report import write_report  # lazy: start-up

    from .. import partition_batch  # noqa: F401 (registers the partition-batch job kind)
    job = make_job(args.job, size=args.size, units=args.units, seed=args.seed)
    policies = POLICIES if args.policy == "all" else (args.policy,)
    if args.policy == "all":
        devices = parse_devices(args.devices, client)
        kinds = [d.kind for d in devices if d.can_run(job)]
        if kinds.count("gpu") != 1 or kinds.count("cpu") != 1:
            policies = tuple(p for p in POLICIES if p != "qilin")
    results = []
    for policy in policies:
        results.append(schedule(job, parse_devices(args.devices, client), policy, rounds=args.rounds,
                                profile_units=args.profile_units, training=args.training))
    skipped = _skipped(results)
    if skipped:
        _note_skipped(job, results, skipped)
    checked = None
    if args.check:
        ref = job.reference()
        checked = all(job.same(r.result, ref) for r in results)
    if args.report:
        write_report(results, args.report)
    if args.json:
        out = {"job": job.describe(), "devices_skipped": skipped,
               "results": [r.summary() for r in results]}
        if checked is not None:
            out["matches_reference"] = checked
        print_json(out)
    else:
        for r in results:
            rows = [("policy", r.policy),
                    ("devices", ", ".join(d["name"] for d in r.devices)
                     + (f" (left out: {'; '.join(f'{k}: {v}' for k, v in r.excluded.items())})"
                        if r.excluded else "")),
                    ("makespan", f"{r.makespan:.6g} s" + (" (simulated)" if r.virtual else "")
                     + (f", {r.makespan / r.ideal:.3f}x the ideal split" if r.ideal else "")),
                    ("last round", f"{r.rounds[-1]['makespan']:.6g} s"),
                    ("sub-loads", ", ".join(f"{k} {v:,}" for k, v in r.units.items())),
                    ("busy", ", ".join(f"{k} {v:.4g} s" for k, v in r.busy.items())),
                    ("stolen", f"{r.stolen:,}")]
            if r.policy == "hass":
                rows.append(("ratios final", "not yet" if r.final_round is None
                             else f"after round {r.final_round}"))
                rows.append(("profiling", f"{r.profiling_seconds:.4g} s"))
                rows.append(("call time", "; ".join(
                    f"{name} {m['call_seconds']:.3g} s + {m['seconds_per_subload']:.3g} s a "
                    "sub-load" for name, m in r.info.get("models", {}).items())))
            if r.policy == "qilin":
                rows.append(("training (offline)", f"{r.training_seconds:.4g} s"))
            for f in r.faults:
                rows.append(("fault", f"{f.device} in round {f.round}: {f.error} "
                             f"({f.units} sub-loads run again elsewhere)"))
            print_rows(rows)
            print()
        if checked is not None:
            print("result matches the CPU reference" if checked
                  else "RESULT DIFFERS FROM THE CPU REFERENCE")
    return 0 if checked in (None, True) else 1


def _skipped(results):
    """The devices any run left out, once each in the order given: ``[{"device", "reason"}]``."""
    seen = {}
    for r in results:
        for item in r.skipped():
            seen.setdefault(item["device"], item)
    return list(seen.values())


def _note_skipped(job, results, skipped):
    """One note line on stderr: which devices were left out, why, and what runs the job."""

    by_reason = {}
    for item in skipped:
        by_reason.setdefault(item["reason"], []).append(item["device"])
    used = []
    for r in results:
        used.extend(d["name"] for d in r.devices if d["name"] not in used)
    why = "; ".join(f"{', '.join(names)}: {reason}" for reason, names in by_reason.items())
    print(f"note: left out of {job.kind}: {why}; it runs on {', '.join(used)}", file=sys.stderr)
