"""frontend: compile C to LLVM IR, instrument it, run it, and decode its trace.

The first stage of the vcut pipeline::

    from frontend import trace_program
    trace = trace_program("samples/fib.c", args=["20"])
    trace.dynamic_instructions, trace.calls("fib")
"""

import importlib

__all__ = [
    "trace_program",
    "run_program",
    "compile_program",
    "CompiledModule",
    "instrument_module",
    "InstrumentedModule",
    "RunLimits",
    "RunResult",
    "DEFAULT_LIMITS",
    "StaticTable",
    "Trace",
    "load_trace",
    "FORMAT_VERSION",
    "VcutError",
]

#: Where each public name lives; a submodule is imported when one of its names
#: is first used, so that ``frontend.errors`` or ``frontend.atomic`` (which
#: every command needs) do not import the compiler and llvmlite.
_HOMES = {
    "api": ("run_program", "trace_program"),
    "compile": ("CompiledModule", "compile_program"),
    "errors": ("VcutError",),
    "instrument": ("InstrumentedModule", "instrument_module"),
    "run": ("DEFAULT_LIMITS", "RunLimits", "RunResult"),
    "static": ("StaticTable",),
    "trace": ("FORMAT_VERSION", "Trace", "load_trace"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
