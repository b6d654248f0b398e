"""HASS and its baselines over the workers of a Dask cluster (`runtime.scheduler.workers`):
each worker's CPU and GPU resource as devices, the job's result equal to its plain
reference, a worker killed mid-round losing nothing, the command line on a cluster."""

import json
import os
import time

import numpy as np
import pytest

from vcut_base.errors import InputError
from runtime.scheduler import schedule
from runtime.scheduler.device_specs import parse_devices
from runtime.scheduler.jobs import StringSearch
from runtime.scheduler.workers import WorkerDevice, worker_devices
from vcut.cli import main


def local_cluster(**kw):
    from distributed import LocalCluster

    kw.setdefault("processes", False)
    return LocalCluster(dashboard_address=":0", silence_logs=40, **kw)


def test_each_worker_is_a_cpu_device(dask_client):
    devices = parse_devices("dask", dask_client)
    names = sorted(dask_client.scheduler_info()["workers"][a]["name"]
                   for a in dask_client.nthreads())
    assert [d.name for d in devices] == [f"dask:{n}:cpu" for n in names]
    assert all(d.kind == "cpu" and not d.simulated for d in devices)
    assert {d.describe()["worker"] for d in devices} == set(dask_client.nthreads())


@pytest.mark.parametrize("policy", ["hass", "min-min", "greedy"])
def test_policies_over_the_workers_give_the_reference(dask_client, policy):
    job = StringSearch.generate(300_000, n_units=48, seed=5)
    r = schedule(job, "dask", policy, rounds=3, client=dask_client)
    assert job.same(r.result, job.reference())
    assert not r.virtual and r.faults == ()
    assert sum(r.units.values()) == job.n_units
    assert set(r.units) == {d.name for d in parse_devices("dask", dask_client)}
    # every call ran on the worker its device names
    assert {s.device for s in r.spans} <= set(r.units)


def test_gpu_resources_are_gpu_devices():
    from distributed import Client

    job = StringSearch(b"xxabcxabcxxxabc" * 40, b"abc", 12)
    with local_cluster(n_workers=1, threads_per_worker=2, resources={"GPU": 1}) as cluster, \
            Client(cluster) as client:
        devices = parse_devices("dask", client)
        assert [(d.name, d.kind) for d in devices] == [("dask:0:cpu", "cpu"),
                                                        ("dask:0:gpu:0", "gpu")]
        r = schedule(job, devices, "hass", rounds=2)
        assert job.same(r.result, job.reference())
        # the GPU profiled first (its sample: one call of one sub-load, a tenth of an
        # even share rounded up); after that, its share of a round went as at most one
        # bundle (none when its model left it no whole sub-load: a timing, so idle, it
        # stole from the CPU buffer instead), one launch per call
        gpu = [s for s in r.spans if s.device == "dask:0:gpu:0"]
        assert [(s.what, s.units) for s in gpu[:1]] == [("profile", 1)]
        assert {s.what for s in gpu[1:]} <= {"bundle", "steal"}
        for rnd in {s.round for s in gpu}:
            assert sum(s.what == "bundle" for s in gpu if s.round == rnd) <= 1
        # (calls: one more than the spans, the untimed warm-up call of a real device)
        assert devices[1].launches == devices[1].calls == len(gpu) + 1 >= 2
    # a worker whose threads all drive GPUs has no CPU device
    with local_cluster(n_workers=1, threads_per_worker=1, resources={"GPU": 1}) as cluster, \
            Client(cluster) as client:
        assert [d.name for d in worker_devices(client)] == ["dask:0:gpu:0"]


class KillsItsWorker(StringSearch):
    """A string search whose sub-load ``trigger`` kills the worker process running it,
    once (``marker``: a file made just before)."""

    def __init__(self, text, pattern, n_units, trigger, marker):
        super().__init__(text, pattern, n_units)
        self.trigger, self.marker = trigger, marker

    def run_cpu(self, units):
        if self.trigger in units.tolist() and not os.path.exists(self.marker):
            from distributed import get_worker

            get_worker()  # raises ValueError outside a worker: the driver never dies
            open(self.marker, "w").close()
            os._exit(1)
        return super().run_cpu(units)


def test_a_worker_killed_mid_round_loses_nothing(dask_client, tmp_path):
    base = StringSearch.generate(200_000, n_units=64, seed=9)
    marker = str(tmp_path / "killed")
    job = KillsItsWorker(base.text, base.pattern, 64, 40, marker)
    try:
        r = schedule(job, "dask", "hass", rounds=4, client=dask_client)
        assert os.path.exists(marker)
        assert job.same(r.result, base.reference())
        assert len(r.faults) == 1 and r.faults[0].device.startswith("dask:")
        assert "left the cluster" in r.faults[0].error
        assert sum(r.units.values()) == 64
        # the dead worker ran nothing after its fault
        dead = r.faults[0]
        assert all(s.end <= dead.time for s in r.spans if s.device == dead.device)
    finally:
        deadline = time.time() + 60  # the nanny brings the worker back for the next tests
        while len(dask_client.nthreads()) < 2 and time.time() < deadline:
            time.sleep(0.2)


def test_cli_on_a_cluster_by_address(dask_client, capsys):
    address = dask_client.scheduler.address
    rc = main(["schedule", "--job", "string-search", "--size", "200000", "--units", "24",
               "--rounds", "2", "--scheduler", address, "--check", "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["matches_reference"] is True
    (result,) = doc["results"]
    assert sorted(result["units"]) == sorted(d.name for d in parse_devices("dask", dask_client))
    assert sum(result["units"].values()) == 24


@pytest.mark.parametrize("argv, message", [
    (["--devices", "cpu", "--workers", "2"], "add dask to --devices"),
    (["--devices", "dask,bogus", "--workers", "1"], "unknown device 'bogus'"),
    (["--devices", "dask", "--scheduler", "localhost:1"], "not a Dask scheduler address"),
])
def test_cli_bad_cluster_options(capsys, argv, message):
    rc = main(["schedule", "--job", "matmul", "--size", "8"] + argv)
    assert rc == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_api_bad_input(dask_client):
    from distributed import Client

    with pytest.raises(InputError, match="--workers N"):
        parse_devices("dask")
    with pytest.raises(InputError, match="dask appears twice"):
        parse_devices("dask,dask", dask_client)
    with local_cluster(n_workers=0) as cluster, Client(cluster) as client:
        with pytest.raises(InputError, match="no workers"):
            worker_devices(client)


def test_a_job_that_raises_on_a_worker_is_a_fault(dask_client):
    class Broken(StringSearch):
        def run_cpu(self, units):
            raise RuntimeError("broken sub-load")

    job = Broken(b"abcabc", b"abc", 2)
    device = parse_devices("dask", dask_client)[0]
    assert isinstance(device, WorkerDevice)
    from runtime.scheduler import DeviceFault

    with pytest.raises(DeviceFault, match="broken sub-load"):
        device.execute(job, np.arange(1))
