"""Dask clusters for vcut's scale-out (batch analysis, distributed edge partitioning).

vcut runs on Dask's distributed scheduler rather than a home-made one::

    from runtime.dask_cluster import dask_client
    with dask_client(workers=2) as client:        # an in-process LocalCluster
        ...
    with dask_client("tcp://10.0.0.5:8786") as client:   # an existing cluster
        ...

Without an address (and without ``VCUT_SCHEDULER`` in the environment) a
`distributed.LocalCluster` is started for the block: ``workers`` worker
processes of one thread each (vcut's kernels are compiled and single-threaded;
a process per worker keeps them from sharing the GIL), no dashboard, and the
cluster's logs kept below warnings. It is closed when the block ends. With an
address, the client connects to that scheduler and leaves it running.

Every task vcut submits is a pure function of its arguments: when a worker
dies, Dask re-runs its tasks on another worker and the result is the same.
"""

import contextlib
import logging
import os
import re

from vcut_base.errors import InputError, VcutError

__all__ = ["SCHEDULER_ENV", "dask_client", "scheduler_address", "worker_count"]

#: The environment variable that points every command at a Dask scheduler.
SCHEDULER_ENV = "VCUT_SCHEDULER"

_ADDRESS = re.compile(r"^(tcp|tls|inproc|ucx)://[^\s/]+(:\d+)?/?$")

#: Seconds to wait for an existing scheduler to answer.
CONNECT_TIMEOUT = 20
#: Messages Dask keeps per connection for debugging (``distributed.admin.
#: low-level-log-length``, default 1000): payloads included, so a driver that
#: sends each round's slices (`vcut.distributed`, `vcut.outofcore`) kept about
#: 1000 rounds' worth of them (170 MB on cnr-2000); vcut's clients keep a few.
MESSAGE_LOG = 16


def scheduler_address(scheduler=None):
    """The scheduler to connect to: ``scheduler``, else ``$VCUT_SCHEDULER``, else None
    (start a LocalCluster). Raises `InputError` for an address that is not
    ``PROTOCOL://HOST[:PORT]``."""
    address = scheduler if scheduler is not None else os.environ.get(SCHEDULER_ENV) or None
    if address is None:
        return None
    if not _ADDRESS.match(address):
        where = "--scheduler" if scheduler is not None else SCHEDULER_ENV
        raise InputError(f"{where}: {address!r} is not a Dask scheduler address; "
                         "write tcp://HOST:PORT (e.g. tcp://127.0.0.1:8786)")
    return address


def worker_count(workers):
    """Validate ``workers`` (None or an integer >= 1)."""
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"the number of workers must be a positive integer, got {workers!r}")
    return workers


@contextlib.contextmanager
def dask_client(scheduler=None, workers=None, *, processes=True, memory_limit="auto"):
    """A `distributed.Client` for the block.

    Parameters
    ----------
    scheduler : str, optional
        ``tcp://HOST:PORT`` of a running Dask scheduler; default
        ``$VCUT_SCHEDULER``, else a new LocalCluster.
    workers : int, optional
        Workers of the LocalCluster (default: the CPUs this process may use).
        With a scheduler given, the cluster's own workers are used and this
        must be None or at most the number there.
    processes : bool
        LocalCluster workers as processes (default) or threads of this process.
    memory_limit : str or int
        Per-worker memory limit of the LocalCluster (Dask's ``memory_limit``).

    Raises
    ------
    InputError
        A malformed address or worker count.
    VcutError
        The scheduler cannot be reached, or has fewer workers than asked for.
    """
    try:
        from distributed import Client, LocalCluster  # lazy: dask is optional
    except ImportError as exc:  # a dependency, but installs can be partial
        raise VcutError(f"Dask is not installed ({exc}); pip install 'dask[distributed]'") from None
    import dask  # lazy: dask is optional

    address = scheduler_address(scheduler)
    workers = worker_count(workers)
    quiet = logging.ERROR
    with dask.config.set({"distributed.admin.low-level-log-length": MESSAGE_LOG}):
        if address is None:
            n = workers or len(os.sched_getaffinity(0))
            with LocalCluster(n_workers=n, threads_per_worker=1, processes=processes,
                              dashboard_address=":0", silence_logs=quiet,
                              memory_limit=memory_limit) as cluster, Client(cluster) as client:
                yield client
            return
        yield from _remote(address, workers, quiet)


def _remote(address, workers, quiet):
    from distributed import Client  # lazy: dask is optional

    for name in ("distributed", "distributed.client", "distributed.comm"):
        logging.getLogger(name).setLevel(quiet)
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise VcutError(f"cannot reach the Dask scheduler at {address} ({exc}); start one "
                        "with 'dask scheduler' and 'dask worker ADDRESS', or drop --scheduler "
                        f"and unset {SCHEDULER_ENV} to run on this machine") from None
    with client:
        have = len(client.nthreads())
        if workers is not None and have < workers:
            raise VcutError(f"the scheduler at {address} has {have} workers, {workers} asked "
                            "for; start more workers or ask for fewer")
        yield client
