"""frontend: compile C to LLVM IR, instrument it, run it, and decode its trace.

The first stage of the vcut pipeline::

    from frontend import trace_program
    trace = trace_program("samples/fib.c", args=["20"])
    trace.dynamic_instructions, trace.calls("fib")
"""

from .api import run_program, trace_program
from .compile import CompiledModule, compile_program
from .errors import VcutError
from .instrument import InstrumentedModule, instrument_module
from .run import DEFAULT_LIMITS, RunLimits, RunResult
from .static import StaticTable
from .trace import FORMAT_VERSION, Trace, load_trace

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
