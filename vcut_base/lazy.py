"""Imports on demand: public names of a package imported from their submodule when first
used (PEP 562), and slow imports started ahead in a thread (`ahead`)."""

import concurrent.futures
import importlib
import threading

__all__ = ["lazy_names", "ahead", "background"]


def ahead(load):
    """Call ``load()`` (an import, e.g. matplotlib's ~0.35 s) in a daemon thread and return
    the thread.

    For a pipeline that will need a slow module later and meanwhile waits on something
    that releases the GIL (a child process, a compiled kernel): the import then costs
    the pipeline nothing. Python's per-module import locks make a later import of the
    same module in another thread wait for this one to finish, never see it half done.
    An error here is dropped: the later import, in the caller's thread, raises it there.
    """
    def run():
        try:
            load()
        except Exception:  # noqa: BLE001 - raised again by the caller's own import
            pass

    thread = threading.Thread(target=run, name="vcut-import-ahead", daemon=True)
    thread.start()
    return thread


def lazy_names(namespace, homes):
    """``(__getattr__, __dir__)`` for the package whose globals are ``namespace``.

    ``homes`` maps a submodule to the public names it defines; the first use
    of a name imports that submodule and keeps the value in ``namespace``.
    """
    module_of = {name: module for module, names in homes.items() for name in names}
    package = namespace["__name__"]

    def __getattr__(name):
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(namespace["__all__"]))

    return __getattr__, __dir__


def background(work):
    """Start ``work()`` in a daemon thread; a `concurrent.futures.Future` of its result.

    ``future.result()`` waits for it and returns its value or raises its exception in
    the caller's thread. For work a pipeline needs later that can overlap the compiled
    kernels it runs meanwhile (they release the GIL).
    """
    future = concurrent.futures.Future()

    def run():
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(work())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
            future.set_exception(exc)

    threading.Thread(target=run, name="vcut-background", daemon=True).start()
    return future
