"""vcut.pipeline: the whole analysis as a library, what ``vcut analyze``, ``compare`` and
``batch`` call.

trace (`tracing`) -> graph (`inputs`; ``vcut graph``'s file: `graph`) -> partition, map,
simulate (`analysis`; par's candidates: `vcut.par_steering`) -> report (`report`), with one
options object (`options`); files written whole (`outputs`)::

    from vcut.pipeline import AnalysisOptions, TraceOptions, analyze, compare
    opts = AnalysisOptions(p=8, baselines=False, trace=TraceOptions(defines=("N=8",)))
    run = analyze(["samples/strassen.c"], opts)            # vcut analyze
    run.summary["makespan"], run.analysis.result.hop_bytes
    rows = compare(["samples/strassen.c"], AnalysisOptions(ps=(8, 64),
                   mapping="memory-centric", trace=opts.trace)).rows   # vcut compare

On a graph already built: `analyze_graph`, `compare_methods`, `analyze_windows`. Many
programs on a Dask cluster: `run_batch` (`batch`). Many graph files and cluster counts in
one process (``vcut partition G1 G2 -p 8,32``): `partition_files` (`partitions`).
"""

from vcut_base.lazy import lazy_names

__all__ = [
    "AnalysisOptions", "TraceOptions",
    "analysis_input", "trace_sources", "program_graph",
    "Analysis", "analyze_graph",
    "AnalysisRun", "analyze",
    "METHODS", "Comparison", "compare", "compare_methods",
    "WindowSample", "WindowsRun", "analyze_windows", "sample_windows",
    "BatchJob", "load_manifest", "run_batch", "run_job", "write_results",
    "PartitionRun", "partition_files",
]

#: Where each public name lives; a submodule is imported when one of its names is first
#: used, so that the command line's start-up reads the options without the pipeline.
_HOMES = {
    "options": ("AnalysisOptions", "TraceOptions"),
    "tracing": ("trace_sources",),
    "graph": ("program_graph",),
    "inputs": ("analysis_input",),
    "analysis": ("Analysis", "analyze_graph"),
    "report": ("AnalysisRun", "analyze"),
    "comparison": ("METHODS", "Comparison", "compare", "compare_methods"),
    "partitions": ("PartitionRun", "partition_files"),
    "windows": ("WindowSample", "WindowsRun", "analyze_windows", "sample_windows"),
    "batch": ("BatchJob", "load_manifest", "run_batch", "run_job", "write_results"),
}

__getattr__, __dir__ = lazy_names(globals(), _HOMES)
