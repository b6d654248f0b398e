"""Where a trace's instructions and memory objects are in the program's source.

A `SourceMap` keeps the part of a `Trace` that names things for a person:
the static instruction table (function, ``file:line`` of every static
instruction) and, per memory object, its kind, allocating instruction and
global. It is small next to the trace (the static table plus 9 bytes per
object), so an IR graph keeps it (``Graph.source``) after the trace is gone::

    from frontend import trace_program
    from frontend.source import SourceMap
    sm = SourceMap.from_trace(trace_program("samples/fft.c"))
    labels, line_of_sid = sm.lines()
    sm.object_name(0)
"""

import os
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .trace import OBJECT_KINDS

__all__ = ["SourceMap", "NO_LINE"]

#: Label suffix of the instructions without a line (allocas, compiler-made code).
NO_LINE = "(no line)"



@dataclass(frozen=True, eq=False)
class SourceMap:
    """Names of a trace's static instructions and memory objects.

    Attributes
    ----------
    static : frontend.StaticTable
    obj_kind : uint8 (objects,)
        0 global, 1 stack, 2 heap, 3 argv (`frontend.trace.OBJECT_KINDS`).
    obj_sid : int32 (objects,)
        Allocating instruction (-1: a global or argv).
    obj_global : int32 (objects,)
        Global id (-1: not a global).
    """

    static: object
    obj_kind: np.ndarray
    obj_sid: np.ndarray
    obj_global: np.ndarray

    @classmethod
    def from_trace(cls, trace):
        """The `SourceMap` of a `frontend.Trace` (its arrays, not copies)."""
        return cls(static=trace.static, obj_kind=trace.obj_kind, obj_sid=trace.obj_sid,
                   obj_global=trace.obj_global)

    @property
    def n_objects(self):
        return int(len(self.obj_kind))

    def lines(self):
        """``(labels, line_of_sid)``: the distinct source lines as ``file.c:41``
        labels (file base names; ``func (no line)`` for instructions without a
        line) and the index of each static instruction's label (int32)."""
        return self._lines

    def functions(self):
        """``(names, function_of_sid)``: function names and each static
        instruction's function (int32)."""
        st = self.static
        return [str(f) for f in st.fn_name], np.asarray(st.ins_func, dtype=np.int32)

    def object_name(self, o):
        """A person's name for object ``o``: the global's name, or where it was
        allocated (``heap block from strassen.c:30 (strassen)``)."""
        o = int(o)
        if not 0 <= o < self.n_objects:
            return f"object {o}"
        st = self.static
        k = int(self.obj_kind[o])
        kind = OBJECT_KINDS[k] if k < len(OBJECT_KINDS) else "object"
        g = int(self.obj_global[o])
        if g >= 0:
            return str(st.gv_name[g])
        s = int(self.obj_sid[o])
        if s < 0:
            return kind
        func = str(st.fn_name[int(st.ins_func[s])])
        if kind == "stack":
            return f"local {st.ins_result[s]} of {func}"
        label = self._lines[0][int(self._lines[1][s])]
        return f"{kind} block from {label} ({func})" if not label.endswith(NO_LINE) \
            else f"{kind} block of {func}"

    @cached_property
    def _lines(self):
        st = self.static
        files = [os.path.basename(str(f)) for f in st.files]
        fn_file = np.asarray(st.fn_file)
        labels, index, out = [], {}, np.empty(st.n_instructions, dtype=np.int32)
        for s in range(st.n_instructions):  # static instructions: the module's size
            f = int(st.ins_func[s])
            line = int(st.ins_line[s])
            label = (f"{files[fn_file[f]]}:{line}" if line > 0 and fn_file[f] >= 0
                     else f"{st.fn_name[f]} {NO_LINE}")
            out[s] = index.setdefault(label, len(labels))
            if out[s] == len(labels):
                labels.append(label)
        return labels, out
