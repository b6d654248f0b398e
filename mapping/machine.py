"""Machine models: cores on a 2-D mesh with XY routing, NUMA nodes, caches.

Three sources, one `Machine`:

* ``table2:P`` -- the source's Table 2 machine with P cores: a ``rows x cols``
  mesh (rows the largest divisor of P not above sqrt(P), so P = 64 is 8 x 8),
  2.4 GHz cores, 64 KiB 4-way L1 with 32-byte blocks, 256 KiB L2, 4 GB of
  memory at 8 GB/s. Where Table 2 is silent this model chooses, and says so:
  a hop costs 2 cycles (1 router + 1 link, gem5 Garnet's defaults), links
  carry 16 bytes per cycle, and the memory sits behind four controllers, one
  per mesh quadrant, so each quadrant is a NUMA node; reaching memory costs
  100 cycles plus 2 cycles per hop between quadrant corners. ``mesh:RxC`` is
  the same machine with the mesh given.
* ``host`` -- this computer, read from ``/sys/devices/system/node`` (CPUs
  and distances of each NUMA node) and ``/sys/devices/system/cpu/online``.
  It has no mesh model: cores sit on a 1 x P row with hops that cost nothing,
  and Linux's NUMA distances (10 = local) scale the 100-cycle memory latency.
* ``hwloc:FILE.xml`` -- the same model from hwloc's ``lstopo --of xml``
  output (of this or any other computer): NUMA nodes, their processing
  units, and the NUMA latency matrix when the file has one.
* a JSON machine file written by hand (`machine_from_dict` documents and
  validates every field; errors name the field and the value).
"""

import json
import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

import numpy as np

from ir_graph.control import BRANCH_CYCLES
from vcut_base.errors import InputError, quoted
from vcut_base.inputs import check_input_file, read_input
from vcut_base.memory import check_memory

__all__ = ["Machine", "table2", "host", "hwloc_xml", "machine_from_dict", "load_machine",
           "MEMORY_CYCLES"]

MEMORY_CYCLES = 100.0  # local DRAM latency in core cycles

#: Bytes the mapping allocates per pair of cores (hop matrices and their
#: temporaries): a machine whose cores squared times this exceeds the
#: available memory is refused before it is built.
BYTES_PER_CORE_PAIR = 24

#: Largest integer a machine file may give a count or size that is not in bytes.
MAX_COUNT = 2**31 - 1


