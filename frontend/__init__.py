"""frontend: compile C to LLVM IR, instrument it, run it, and decode its trace.

The first stage of the vcut pipeline::

    from frontend import trace_program
    trace = trace_program("samples/strassen.c", compile_options={"defines": ["N=4"]})
    trace.dynamic_instructions, trace.calls("strassen")
"""

from vcut_base.errors import VcutError
from vcut_base.lazy import lazy_names

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
#: is first used, so that importing the package does not import the compiler and
#: llvmlite.
_HOMES = {
    "api": ("run_program", "trace_program"),
    "compile": ("CompiledModule", "compile_program"),
    "instrument": ("InstrumentedModule", "instrument_module"),
    "run": ("DEFAULT_LIMITS", "RunLimits", "RunResult"),
    "static": ("StaticTable",),
    "trace": ("FORMAT_VERSION", "Trace", "load_trace"),
}

__getattr__, __dir__ = lazy_names(globals(), _HOMES)
