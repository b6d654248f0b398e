"""Imports on demand: public names of a package imported from their submodule when first
used (PEP 562), and slow work (an import, a figure) started ahead in a thread (`background`)."""

import concurrent.futures
import importlib
import threading

__all__ = ["lazy_names", "background"]


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
    the caller's thread. For work a pipeline needs later that can overlap what it waits
    on meanwhile (a child process, compiled kernels: they release the GIL). An import
    started this way (matplotlib's ~0.35 s) needs no ``result()``: Python's per-module
    import locks make the caller's own import of that module wait for it to finish,
    never see it half done, and raise its error there.
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