@dataclass(frozen=True, eq=False)
class Machine:
    """A multi-core machine for mapping and simulation.

    Core ``c`` sits at mesh position ``(c // mesh_cols, c % mesh_cols)``;
    messages follow XY routing (along the row first, then the column), one
    `hop_cycles` per hop and `link_bytes_per_cycle` per link.
    ``numa_latency[a, b]`` is the memory latency (cycles) for a core of NUMA
    node ``a`` reaching memory of node ``b``. ``issue_window``: how many of a
    cluster's oldest unstarted tasks an out-of-order core may pick from (64,
    gem5 O3's instruction queue; 1 = in order).

    Made by `table2`, `host`, `hwloc_xml`, `machine_from_dict` or `load_machine`
    (any of them by name); the constructor does not validate its fields. The
    property ``numa_nodes`` counts the NUMA nodes; ``coords(c)``, ``hops(a, b)``,
    ``hop_matrix()``, ``route(a, b)`` and ``mean_message_cycles(nbytes)`` give
    the mesh geometry and latencies; ``to_dict()`` the machine-file form.

    Attributes
    ----------
    name : str
        The machine's name (``"table2:64"``, ``"mesh:4x4"``, ``"host"``, ...).
    cores : int
        Number of cores (``mesh_rows * mesh_cols``).
    mesh_rows, mesh_cols : int
        The mesh's shape.
    numa_of_core : int ndarray, shape (cores,)
        NUMA node of each core.
    numa_latency : float ndarray, shape (nodes, nodes)
        Memory latency in cycles from a core of node ``a`` to memory of node ``b``.
    core_speed : float ndarray, shape (cores,)
        Relative speed of each core (a task of ``w`` cycles takes ``w / speed``).
    clock_ghz : float, default 2.4
        Core clock (converts cycles to seconds).
    hop_cycles : float, default 2.0
        Cycles per mesh hop (router + link).
    link_bytes_per_cycle : float, default 16.0
        Bandwidth of a link.
    l1_bytes, l1_ways, l2_bytes, block_bytes : int
        Cache sizes, associativity and block size (64 KiB, 4, 256 KiB, 32).
    memory_bytes : int ndarray, shape (nodes,), optional
        Memory of each NUMA node (None: unlimited, not checked by `place`).
    memory_bandwidth_gbs : float, default 8.0
        Memory bandwidth (GB/s).
    issue_window : int, default 64
        Tasks an out-of-order core may choose from per cluster (1: in order).
    branch_cycles : float, default 1.0
        Branch-resolution latency: the cycles of a control edge, from a branch to an
        instruction that waits for it (`ir_graph.control`; ``--branch-latency``).
    meta : dict
        Provenance (``"source"``, and ``"cpus"`` for a host).

    Examples
    --------
    The Table 2 machine with 16 cores: a 4 x 4 mesh whose quadrants are the
    NUMA nodes; memory of the opposite quadrant is 6 hops of 2 cycles away:

    >>> from mapping import table2
    >>> m = table2(16)
    >>> m.cores, (m.mesh_rows, m.mesh_cols), m.numa_nodes
    (16, (4, 4), 4)
    >>> m.numa_of_core.reshape(4, 4).tolist()
    [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]]
    >>> m.numa_latency[0].tolist()
    [100.0, 106.0, 106.0, 112.0]

    Core 6 is at row 1, column 2; from core 0 a message goes two hops east,
    then one south:

    >>> m.coords(6), m.hops(0, 6)
    ((1, 2), 3)
    >>> m.route(0, 6)
    [((0, 0), (0, 1)), ((0, 1), (0, 2)), ((0, 2), (1, 2))]
    """

    name: str
    cores: int
    mesh_rows: int
    mesh_cols: int
    numa_of_core: np.ndarray
    numa_latency: np.ndarray
    core_speed: np.ndarray
    clock_ghz: float = 2.4
    hop_cycles: float = 2.0
    link_bytes_per_cycle: float = 16.0
    l1_bytes: int = 64 * 1024
    l1_ways: int = 4
    l2_bytes: int = 256 * 1024
    block_bytes: int = 32
    memory_bytes: np.ndarray = None
    memory_bandwidth_gbs: float = 8.0
    issue_window: int = 64
    branch_cycles: float = BRANCH_CYCLES
    meta: dict = field(default_factory=dict)

    @property
    def numa_nodes(self):
        return int(self.numa_latency.shape[0])

    def coords(self, core):
        return int(core) // self.mesh_cols, int(core) % self.mesh_cols

    def hops(self, a, b):
        """Mesh hops between two cores (Manhattan distance: XY routing)."""
        (ra, ca), (rb, cb) = self.coords(a), self.coords(b)
        return abs(ra - rb) + abs(ca - cb)

    def hop_matrix(self):
        """``H[a, b]``: mesh hops between every pair of cores (int32)."""
        c = np.arange(self.cores)
        r, k = c // self.mesh_cols, c % self.mesh_cols
        return (np.abs(r[:, None] - r[None, :]) + np.abs(k[:, None] - k[None, :])).astype(np.int32)

    def mean_message_cycles(self, nbytes):
        """Cycles a message of ``nbytes`` takes between two different cores
        without contention, averaged over the pairs of cores: hops times
        `hop_cycles` plus its serialisation on a link."""
        k = self.cores
        ser = float(nbytes) / self.link_bytes_per_cycle
        if k < 2:
            return ser
        c = np.arange(k)
        r, q = c // self.mesh_cols, c % self.mesh_cols
        # sum over ordered pairs of |r_a - r_b| + |q_a - q_b|, one coordinate at a time
        hops = _pair_distance_sum(r) + _pair_distance_sum(q)
        return hops / (k * (k - 1)) * self.hop_cycles + ser

    def route(self, a, b):
        """Links ``((r, c), (r', c'))`` an XY-routed message from ``a`` to ``b`` crosses."""
        (r, c), (rb, cb) = self.coords(a), self.coords(b)
        links = []
        while c != cb:
            nc = c + (1 if cb > c else -1)
            links.append(((r, c), (r, nc)))
            c = nc
        while r != rb:
            nr = r + (1 if rb > r else -1)
            links.append(((r, c), (nr, c)))
            r = nr
        return links

    def to_dict(self):
        return {
            "name": self.name, "cores": self.cores, "mesh": [self.mesh_rows, self.mesh_cols],
            "clock_ghz": self.clock_ghz, "hop_cycles": self.hop_cycles,
            "link_bytes_per_cycle": self.link_bytes_per_cycle,
            "numa": {"node_of_core": self.numa_of_core.tolist(),
                     "latency_cycles": self.numa_latency.tolist()},
            "core_speed": self.core_speed.tolist(), "issue_window": self.issue_window,
            "branch_cycles": self.branch_cycles,
            "cache": {"l1_bytes": self.l1_bytes, "l1_ways": self.l1_ways,
                      "l2_bytes": self.l2_bytes, "block_bytes": self.block_bytes},
            "memory": {"bytes_per_node": (self.memory_bytes.tolist()
                                          if self.memory_bytes is not None else None),
                       "bandwidth_gbs": self.memory_bandwidth_gbs},
        }


