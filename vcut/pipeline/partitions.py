"""Many partitions in one process: every graph file times every cluster count.

``vcut partition G1 G2 ... -p 8,32,128`` reads each graph once and cuts it for each
``p``, in one start-up (the interpreter, numba and the kernels load once, ~0.5 s a
command), writing one output per run::

    from vcut.pipeline.partitions import partition_files
    for run in partition_files(["a.txt.gz", "b.graph"], [8, 32], "hdrf", output="out/"):
        print(run.graph, run.p, run.partition.metrics.replication_factor, run.files)

Outputs: ``output`` is an existing directory (each run writes
``DIR/{graph}.{algo}.p{p}.parts``, ``{graph}`` the file's name without its format and
compression suffixes) or a pattern with the fields ``{graph}``, ``{p}`` and ``{algo}``,
e.g. ``out/{graph}-{p}.txt``; every run's outputs are checked before the first graph is
read (two runs writing one file, an output that is an input, a directory that cannot be
written), and each is written whole (`vcut.output.write_partition`).
"""

import os
import string
from dataclasses import dataclass

from vcut_base.atomic import check_outputs
from vcut_base.errors import InputError, OutputError

from ..output import REPLICAS_SUFFIX, write_partition

__all__ = ["PartitionRun", "partition_files", "run_outputs", "graph_name"]

#: Suffixes a graph file's name loses in ``{graph}`` (a compression, then a format).
_COMPRESSED = (".gz",)
_FIELDS = ("graph", "p", "algo")


@dataclass(frozen=True)
class PartitionRun:
    """One run of `partition_files`: one graph file cut into one number of clusters.

    Attributes
    ----------
    graph : str
        The graph file, as given.
    p : int
        The cluster count.
    partition : vcut.partition.EdgePartition
        The partition: ``assignment`` (the cluster of every input edge), ``metrics``
        (`vcut.partition.PartitionMetrics`: ``replication_factor``, ``loads``, ...).
    files : list of str
        The files written (the partition, then ``OUT.replicas.npz`` with ``details``);
        empty without ``output``.
    merged : dict, optional
        What reading merged (``graph.meta["merged"]``: ``repeated_edges``,
        ``reverse_pairs``, ``duplicates``); None for a file read as written (a
        ``.npz`` vcut wrote).

    Examples
    --------
    >>> from vcut.pipeline import partition_files
    >>> run = next(partition_files(["tests/data/power.graph.gz"], [4], "hdrf"))
    >>> run.graph, run.p, run.files
    ('tests/data/power.graph.gz', 4, [])
    >>> run.partition.n, len(run.partition.assignment)
    (4941, 6594)
    >>> round(run.partition.metrics.replication_factor, 3)
    1.205
    >>> run.merged
    {'repeated_edges': 0, 'reverse_pairs': 0, 'duplicates': 'first'}
    """

    graph: str
    p: int
    partition: object
    files: list
    merged: object = None


def graph_name(path):
    """``{graph}`` of an output pattern: the file's name without ``.gz`` and its format
    suffix (``data/email-Enron.txt.gz`` -> ``email-Enron``)."""
    name = os.path.basename(os.fspath(path))
    for suffix in _COMPRESSED:
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    stem, dot, _ = name.rpartition(".")
    return stem if dot and stem else name


def run_outputs(paths, ps, algo, output, details=True):
    """``{(path, p): [files]}``: what each run writes for ``output`` (see the module
    docstring); empty lists without ``output``.

    Raises
    ------
    InputError
        A pattern with a field other than ``{graph}``, ``{p}`` and ``{algo}``, or without
        the field that tells two runs apart (``{graph}`` with several graphs, ``{p}``
        with several cluster counts).
    OutputError
        Two runs would write the same file.
    """
    runs = [(path, p) for path in paths for p in ps]
    if output is None:
        return {run: [] for run in runs}
    if os.path.isdir(output):
        pattern = os.path.join(output, "{graph}.{algo}.p{p}.parts")
    else:
        pattern = os.fspath(output)
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(pattern) if f is not None}
        except ValueError as exc:
            raise InputError(f"-o {pattern}: not a pattern ({exc}); use the fields "
                             "{graph}, {p} and {algo}, or an existing directory") from None
        unknown = sorted(fields - set(_FIELDS))
        if unknown:
            raise InputError(f"-o {pattern}: unknown field {{{unknown[0]}}}; use {{graph}}, "
                             "{p} and {algo}, or an existing directory")
        for field, many, what in (("graph", len(paths) > 1, "graph files"),
                                  ("p", len(ps) > 1, "cluster counts")):
            if many and field not in fields:
                raise InputError(f"-o {pattern}: several {what} need {{{field}}} in the output "
                                 "pattern (or give an existing directory), so that each run "
                                 "writes its own file")
    out = {}
    seen = {}
    for path, p in runs:
        name = pattern.format(graph=graph_name(path), p=p, algo=algo)
        if name in seen and seen[name] == path:
            raise InputError(f"{path} is given twice; give each graph file once")
        if name in seen:
            raise OutputError(f"{seen[name]} and {path} (p = {p}) would both write {name}; "
                              "rename one of them or give -o a pattern that tells them apart")
        seen[name] = path
        out[(path, p)] = [name, name + REPLICAS_SUFFIX] if details else [name]
    return out


