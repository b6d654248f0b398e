"""What `vcut partition` of an edge list imports: no more than it needs (issue 13).

Start-up is a good part of a whole ``vcut partition`` run, so the packages import
their submodules when first used. numba itself imports llvmlite; its BLAS check at
start-up, which imported ``scipy.linalg`` and through scipy's array-API layer
``numpy.f2py`` and ``numpy.testing``, waits until numba reads its flag
(`vcut_base.jitcache.start_target`). The partitioner's Eq. 10 exponent needs neither
``scipy.special`` (`ir_graph.zeta`) nor ``scipy.optimize`` (`ir_graph.stats._fminbound`).
"""

import json
import subprocess
import sys

#: Imported by none of the steps of ``vcut partition GRAPH.edgelist -o OUT``.
NOT_NEEDED = ("networkx", "matplotlib", "rich", "tqdm", "numba.cuda", "numba_cuda", "pymetis",
              "kahip", "mtkahypar", "scipy.optimize", "scipy.special", "scipy.linalg",
              "numpy.f2py", "numpy.testing", "frontend.api", "frontend.compile",
              "frontend.instrument", "frontend.run", "frontend.trace", "ir_graph.build",
              "mapping")

RUN = """
import json, sys
from vcut.cli import main
code = main(["partition", sys.argv[1], "-p", "2", "-o", sys.argv[2]])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def test_partition_of_an_edge_list_imports_only_what_it_needs(tmp_path):
    graph = tmp_path / "g.edgelist"
    graph.write_text("0 1\n1 2\n2 3\n3 0\n0 2\n")
    done = subprocess.run([sys.executable, "-c", RUN, str(graph), str(tmp_path / "g.part")],
                          capture_output=True, text=True, check=True)
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["code"] == 0
    assert len((tmp_path / "g.part").read_text().splitlines()) == 5
    loaded = set(result["modules"])
    assert sorted(loaded & set(NOT_NEEDED)) == []