def _pair_distance_sum(x):
    """``sum_{a, b} |x[a] - x[b]|`` over ordered pairs, by sorting (O(k log k))."""
    x = np.sort(np.asarray(x, dtype=np.float64))
    k = len(x)
    return 2.0 * float(np.sum(x * (2 * np.arange(k) - k + 1)))


def _check_cores(p):
    """Refuse a core count whose core-pair matrices cannot fit in memory."""
    check_memory(BYTES_PER_CORE_PAIR * float(p) ** 2, f"a machine of {p:,} cores",
                 "use fewer cores (or clusters, -p)")


def _mesh_shape(p):
    rows = max(d for d in range(1, int(math.isqrt(p)) + 1) if p % d == 0)
    return rows, p // rows


def _quadrant_numa(rows, cols, hop_cycles):
    """NUMA node per core (mesh quadrants) and the latency matrix between nodes.

    A mesh with more than one row (column) is halved along the rows (columns);
    node ``i``'s memory controller sits at the mesh corner of its quadrant.
    """
    qr = 2 if rows > 1 else 1
    qc = 2 if cols > 1 else 1
    r = np.arange(rows * cols) // cols
    c = np.arange(rows * cols) % cols
    lower = (r >= (rows + 1) // 2) if qr == 2 else np.zeros(rows * cols, dtype=bool)
    right = (c >= (cols + 1) // 2) if qc == 2 else np.zeros(rows * cols, dtype=bool)
    node = lower.astype(np.int32) * qc + right.astype(np.int32)
    corners = [((rows - 1) * (i // qc), (cols - 1) * (i % qc)) for i in range(qr * qc)]
    lat = np.array([[MEMORY_CYCLES + hop_cycles * (abs(a[0] - b[0]) + abs(a[1] - b[1]))
                     for b in corners] for a in corners])
    return node, lat


def table2(p, mesh=None):
    """The source's Table 2 machine with ``p`` cores (see the module docstring).

    A ``rows x cols`` mesh (default: rows the largest divisor of ``p`` not
    above ``sqrt(p)``), 2.4 GHz cores of speed 1, 64 KiB 4-way L1 with 32-byte
    blocks, 256 KiB L2, and 4 GB of memory at 8 GB/s shared equally by the NUMA
    nodes: the mesh quadrants (halves of a one-row or one-column mesh), each
    with its memory controller at its mesh corner. A hop costs 2 cycles, a
    link carries 16 bytes per cycle, and memory costs 100 cycles plus 2 per
    hop between the quadrants' corners.

    Parameters
    ----------
    p : int
        Number of cores (>= 1).
    mesh : (int, int), optional
        The mesh ``(rows, cols)``, with ``rows * cols == p``; the machine is then
        named ``mesh:RxC`` instead of ``table2:P``.

    Returns
    -------
    Machine

    Raises
    ------
    InputError
        ``p`` not a positive integer, or a mesh of another core count.
    InputTooLarge
        Too many cores for the core-pair matrices to fit in memory.

    See Also
    --------
    load_machine : ``table2:P`` and ``mesh:RxC`` by name.

    Examples
    --------
    At 64 cores, an 8 x 8 mesh: the farthest cores are 14 hops apart, and memory
    of the diagonally opposite quadrant costs ``100 + 2 * 14`` cycles:

    >>> from mapping import table2
    >>> m = table2(64)
    >>> m.name, m.mesh_rows, m.mesh_cols, m.hops(0, 63)
    ('table2:64', 8, 8, 14)
    >>> m.numa_latency[0].tolist()
    [100.0, 114.0, 114.0, 128.0]
    >>> m.memory_bytes.tolist()  # 4 GB over 4 nodes
    [1073741824, 1073741824, 1073741824, 1073741824]

    12 cores make a 3 x 4 mesh; a one-row mesh has two NUMA nodes, its halves:

    >>> m = table2(12)
    >>> m.mesh_rows, m.mesh_cols
    (3, 4)
    >>> m = table2(6, mesh=(1, 6))
    >>> m.name, m.numa_of_core.tolist(), m.numa_latency.tolist()
    ('mesh:1x6', [0, 0, 0, 1, 1, 1], [[100.0, 110.0], [110.0, 100.0]])
    >>> table2(6, mesh=(2, 2))
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: a 2 x 2 mesh has 4 cores, not 6
    """
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool) or p < 1:
        raise InputError(f"a machine needs at least one core, got {p!r}")
    _check_cores(p)
    rows, cols = mesh if mesh is not None else _mesh_shape(p)
    if any(not isinstance(x, (int, np.integer)) or isinstance(x, bool) or x < 1
           for x in (rows, cols)):
        raise InputError(f"a mesh's sides are positive integers, got {rows!r} x {cols!r}")
    if rows * cols != p:
        raise InputError(f"a {rows} x {cols} mesh has {rows * cols} cores, not {p}")
    node, lat = _quadrant_numa(rows, cols, 2.0)
    k = lat.shape[0]
    return Machine(name=f"table2:{p}" if mesh is None else f"mesh:{rows}x{cols}", cores=p,
                   mesh_rows=rows, mesh_cols=cols, numa_of_core=node, numa_latency=lat,
                   core_speed=np.ones(p), memory_bytes=np.full(k, (4 << 30) // k),
                   meta={"source": "Table 2 of the vertex-cut framework, completed as documented"})


def _cpulist(text):
    cpus = []
    for part in text.strip().split(","):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            cpus.extend(range(int(a), int(b) + 1))
        else:
            cpus.append(int(part))
    return cpus


def host(sys_root="/sys"):
    """This computer's cores and NUMA nodes, read from Linux's sysfs.

    The online CPUs (``devices/system/cpu/online``) are the cores, numbered in
    order; each NUMA node's ``cpulist`` and ``distance`` (Linux's distances,
    10 = local) give the cores' nodes and the latency matrix, which scales the
    100-cycle local memory latency (distance 20: 200 cycles). Without NUMA
    nodes in sysfs, one node. There is no mesh model: the cores sit on a
    ``1 x P`` row whose hops cost nothing (``hop_cycles = 0``); the other
    fields are `Machine`'s defaults, with no memory limit.

    Parameters
    ----------
    sys_root : str, default "/sys"
        Where sysfs is mounted (another directory laid out the same way reads
        a saved topology).

    Returns
    -------
    Machine
        Named ``"host"``; ``meta["cpus"]`` lists the CPU ids of the cores.

    Raises
    ------
    InputError
        ``cpu/online`` cannot be read (not Linux, or sysfs not mounted), or a
        node's distances do not list one per node.

    See Also
    --------
    load_machine : ``"host"`` by name.

    Examples
    --------
    >>> from mapping import host
    >>> host().name
    'host'

    A saved two-node topology of four CPUs (written to a temporary directory):

    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     system = os.path.join(root, "devices", "system")
    ...     os.makedirs(os.path.join(system, "cpu"))
    ...     with open(os.path.join(system, "cpu", "online"), "w") as fh:
    ...         _ = fh.write("0-3")
    ...     for node, cpus, distance in (0, "0-1", "10 21"), (1, "2-3", "21 10"):
    ...         base = os.path.join(system, "node", f"node{node}")
    ...         os.makedirs(base)
    ...         with open(os.path.join(base, "cpulist"), "w") as fh:
    ...             _ = fh.write(cpus)
    ...         with open(os.path.join(base, "distance"), "w") as fh:
    ...             _ = fh.write(distance)
    ...     m = host(root)
    >>> m.cores, m.numa_of_core.tolist(), m.numa_latency.tolist()
    (4, [0, 0, 1, 1], [[100.0, 210.0], [210.0, 100.0]])
    >>> m.hop_cycles, m.meta["cpus"]
    (0.0, [0, 1, 2, 3])
    """
    cpu_dir = os.path.join(sys_root, "devices", "system", "cpu")
    node_dir = os.path.join(sys_root, "devices", "system", "node")
    try:
        with open(os.path.join(cpu_dir, "online")) as fh:
            cpus = _cpulist(fh.read())
    except OSError:
        raise InputError(f"cannot read {cpu_dir}/online: the host topology is not available; "
                         "use table2:P or a machine file") from None
    nodes = sorted(int(d[4:]) for d in (os.listdir(node_dir) if os.path.isdir(node_dir) else [])
                   if d.startswith("node") and d[4:].isdigit())
    index = {c: k for k, c in enumerate(cpus)}
    node_of = np.zeros(len(cpus), dtype=np.int32)
    dist = np.array([[10.0]])
    if nodes:
        dist = np.empty((len(nodes), len(nodes)))
        for a, nd in enumerate(nodes):
            base = os.path.join(node_dir, f"node{nd}")
            with open(os.path.join(base, "cpulist")) as fh:
                for c in _cpulist(fh.read()):
                    if c in index:
                        node_of[index[c]] = a
            with open(os.path.join(base, "distance")) as fh:
                row = [float(x) for x in fh.read().split()]
            if len(row) != len(nodes):
                raise InputError(f"{base}/distance lists {len(row)} distances for {len(nodes)} nodes")
            dist[a] = row
    return Machine(name="host", cores=len(cpus), mesh_rows=1, mesh_cols=len(cpus),
                   numa_of_core=node_of, numa_latency=MEMORY_CYCLES * dist / 10.0,
                   core_speed=np.ones(len(cpus)), hop_cycles=0.0,
                   meta={"source": sys_root, "cpus": cpus})


def hwloc_xml(path):
    """A machine from hwloc's XML (``lstopo --of xml``): PUs, NUMA nodes, latencies.

    PUs are numbered in document order; a PU belongs to the NUMA node that is
    its ancestor or the NUMA node attached to one of its ancestors (hwloc 2
    puts memory children beside the cores they serve). Latencies come from a
    ``distances2`` element of NUMA nodes (``name="NUMALatency"``, hwloc 2) or
    a ``distances`` element (hwloc 1, ``latency`` values); without one, 10
    on the diagonal and 20 elsewhere (Linux's defaults).
    """

    check_input_file(path, "hwloc file")
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise InputError(f"hwloc file {path}: cannot read it as XML ({exc})") from None
    try:
        return _hwloc_machine(root, path)
    except (ValueError, TypeError, OverflowError) as exc:
        raise InputError(f"hwloc file {path}: an attribute is not a number ({exc}); "
                         "write it with 'lstopo --of xml'") from None
    except RecursionError:
        raise InputError(f"hwloc file {path}: the topology is nested too deeply") from None


def _hwloc_machine(root, path):
    numa_ids = []
    pus = []

    def walk(obj, node):
        kids = [c for c in obj if c.tag == "object"]
        attached = [c for c in kids if c.get("type") == "NUMANode"]
        if obj.get("type") == "NUMANode":
            node = int(obj.get("os_index", len(numa_ids)))
            numa_ids.append(node)
        elif attached:
            node = int(attached[0].get("os_index", 0))
            for a in attached:
                numa_ids.append(int(a.get("os_index", 0)))
        if obj.get("type") == "PU":
            pus.append((int(obj.get("os_index", len(pus))), node))
        for c in kids:
            if c.get("type") != "NUMANode" or obj.get("type") == "NUMANode":
                walk(c, node)

    top = root.find("object")
    if top is None:
        raise InputError(f"hwloc file {path}: no topology object; write it with 'lstopo --of xml'")
    walk(top, 0)
    if not pus:
        raise InputError(f"hwloc file {path}: the topology lists no processing units (PU)")
    nodes = sorted(set(numa_ids) | {n for _, n in pus})
    index = {n: k for k, n in enumerate(nodes)}
    k = len(nodes)
    dist = np.where(np.eye(k, dtype=bool), 10.0, 20.0)
    for el in root.iter():
        vals = None
        if el.tag == "distances2" and el.get("type") == "NUMANode" and \
                "latency" in (el.get("name") or "NUMALatency").lower():
            v = el.find("u64values")
            vals = [float(x) for x in v.text.split()] if v is not None and v.text else None
        elif el.tag == "distances" and el.get("relative_depth") is not None:
            vals = [float(x.get("value")) for x in el if x.tag == "latency"]
        if vals and len(vals) == k * k:
            dist = np.array(vals).reshape(k, k)
            if not np.all(np.isfinite(dist)) or (dist <= 0).any():
                raise InputError(f"hwloc file {path}: NUMA latencies must be positive numbers")
            dist = 10.0 * dist / dist.diagonal().min()
            break
    cpus = [c for c, _ in pus]
    _check_cores(len(pus))
    return Machine(name="hwloc", cores=len(pus), mesh_rows=1, mesh_cols=len(pus),
                   numa_of_core=np.array([index[n] for _, n in pus], dtype=np.int32),
                   numa_latency=MEMORY_CYCLES * dist / 10.0, core_speed=np.ones(len(pus)),
                   hop_cycles=0.0, meta={"source": str(path), "cpus": cpus})


_FIELDS = {"name", "cores", "mesh", "clock_ghz", "hop_cycles", "link_bytes_per_cycle", "numa",
           "core_speed", "cache", "memory", "issue_window", "branch_cycles"}


def _num(where, value, positive=True, integer=False, largest=MAX_COUNT):
    """``positive``: True (> 0), False (>= 0); integers at most ``largest``."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and isinstance(value, float):
        ok = math.isfinite(value) and (not integer or value.is_integer())
    if ok:
        ok = value > 0 if positive else value >= 0
    if not ok:
        kind = ("a positive integer" if integer else
                "a positive number" if positive else "a number >= 0")
        raise InputError(f"{where} must be {kind}, got {value!r:.60}")
    limit = largest if integer else 1e300
    if value > limit:
        raise InputError(f"{where} must be at most {limit}, got {value!r:.60}")
    return int(value) if integer else float(value)


def machine_from_dict(d, where="machine file"):
    """Build a `Machine` from the JSON structure of a machine file.

    Fields: ``cores`` (required), ``mesh`` [rows, cols] (default: as Table 2),
    ``name``, ``clock_ghz``, ``hop_cycles``, ``link_bytes_per_cycle``,
    ``numa`` {``node_of_core``: [...], ``latency_cycles``: square matrix},
    ``core_speed`` [...], ``issue_window`` (tasks), ``branch_cycles`` (the
    branch-resolution latency), ``cache`` {``l1_bytes``,
    ``l1_ways``, ``l2_bytes``, ``block_bytes``}, ``memory`` {``bytes_per_node``:
    [...], ``bandwidth_gbs``}. Unknown fields are refused (a typo would
    otherwise be ignored). The fields not given are those of `table2` for the
    same cores and mesh (the name too: ``table2:P`` or ``mesh:RxC``); giving
    ``numa`` resets the memory to 4 GB shared equally by its nodes (unless
    ``memory`` gives ``bytes_per_node``), ``node_of_core`` defaults to node 0
    for every core and ``latency_cycles`` to ``[[100]]``.

    Every value is checked: counts and sizes are positive integers (at most
    ``2**31 - 1``; bytes per node at most ``2**62``), ``clock_ghz``,
    ``link_bytes_per_cycle``, speeds and bandwidth positive numbers,
    ``hop_cycles`` and ``branch_cycles`` numbers >= 0, latencies a square matrix of positive
    numbers, lists of the right length.

    Parameters
    ----------
    d : dict
        The parsed JSON object.
    where : str, default "machine file"
        What the errors name (`load_machine` gives ``"machine file PATH"``);
        also kept as ``meta["source"]``.

    Returns
    -------
    Machine

    Raises
    ------
    InputError
        Not an object, an unknown field, no ``cores``, or a value of the wrong
        type, sign, size or length (the message names the field and the value).

    See Also
    --------
    load_machine : reads a machine file.
    Machine.to_dict : the same structure from a machine.

    Examples
    --------
    Four cores in a row, one hop a cycle, two NUMA nodes:

    >>> from mapping import machine_from_dict
    >>> m = machine_from_dict({"cores": 4, "mesh": [1, 4], "hop_cycles": 1,
    ...                        "numa": {"node_of_core": [0, 0, 1, 1],
    ...                                 "latency_cycles": [[100, 150], [150, 100]]}})
    >>> m.name, m.hop_cycles, m.numa_of_core.tolist(), m.numa_latency.tolist()
    ('mesh:1x4', 1.0, [0, 0, 1, 1], [[100.0, 150.0], [150.0, 100.0]])
    >>> m.clock_ghz, m.memory_bytes.tolist()  # Table 2's clock; 4 GB over 2 nodes
    (2.4, [2147483648, 2147483648])
    >>> machine_from_dict({"cores": 4, "hops": 1})
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: machine file: unknown field 'hops'; known fields: branch_cycles, cache, ...
    >>> machine_from_dict({"cores": 4, "clock_ghz": -1})
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: machine file: field 'clock_ghz' must be a positive number, got -1
    """
    if not isinstance(d, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(d).__name__}")
    unknown = sorted(set(d) - _FIELDS)
    if unknown:
        raise InputError(f"{where}: unknown field {quoted(unknown[0])}; known fields: {', '.join(sorted(_FIELDS))}")
    if "cores" not in d:
        raise InputError(f"{where}: field 'cores' is required")
    p = _num(f"{where}: field 'cores'", d["cores"], integer=True)
    mesh = d.get("mesh")
    if mesh is not None:
        if not (isinstance(mesh, list) and len(mesh) == 2):
            raise InputError(f"{where}: field 'mesh' must be [rows, cols], got {quoted(mesh)}")
        rows = _num(f"{where}: field 'mesh' rows", mesh[0], integer=True)
        cols = _num(f"{where}: field 'mesh' cols", mesh[1], integer=True)
        if rows * cols != p:
            raise InputError(f"{where}: field 'mesh' {rows} x {cols} has {rows * cols} cores, "
                             f"but 'cores' is {p}")
        base = table2(p, (rows, cols))
    else:
        base = table2(p)
    kw = dict(base.__dict__)
    kw["name"] = str(d.get("name", base.name))
    for key in ("clock_ghz", "hop_cycles", "link_bytes_per_cycle", "branch_cycles"):
        if key in d:
            kw[key] = _num(f"{where}: field {key!r}", d[key],
                           positive=key not in ("hop_cycles", "branch_cycles"))
    if "issue_window" in d:
        kw["issue_window"] = _num(f"{where}: field 'issue_window'", d["issue_window"], integer=True)
    if "core_speed" in d:
        sp = d["core_speed"]
        if not isinstance(sp, list) or len(sp) != p:
            raise InputError(f"{where}: field 'core_speed' must list {p} speeds, got {quoted(sp)}")
        kw["core_speed"] = np.array([_num(f"{where}: core_speed[{i}]", s) for i, s in enumerate(sp)])
    if "numa" in d:
        nm = d["numa"]
        if not isinstance(nm, dict) or set(nm) - {"node_of_core", "latency_cycles"}:
            raise InputError(f"{where}: field 'numa' must be {{'node_of_core': [...], "
                             f"'latency_cycles': [[...]]}}, got {quoted(nm)}")
        try:
            lat = np.asarray(nm.get("latency_cycles", [[MEMORY_CYCLES]]), dtype=float)
        except (TypeError, ValueError, OverflowError):
            lat = np.zeros(0)
        if lat.ndim != 2 or lat.shape[0] != lat.shape[1] or not np.all(np.isfinite(lat)) or (lat <= 0).any():
            raise InputError(f"{where}: numa 'latency_cycles' must be a square matrix of positive "
                             f"numbers, got {quoted(nm.get('latency_cycles'))}")
        node = nm.get("node_of_core", [0] * p)
        if not isinstance(node, list) or len(node) != p:
            raise InputError(f"{where}: numa 'node_of_core' must list {p} nodes, got {quoted(node)}")
        for i, v in enumerate(node):
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < lat.shape[0]:
                raise InputError(f"{where}: numa node_of_core[{i}] = {quoted(v)} is not a node "
                                 f"0..{lat.shape[0] - 1}")
        kw["numa_of_core"] = np.array(node, dtype=np.int32)
        kw["numa_latency"] = lat
        kw["memory_bytes"] = np.full(lat.shape[0], (4 << 30) // lat.shape[0])
    if "cache" in d:
        cache = d["cache"]
        if not isinstance(cache, dict):
            raise InputError(f"{where}: field 'cache' must be an object, got {quoted(cache)}")
        for key in cache:
            if key not in ("l1_bytes", "l1_ways", "l2_bytes", "block_bytes"):
                raise InputError(f"{where}: unknown cache field {quoted(key)}")
            kw[key] = _num(f"{where}: cache {key!r}", cache[key], integer=True)
    if "memory" in d:
        mem = d["memory"]
        if not isinstance(mem, dict):
            raise InputError(f"{where}: field 'memory' must be an object, got {quoted(mem)}")
        if "bandwidth_gbs" in mem:
            kw["memory_bandwidth_gbs"] = _num(f"{where}: memory 'bandwidth_gbs'", mem["bandwidth_gbs"])
        if mem.get("bytes_per_node") is not None:
            bpn = mem["bytes_per_node"]
            if not isinstance(bpn, list) or len(bpn) != kw["numa_latency"].shape[0]:
                raise InputError(f"{where}: memory 'bytes_per_node' must list "
                                 f"{kw['numa_latency'].shape[0]} sizes, got {quoted(bpn)}")
            kw["memory_bytes"] = np.array([_num(f"{where}: bytes_per_node[{i}]", b, integer=True,
                                                largest=2**62) for i, b in enumerate(bpn)])
    kw["meta"] = {"source": where}
    return Machine(**kw)


def load_machine(spec):
    """A machine from ``table2:P``, ``mesh:RxC``, ``host``, ``hwloc:FILE.xml`` or a JSON file.

    The specs of the command line's ``--machine``: ``table2:P`` is `table2`
    with ``P`` cores, ``mesh:RxC`` the same machine on an ``R x C`` mesh,
    ``host`` this computer (`host`), ``hwloc:FILE.xml`` a topology written by
    ``lstopo --of xml`` (`hwloc_xml`), and any other spec the path of a
    UTF-8 JSON machine file (`machine_from_dict`, at most 64 MiB).

    Parameters
    ----------
    spec : str or path-like
        The machine's spec.

    Returns
    -------
    Machine

    Raises
    ------
    InputError
        A spec without a valid core count or mesh, a file that does not exist
        or cannot be read, is not UTF-8 JSON, or is not a valid machine (the
        message names the field); the errors of `table2`, `host` and
        `hwloc_xml`.

    Examples
    --------
    >>> from mapping import load_machine
    >>> m = load_machine("mesh:2x3")
    >>> m.name, m.cores, m.mesh_rows, m.mesh_cols
    ('mesh:2x3', 6, 2, 3)
    >>> load_machine("table2:8").mesh_cols
    4

    A machine file (written to a temporary directory):

    >>> import json, os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "slow.json")
    ...     with open(path, "w") as fh:
    ...         json.dump({"name": "slow", "cores": 4, "clock_ghz": 1.0}, fh)
    ...     m = load_machine(path)
    >>> m.name, m.cores, m.clock_ghz, m.mesh_rows
    ('slow', 4, 1.0, 2)
    >>> load_machine("mesh:4")
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: machine 'mesh:4': give the mesh as mesh:RxC, e.g. mesh:4x4
    """
    spec = str(spec)
    if spec == "host":
        return host()
    if spec.startswith("hwloc:"):
        return hwloc_xml(spec.split(":", 1)[1])
    if spec.startswith("table2:"):
        try:
            return table2(int(spec.split(":", 1)[1]))
        except ValueError:
            raise InputError(f"machine {spec!r}: give the core count, e.g. table2:64") from None
    if spec.startswith("mesh:"):
        try:
            rows, cols = (int(x) for x in spec.split(":", 1)[1].lower().split("x"))
        except ValueError:
            raise InputError(f"machine {spec!r}: give the mesh as mesh:RxC, e.g. mesh:4x4") from None
        if rows < 1 or cols < 1:
            raise InputError(f"machine {spec!r}: mesh sides must be positive")
        return table2(rows * cols, (rows, cols))
    if not os.path.exists(spec):
        raise InputError(f"machine {spec!r}: not table2:P, mesh:RxC or host, and no such file")
    data = read_input(spec, "machine file", limit=64 << 20)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"machine file {spec}: not UTF-8 text (byte {exc.start}); "
                         "write it as UTF-8 JSON") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"machine file {spec}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise InputError(f"machine file {spec}: JSON nested too deeply") from None
    return machine_from_dict(data, f"machine file {spec}")
