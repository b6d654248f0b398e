"""Slices of a run: windows by node index or by ROI activation, and evenly spaced samples.

The nodes of an IR graph are the executed instructions in execution order, so
a contiguous range of node indices is a phase of the run (`Graph.window`).
The graph of a trace made with ``--roi FUNC`` also records where each
activation of the region of interest begins (``Graph.roi_starts``), so a
window can be named by activation instead (`Graph.roi_window`).

* ``NodeWindow(a, b)`` (``--window A:B``): nodes ``a .. b - 1`` (``b`` None: to the end);
* ``RoiWindow(k, l)`` (``--window roi:K:L``): activations ``k .. l - 1`` (``l`` None: to
  the last); ``--window roi:K`` is ``RoiWindow(k, k + 1)``.

`spaced_windows` places N windows evenly over a run (or over its ROI
activations) for sampling: window ``i`` is centred in the ``i``-th of N equal
parts, so windows of the default size (a part) tile the run.

::

    from ir_graph.windows import RoiWindow, spaced_windows
    g3 = RoiWindow(3, 4).cut(graph)             # the fourth activation of the ROI
    rest = RoiWindow(3, None).cut(graph)        # the fourth to the last
    spaced_windows(graph.n, 4)                  # four consecutive quarters
    spaced_windows(graph.n, 4, 1000)            # 1000 nodes in the middle of each quarter
"""

from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np

from vcut_base.errors import InputError

__all__ = ["NodeWindow", "RoiWindow", "roi_bounds", "spaced_windows", "unit_spans"]


class NodeWindow(NamedTuple):
    """Nodes ``start .. end - 1`` of a graph (``end`` None: to the last node).

    A pair, so it compares equal to ``(start, end)``; ``str`` gives the
    ``--window START:END`` spelling. The nodes of an IR graph are the
    executed instructions in execution order, so the window is a contiguous
    phase of the run.

    Parameters
    ----------
    start : int
        First node.
    end : int, optional
        One past the last node; None (the default): to the last node.

    See Also
    --------
    RoiWindow : a window by ROI activation.
    Graph.window : what `cut` calls.

    Examples
    --------
    >>> import numpy as np
    >>> from ir_graph import Graph, NodeWindow
    >>> chain = Graph(n=9, src=np.arange(8), dst=np.arange(1, 9), weight=np.ones(8),
    ...               directed=True)
    >>> w = NodeWindow(2, 5)
    >>> w == (2, 5), str(w), str(NodeWindow(4))
    (True, '2:5', '4:')
    >>> part = w.cut(chain)
    >>> part.n, part.m, part.meta["window"]["edges_in"], part.meta["window"]["edges_out"]
    (3, 2, 1, 1)
    >>> w.bounds(4), NodeWindow(4).bounds(9)
    ((2, 4), (4, 9))
    >>> NodeWindow(5, 3).cut(chain)
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: window 5:3 is not a slice of the 9 nodes; give START:END with
    0 <= START < END <= 9
    """

    start: int
    end: Optional[int] = None

    def bounds(self, n, roi_starts=None):
        """``(start, end)`` in a run of ``n`` nodes, clipped to it (the graph refuses
        an empty or reversed slice when it is cut)."""
        end = n if self.end is None else min(self.end, n)
        return min(self.start, n), end

    def cut(self, graph):
        """``graph.window`` of these nodes."""
        return graph.window(self.start, graph.n if self.end is None else self.end)

    def __str__(self):
        return f"{self.start}:{'' if self.end is None else self.end}"


@dataclass(frozen=True)
class RoiWindow:
    """Activations ``first .. stop - 1`` of the region of interest (``stop`` None: to the last).

    For the graph of a trace made with ``--roi FUNC``, whose ``roi_starts``
    records the node where each activation of ``FUNC`` begins; ``str`` gives
    the ``--window roi:K:L`` spelling (``roi:K`` for one activation).

    Attributes
    ----------
    first : int
        First activation, from 0.
    stop : int or None
        One past the last activation; None: to the last.

    See Also
    --------
    NodeWindow : a window by node index.
    Graph.roi_window : what `cut` calls; it raises `InputError` when the
        graph records no activations or these are not among them.

    Examples
    --------
    Nine nodes in three activations of three nodes each:

    >>> import numpy as np
    >>> from ir_graph import Graph, RoiWindow
    >>> g = Graph(n=9, src=np.arange(8), dst=np.arange(1, 9), weight=np.ones(8),
    ...           directed=True, roi_starts=np.array([0, 3, 6]))
    >>> second = RoiWindow(1, 2)
    >>> str(second), second.bounds(g.n, g.roi_starts)
    ('roi:1', (3, 6))
    >>> part = second.cut(g)
    >>> part.n, part.m, part.meta["window"]["roi_activations"]
    (3, 2, {'first': 1, 'stop': 2, 'of': 3})
    >>> rest = RoiWindow(1, None).cut(g)
    >>> str(RoiWindow(1, None)), rest.n, rest.roi_starts.tolist()
    ('roi:1:', 6, [0, 3])
    >>> RoiWindow(3, 4).cut(g)
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: ROI activation 3 is out of range: the run has 3 activations of
    its region of interest (0..2)
    """

    first: int
    stop: Optional[int]

    def bounds(self, n, roi_starts):
        """``(start, end)`` node (or instruction) indices of these activations in a run of
        ``n`` whose activations begin at ``roi_starts`` (`roi_bounds`)."""
        return roi_bounds(roi_starts, n, self.first, self.stop)

    def cut(self, graph):
        """``graph.roi_window`` of these activations."""
        starts = graph.roi_starts
        last = 0 if starts is None else len(starts)
        return graph.roi_window(self.first, last if self.stop is None else self.stop)

    def __str__(self):
        if self.stop == self.first + 1:
            return f"roi:{self.first}"
        return f"roi:{self.first}:{'' if self.stop is None else self.stop}"


