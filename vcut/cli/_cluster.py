"""Options shared by the commands that run on a Dask cluster (`runtime.dask_cluster`)."""

from ._common import int_option

__all__ = ["add_cluster_options", "client_for"]


def add_cluster_options(parser, workers_help):
    """``--workers N`` and ``--scheduler ADDRESS`` on ``parser`` (a parser or one of its
    groups)."""
    parser.add_argument("--workers", type=int_option("--workers", 1, 4096), metavar="N",
                        help=workers_help)
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                        help="run on this Dask scheduler's workers (default: $VCUT_SCHEDULER, "
                        "else a local cluster of --workers processes)")


def client_for(args):
    """The `runtime.dask_cluster.dask_client` context of the command's options."""
    from runtime.dask_cluster import dask_client  # lazy: dask is optional and slow to import

    return dask_client(args.scheduler, args.workers)