def partition_files(paths, ps, algo, options=None, *, output=None, details=True, seed=0,
                    capacities=None, device="cpu", fmt=None, duplicates="first", read=None):
    """Cut every graph file of ``paths`` for every cluster count of ``ps``.

    ``vcut partition G1 G2 ... -p 8,32``: one process reads each graph once and cuts
    it for each p (`vcut.partition.partition_graph`), writing each run's output whole
    (`vcut.output.write_partition`). The arguments and every output are checked here,
    before the iterator is returned; each graph is read and cut as the iteration
    reaches it.

    Parameters
    ----------
    paths : list of str
        Graph files (`ir_graph.read_graph`'s formats), each read once, as undirected.
    ps : list of int
        Cluster counts.
    algo, options, seed, capacities, device
        As `vcut.partition.partition_graph` takes them (``capacities`` needs one
        cluster count).
    output : str, optional
        An existing directory or a pattern (module docstring); None writes nothing.
    details : bool
        Also write ``OUT.replicas.npz`` beside each output.
    fmt, duplicates
        As `ir_graph.read_graph` takes them.
    read : callable, optional
        ``read(path) -> Graph`` instead of `ir_graph.read_graph` (the command line's,
        which notes what reading merged).

    Returns
    -------
    iterator of PartitionRun
        One per run, in order: graphs outer, ``ps`` inner.

    Raises
    ------
    InputError
        No graph or no cluster count, a file that is not there, capacities with several
        cluster counts, a bad pattern; then a bad graph or option as the run meets it.
    OutputError
        An output that cannot be written or is one of the inputs (checked before any run).

    Examples
    --------
    >>> import os, tempfile
    >>> from vcut.pipeline import partition_files
    >>> graphs = ["tests/data/power.graph.gz", "tests/data/3elt.graph.gz"]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for run in partition_files(graphs, [4, 8], "hdrf", output=tmp):
    ...         print(run.graph, run.p, round(run.partition.metrics.replication_factor, 3),
    ...               [os.path.basename(f) for f in run.files])
    tests/data/power.graph.gz 4 1.205 ['power.hdrf.p4.parts', 'power.hdrf.p4.parts.replicas.npz']
    tests/data/power.graph.gz 8 1.246 ['power.hdrf.p8.parts', 'power.hdrf.p8.parts.replicas.npz']
    tests/data/3elt.graph.gz 4 1.102 ['3elt.hdrf.p4.parts', '3elt.hdrf.p4.parts.replicas.npz']
    tests/data/3elt.graph.gz 8 1.136 ['3elt.hdrf.p8.parts', '3elt.hdrf.p8.parts.replicas.npz']

    An output pattern names each run's file; ``details=False`` writes no replicas:

    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     runs = partition_files(graphs[:1], [4, 8], "hdrf", details=False,
    ...                            output=os.path.join(tmp, "{graph}-{p}.txt"))
    ...     print([os.path.basename(f) for run in runs for f in run.files])
    ['power-4.txt', 'power-8.txt']

    Everything is checked before the iterator is returned:

    >>> partition_files(graphs, [4], "hdrf", output="out-{p}.txt")
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: -o out-{p}.txt: several graph files need {graph} in ...
    >>> partition_files(["missing.graph"], [4], "hdrf")
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: missing.graph: no such graph file
    """
    from ir_graph import read_graph  # lazy: the readers load numba

    from ..partition import partition_graph  # lazy: as the readers

    paths, ps = [os.fspath(p) for p in paths], [int(p) for p in ps]
    if not paths or not ps:
        raise InputError("give at least one graph file and one cluster count")
    if capacities is not None and len(ps) > 1:
        raise InputError("capacities give the clusters of one cluster count; give one -p "
                         "with them")
    for path in paths:
        if not os.path.isfile(path):
            raise InputError(f"{path}: no such graph file" if not os.path.exists(path)
                             else f"{path}: not a regular file; give a graph file")
    outs = run_outputs(paths, ps, algo, output, details)
    check_outputs([f for files in outs.values() for f in files], paths)
    read = read or (lambda path: read_graph(path, fmt, duplicates=duplicates, directed=False))

    def runs():
        for path in paths:
            graph = read(path)
            for p in ps:
                part = partition_graph(graph, p, algo, options, seed=seed,
                                       capacities=capacities, device=device)
                files = outs[(path, p)]
                if files:
                    files = write_partition(part, files[0], details)
                yield PartitionRun(path, p, part, files, graph.meta.get("merged"))

    return runs()