def roi_bounds(starts, n, first, stop):
    """``(start, end)``: the span of ROI activations ``first .. stop - 1`` of a run.

    Parameters
    ----------
    starts : int array or None
        Where each activation begins (``Graph.roi_starts``, or
        ``Trace.roi_activation_starts()`` for instruction indices).
    n : int
        Length of the run: the last activation ends there.
    first, stop : int
        Activations ``first .. stop - 1``, from 0; ``stop`` None: to the last.

    Raises
    ------
    InputError
        No activations recorded, or ``first``/``stop`` not ``0 <= first < stop <= count``.
    """
    if starts is None or len(starts) == 0:
        raise InputError("the graph has no ROI activations recorded: an ROI window (roi:K) "
                         "needs a program traced with --roi FUNC (its trace, or its graph "
                         "written as .npz by 'vcut graph')")
    count = len(starts)
    stop = count if stop is None else stop
    if not 0 <= first < count:
        raise InputError(f"ROI activation {first} is out of range: the run has {count} "
                         f"activation{'s' if count > 1 else ''} of its region of interest "
                         f"(0..{count - 1})")
    if not first < stop <= count:
        raise InputError(f"ROI activations {first}..{stop - 1} are out of range: the run has "
                         f"{count} activation{'s' if count > 1 else ''} of its region of "
                         f"interest (0..{count - 1}); give roi:K:L with K < L <= {count}")
    end = int(starts[stop]) if stop < count else int(n)
    return int(starts[first]), end


def spaced_windows(total, count, size=None, unit="nodes"):
    """``count`` windows of ``size`` units spaced evenly over ``total``: ``[(lo, hi), ...]``.

    Window ``i`` is centred in the ``i``-th of ``count`` equal parts of
    ``0 .. total - 1`` (its start rounded to the nearest unit, halves up, and
    moved inward where it would pass an end), so the windows are in order,
    the first and the last about as far from the ends; they overlap only
    when ``size`` exceeds a part. ``size`` None is a part, ``total //
    count``: the windows then cover the run but for ``total % count`` units
    (fewer than ``count``) between or around them. Integer arithmetic only.

    Parameters
    ----------
    total : int
        Units in the run (nodes, or ROI activations).
    count : int
        Number of windows, >= 1.
    size : int, optional
        Units per window, ``1 .. total``.
    unit : str
        What a unit is, for messages (``"nodes"``, ``"ROI activations"``).

    Returns
    -------
    list of (int, int)
        ``(lo, hi)`` of each window, units ``lo .. hi - 1``, in order.

    Raises
    ------
    InputError
        ``count`` < 1, ``size`` outside ``1 .. total``, or (default size)
        more windows than units.

    Examples
    --------
    >>> from ir_graph import spaced_windows
    >>> spaced_windows(10, 3)
    [(0, 3), (4, 7), (7, 10)]
    >>> spaced_windows(100, 2, 10)
    [(20, 30), (70, 80)]
    >>> spaced_windows(9, 3, unit="ROI activations")
    [(0, 3), (3, 6), (6, 9)]
    >>> spaced_windows(10, 20)
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: 20 windows need at least one unit each but the run has 10
    nodes; give fewer windows
    """
    total, count = int(total), int(count)
    if count < 1:
        raise InputError(f"the number of windows must be at least 1, got {count}")
    if size is None:
        size = total // count
        if size < 1:
            raise InputError(f"{count:,} windows need at least one unit each but the run has "
                             f"{total:,} {unit}; give fewer windows")
    size = int(size)
    if not 1 <= size <= total:
        raise InputError(f"a window of {size:,} {unit} does not fit in the run's {total:,} "
                         f"{unit}; give a window size of 1..{total:,}")
    out = []
    for i in range(count):
        # (2i + 1) * total / (2 count) - size / 2, to the nearest integer
        lo = ((2 * i + 1) * total - count * size + count) // (2 * count)
        lo = min(max(lo, 0), total - size)
        out.append((lo, lo + size))
    return out


def unit_spans(graph, unit):
    """``(units, to_nodes)`` of ``graph``: how many units it has and a function mapping a
    unit range ``(lo, hi)`` to its node range. ``unit``: ``"nodes"`` or ``"roi"``."""
    if unit == "nodes":
        return int(graph.n), lambda lo, hi: (lo, hi)
    if unit != "roi":
        raise InputError(f"unknown window unit {unit!r}; use 'nodes' or 'roi'")
    starts = graph.roi_starts
    roi_bounds(starts, graph.n, 0, None)  # the message when there are none
    bounds = np.append(np.asarray(starts, dtype=np.int64), np.int64(graph.n))
    return len(starts), lambda lo, hi: (int(bounds[lo]), int(bounds[hi]))
