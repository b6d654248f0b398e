"""The scheduler (HASS, min-min, greedy, Qilin) on simulated devices with a toy job.

Simulated devices charge the time of a known model, so the expectations below
(true shares, ideal makespans) are derived by hand from that model.
"""

import numpy as np
import pytest

from frontend.errors import InputError
from runtime.scheduler import (CpuDevice, SchedulingError, SimDevice, parse_devices, schedule)
from runtime.scheduler.hass import distribute
from runtime.scheduler.jobs.base import Job
from runtime.scheduler.profiler import (EXTRAPOLATE, call_model, fit_call_time, ideal_split,
                                        split_by_models)

W = 1e6  # work per sub-load: 1 ms on a speed-1 device (rate 1e9)


class Toy(Job):
    """Sub-load u computes u * u + 1; nothing moves but what the model says."""
    kind = "toy"

    def __init__(self, n, gpu=True, nbytes=0.0, setup=0):
        self.n_units, self.gpu_capable, self.nbytes, self.setup = n, gpu, nbytes, setup

    def unit_work(self):
        return W

    def unit_bytes(self):
        return self.nbytes

    def setup_bytes(self):
        return self.setup

    def run_cpu(self, units):
        return [u * u + 1 for u in units.tolist()]

    def combine(self, results):
        return [results[u] for u in range(self.n_units)]

    def reference(self):
        return [u * u + 1 for u in range(self.n_units)]


def clean(kind, name, speed, **kw):
    """A simulated device with no costs but those given."""
    base = dict(overhead=0, latency=0, launch=0, saturation=0, bandwidth=1e30) \
        if kind == "gpu" else dict(overhead=0)
    base.update(kw)
    return SimDevice(kind, name=name, speed=speed, **base)


def devices_135(launch=0.0, saturation=0.0):
    return [clean("cpu", "cpu", 1), clean("gpu", "g3", 3, launch=launch, saturation=saturation),
            clean("gpu", "g5", 5, launch=launch, saturation=saturation)]


def test_distribute_floors_then_caps():
    # shares 0.5, 0.3, 0.2 of 7: 3.5, 2.1, 1.4 -> floors 3, 2, 1; the one left ends at
    # 4 / 0.5 = 8 on "a", 3 / 0.3 = 10 on "b", 2 / 0.2 = 10 on "c": to "a". Caps apply last
    assert distribute({"a": 0.5, "b": 0.3, "c": 0.2}, 7) == {"a": 4, "b": 2, "c": 1}
    assert distribute({"a": 0.5, "b": 0.5}, 9, {"a": 2}) == {"a": 2, "b": 4}


def test_distribute_gives_each_sub_load_where_it_ends_first():
    # rates 0.145 : 0.855, 12 sub-loads: floors 1 and 10; the 12th ends at 2 / 0.145 = 13.8
    # on "c" and at 11 / 0.855 = 12.9 on "g": to "g" (largest remainder gave it to "c",
    # whose 0.74 is the larger fraction, and the round ended at 13.8)
    assert distribute({"c": 0.145, "g": 0.855}, 12) == {"c": 1, "g": 11}
    assert distribute({"c": 0.0, "g": 1.0}, 5) == {"c": 0, "g": 5}


def test_fit_call_time():
    # exact on two sizes and more; one size, or noise that makes a < 0 or b <= 0: a = 0
    assert fit_call_time([(1, 3.0), (2, 5.0), (4, 9.0)]) == pytest.approx((1.0, 2.0))
    assert fit_call_time([(2, 4.0), (2, 6.0)]) == pytest.approx((0.0, 2.5))
    assert fit_call_time([(1, 5.0), (2, 4.0)]) == pytest.approx((0.0, 3.0))    # b < 0
    assert fit_call_time([(1, 1.0), (3, 5.0)]) == pytest.approx((0.0, 1.5))    # a = -1


def test_split_by_models_is_the_equal_finish_split():
    # a + b n: (0, 1), (2, 0.5), (10, 1): T = 6 gives 6 + 8 + 0 = 14 sub-loads; the third
    # device, whose fixed cost is past T, gets none
    ratios = split_by_models({"x": (0.0, 1.0), "y": (2.0, 0.5), "z": (10.0, 1.0)}, 14)
    assert ratios["x"] == pytest.approx(6 / 14) and ratios["y"] == pytest.approx(8 / 14)
    assert ratios["z"] == 0.0
    # y trusted up to 4 sub-loads (T = 4), then 4 / 4 = 1 a sub-load: T + 4 + (T - 4) = 14
    ratios = split_by_models({"x": (0.0, 1.0), "y": (2.0, 0.5, 4)}, 14)
    assert ratios["x"] == pytest.approx(7 / 14) and ratios["y"] == pytest.approx(7 / 14)


def test_ideal_split_matches_the_closed_form():
    # x_c = T r_c / W, x_k = (T - L) r_k / W, sum m  =>  T = (m W + L (r3 + r5)) / (r1 + r3 + r5)
    L, m, r = 2e-3, 90, 1e9
    T = (m * W + L * 8 * r) / (9 * r)
    t, shares = ideal_split(devices_135(L), Toy(m), m)
    assert t == pytest.approx(T, rel=1e-9)
    assert shares["cpu"] == pytest.approx(T * r / W / m, rel=1e-6)
    assert shares["g5"] == pytest.approx((T - L) * 5 * r / W / m, rel=1e-6)


def test_hass_converges_to_the_true_shares_by_round_6():
    # a GPU is full from 4 sub-loads on: its profile calls (2 and 1 sub-loads) cost the
    # same, so the fit sees no per-sub-load time and the round-0 split is far off (g3 far
    # underestimated); the GPUs steal, and round 0's calls put the models right
    L, m, r = 2e-3, 300, 1e9
    job = Toy(12 * m)
    res = schedule(job, devices_135(L, saturation=4 * W), "hass", rounds=12, profile_units=1)
    assert res.result == job.reference()
    T = (m * W + L * 8 * r) / (9 * r)
    true = {"cpu": T * r / W / m, "g3": (T - L) * 3 * r / W / m, "g5": (T - L) * 5 * r / W / m}
    first = res.rounds[0]["assigned"]
    assert first["g3"] < true["g3"] - 0.1          # it did start far off
    for rnd in res.rounds[5:]:                     # round 6 onwards
        for d, share in true.items():
            assert abs(rnd["executed"][d] - share) <= 0.02
        assert rnd["makespan"] <= 1.05 * T
    assert res.final_round is not None and res.final_round <= 5


def test_the_profile_fits_a_launch_cost():
    # 1 : 3 : 5 with a 2 ms launch a GPU call and nothing else: a GPU's sample calls of 2
    # and 1 sub-loads take L + 2 W / r and L + W / r, whose fit is a = L, b = W / r,
    # trusted up to EXTRAPOLATE x 2 sub-loads; from round 1 on (round 0's bundles seen)
    # each round gets the ideal split, within a sub-load
    L, m, r = 2e-3, 300, 1e9
    res = schedule(Toy(3 * m), devices_135(L), "hass", rounds=3, profile_units=1)
    for g, speed in (("g3", 3), ("g5", 5)):
        calls = [(s.units, s.end - s.start) for s in res.spans
                 if s.device == g and s.what == "profile"][:2]
        assert [n for n, _ in calls] == [2, 1]
        a, b, cap = call_model(calls)
        assert a == pytest.approx(L) and b == pytest.approx(W / (speed * r))
        assert cap == 2 * EXTRAPOLATE
    # the run's models, reported: every call but each device's first (the CPU's: 1 ms)
    models = res.info["models"]
    assert models["cpu"]["call_seconds"] == 0.0
    assert models["cpu"]["seconds_per_subload"] == pytest.approx(W / r)
    assert models["g5"]["call_seconds"] == pytest.approx(L)
    assert models["g5"]["seconds_per_subload"] == pytest.approx(W / (5 * r))
    T, shares = ideal_split(devices_135(L), Toy(m), m)
    for rnd in res.rounds[1:]:
        assert rnd["stolen"] == {"cpu": 0, "g3": 0, "g5": 0}
        for d, share in shares.items():
            assert abs(rnd["assigned"][d] - share) * m <= 1
        assert rnd["makespan"] <= T + W / r    # a CPU sub-load at most


def test_no_device_idles_through_profiling():
    # the GPU's sample (2 and 1 sub-loads at 5 ms a launch + 0.2 ms a sub-load) ends at
    # 10.6 ms; the CPU (1 ms a sub-load) starts a call while it runs: 11 calls, the last
    # from 10 to 11 ms, when profiling ends
    devs = [clean("cpu", "cpu", 1), clean("gpu", "g", 5, launch=5e-3)]
    res = schedule(Toy(200), devs, "hass", rounds=2, profile_units=1)
    prof = [s for s in res.spans if s.what == "profile"]
    assert [s.units for s in prof if s.device == "g"] == [2, 1]
    assert max(s.end for s in prof if s.device == "g") == pytest.approx(10.6e-3)
    assert [s.units for s in prof if s.device == "cpu"] == [1] * 11
    assert res.profiling_seconds == pytest.approx(11e-3)
    assert res.result == Toy(200).reference()


def test_a_setup_transfer_is_not_a_per_call_cost():
    # CPU 1 ms a sub-load; GPU 0.25 ms a sub-load, 1 ms a launch, and a 3 ms setup
    # transfer (3 MB at 1 GB/s) in its first call. k = 2: the GPU's sample is 4 sub-loads
    # (3 + 1 + 1 = 5 ms), then 2 (1 + 0.5 = 1.5 ms), to 6.5 ms; the CPU runs 7 sub-loads
    # meanwhile, to 7 ms. Less its setup the first call took 2 ms: the fit is exact,
    # 1 ms + 0.25 ms a sub-load, trusted to 16 sub-loads, past which a sub-load costs
    # 1 / 16 + 0.25 ms. (With the setup counted it would be -2 ms + 1.75 ms a sub-load,
    # a fixed cost below 0: the 2 sub-load call alone would give 0.75 ms a sub-load.)
    # The 87 sub-loads left split where T = n_c x 1 ms = 5 ms + (n_g - 16) x 0.3125 ms:
    # 20.71 / 66.29, dealt 20 / 67 (the 87th ends first on the GPU: 67 / 0.762 < 21 /
    # 0.238). The bundle (1 + 16.75 ms) ends at 24.75 ms; the CPU has 2 left in its
    # buffer (2 ms), a steal takes 1.25 ms: the GPU steals one, to 26 ms, when the CPU
    # ends its last.
    devs = [clean("cpu", "cpu", 1), clean("gpu", "g", 4, launch=1e-3, bandwidth=1e9)]
    res = schedule(Toy(200, setup=3e6), devs, "hass", rounds=2, profile_units=2)
    assert res.result == Toy(200).reference()
    prof = [(s.units, s.end - s.start) for s in res.spans if s.what == "profile" and s.device == "g"]
    assert [n for n, _ in prof] == [4, 2]
    assert [t for _, t in prof] == [pytest.approx(5e-3), pytest.approx(1.5e-3)]
    assert res.profiling_seconds == pytest.approx(7e-3)
    assert res.rounds[0]["units"] == 87
    assert res.rounds[0]["assigned"]["g"] == pytest.approx(67 / 87)
    bundle = [s for s in res.spans if s.round == 0 and s.what == "bundle"]
    assert [(s.units, s.end) for s in bundle] == [(67, pytest.approx(24.75e-3))]
    assert res.rounds[0]["stolen"]["g"] == 1
    assert res.rounds[0]["makespan"] == pytest.approx(26e-3)
    assert res.info["models"]["g"]["call_seconds"] == pytest.approx(1e-3)
    assert res.info["models"]["g"]["seconds_per_subload"] == pytest.approx(0.25e-3)


def test_the_round_after_profiling_is_split_by_the_models_not_by_round_0s_shares():
    # CPU 1 ms a sub-load; GPU 0.25 ms a sub-load and 5 ms a launch; rounds of 40, k = 2.
    # The GPU's sample, 4 then 2 sub-loads (6 + 5.5 ms), ends at 11.5 ms: model (5 ms,
    # 0.25 ms), exact. The CPU runs 12 meanwhile, to 12 ms. The 22 left split where
    # n_c = 5 + 0.25 n_g: 8.4 / 13.6, dealt 8 / 14 (the 22nd ends first on the GPU:
    # 14 / 0.618 < 9 / 0.382); both end near 20 ms (CPU 20, GPU 12 + 8.5 = 20.5): a
    # balanced round. Its shares, 8 : 14, would deal round 1 14 / 26 (CPU 14 ms, GPU
    # 11.5 ms; no steal pays), but with a fixed cost per call the shares of 22 sub-loads
    # are not those of 40: the models split 40 at 12 / 28, both ending at 12 ms (5 + 7).
    devs = [clean("cpu", "cpu", 1), clean("gpu", "g", 4, launch=5e-3)]
    res = schedule(Toy(80), devs, "hass", rounds=2, profile_units=2)
    assert res.result == Toy(80).reference()
    assert res.profiling_seconds == pytest.approx(12e-3)
    assert res.rounds[0]["units"] == 22
    assert res.rounds[0]["assigned"]["g"] == pytest.approx(14 / 22)
    assert res.rounds[0]["makespan"] == pytest.approx(20.5e-3)
    assert res.rounds[1]["assigned"] == {"cpu": pytest.approx(0.3), "g": pytest.approx(0.7)}
    assert res.rounds[1]["makespan"] == pytest.approx(12e-3)
    assert res.makespan == pytest.approx(32.5e-3)  # 34.5 ms with round 0's shares


def test_a_gpu_with_one_call_size_keeps_its_profiled_fixed_cost():
    # CPU 1 ms a sub-load; GPU 1 ms a sub-load and 20.25 ms a launch. k = 3: the GPU's
    # sample, 6 then 3 sub-loads (26.25 + 23.25 ms), ends at 49.5 ms: model (20.25 ms,
    # 1 ms). The CPU runs 50 sub-loads meanwhile, to 50 ms. The 15 left end sooner on the
    # CPU (15 ms) than a GPU call's launch: the GPU gets none. Idle at 50 ms, its calls
    # but the first have one size (3), which alone shows no fixed cost (7.75 ms a
    # sub-load); its profiled model says a steal takes 21.25 ms, more than the CPU needs
    # for the 14 in its buffer: no steal, and the round ends at 65 ms (a steal would end
    # at 71.25 ms).
    devs = [clean("cpu", "cpu", 1), clean("gpu", "g", 1, launch=20.25e-3)]
    res = schedule(Toy(74), devs, "hass", rounds=1, profile_units=3)
    assert res.result == Toy(74).reference()
    assert [s.units for s in res.spans if s.what == "profile" and s.device == "g"] == [6, 3]
    assert res.profiling_seconds == pytest.approx(50e-3)
    assert res.rounds[0]["units"] == 15
    assert res.rounds[0]["assigned"] == {"cpu": 1.0, "g": 0.0}
    assert res.stolen == 0
    assert res.units == {"cpu": 65, "g": 9}
    assert res.makespan == pytest.approx(65e-3)


def test_a_slow_gpu_profiles_while_the_cpu_runs_round_0_and_then_does_not_steal():
    # rounds of 20 sub-loads, k = 1. The GPU (speed 1, 50 ms a launch) samples 2 and 1
    # sub-loads: 52 and 51 ms, to 103 ms. Meanwhile the CPU (1 ms a sub-load) runs its
    # sample and the other 16 sub-loads of round 0: nothing is left to split (m = 0).
    # Models: CPU (0, 1 ms), GPU (50 ms, 1 ms): round 1's 20 sub-loads end at 20 ms on the
    # CPU, before the GPU's launch does, so the GPU gets no bundle and steals nothing (a
    # steal would take 51 ms while the CPU empties its buffer in 20 ms)
    devs = [clean("cpu", "cpu", 1), clean("gpu", "g", 1, launch=50e-3)]
    res = schedule(Toy(40), devs, "hass", rounds=2)
    assert res.result == Toy(40).reference()
    assert res.rounds[0]["units"] == 0
    assert res.profiling_seconds == pytest.approx(0.103)
    assert res.rounds[1]["assigned"] == {"cpu": 1.0, "g": 0.0}
    assert res.rounds[1]["stolen"] == {"cpu": 0, "g": 0}
    assert res.units == {"cpu": 37, "g": 3}
    assert res.makespan == pytest.approx(0.123)


def test_stealing_is_gpu_from_cpu_buffer_and_one_bundle_per_gpu_per_round():
    job = Toy(1200)
    devs = devices_135(2e-3, saturation=4 * W)   # underestimated GPUs (above): they steal
    res = schedule(job, devs, "hass", rounds=6, profile_units=1)
    assert res.stolen > 0
    kinds = {d.name: d.kind for d in devs}
    for s in res.spans:
        if s.what == "steal":
            assert kinds[s.device] == "gpu" and s.units == 1
        if kinds[s.device] == "cpu":
            assert s.what in ("profile", "unit") and s.units == 1
        if s.what == "profile":   # the sample: the CPU's calls of 1 sub-load, a GPU's 2, 1
            assert s.units in ((1,) if kinds[s.device] == "cpu" else (1, 2))
    for rnd in range(6):
        for g in ("g3", "g5"):
            bundles = [s for s in res.spans if s.round == rnd and s.device == g
                       and s.what == "bundle"]
            assert len(bundles) == 1
            assert res.rounds[rnd]["bundles"][g] == 1
    for d in devs[1:]:  # every GPU call is one transfer and one launch
        calls = [s for s in res.spans if s.device == d.name]
        assert d.launches == d.transfers == len(calls)


def launchy():
    """CPU 1 + GPUs 3 and 5 with launch, transfer and under-utilisation costs."""
    return [SimDevice("cpu", name="cpu", speed=1),
            SimDevice("gpu", name="g3", speed=3, saturation=4e6, launch=1e-3),
            SimDevice("gpu", name="g5", speed=5, saturation=4e6, launch=1e-3)]


def test_remote_cpus_take_guided_self_scheduling_chunks():
    devices = [clean("cpu", "w0", 1), clean("cpu", "w1", 2)]
    for d in devices:
        d.remote = True  # as a Dask worker's CPU: a round trip per call
    job = Toy(202)
    r = schedule(job, devices, "hass", rounds=1, profile_units=1)
    assert r.result == job.reference()
    calls = sorted((s for s in r.spans if s.what == "unit"), key=lambda s: (s.start, -s.units))
    # profiling: w1 (0.5 ms a sub-load) ends its sample while w0 (1 ms) still runs its own,
    # so it takes one more; w0 ends at 1 ms, when w1's second call also ends: 3 sub-loads
    assert [(s.device, s.units) for s in r.spans if s.what == "profile"] == \
        [("w1", 1), ("w0", 1), ("w1", 1)]
    left = 199  # the round's load less the three profiling sub-loads
    for s in calls:
        assert s.units == max(1, -(-left // 4))  # ceil(left / (2 x 2 CPUs)), in issue order
        left -= s.units
    assert left == 0 and len(calls) < 40
    # a local CPU still runs its buffer one sub-load at a time (Algorithm 3.1)
    r = schedule(job, [clean("cpu", "c", 1), clean("cpu", "c2", 2)], "hass", rounds=1,
                 profile_units=1)
    assert {s.units for s in r.spans if s.what == "unit"} == {1}


def test_hass_beats_min_min_and_greedy():
    job = Toy(3000)
    runs = {p: schedule(job, launchy(), p, rounds=10) for p in ("hass", "min-min", "greedy")}
    for p, res in runs.items():
        assert res.result == job.reference()
        assert sum(res.units.values()) == job.n_units
    assert runs["hass"].makespan < runs["min-min"].makespan
    assert runs["hass"].makespan < runs["greedy"].makespan
    assert runs["hass"].makespan <= 1.1 * runs["hass"].ideal


def qilin_pair():
    # the GPU is only full from 20 sub-loads (2e7 work) on: Qilin's smaller training run
    # (f N / 6 = f * 400 / 6 sub-loads) measures it right only for f >= 0.3
    return [clean("cpu", "cpu", 1), clean("gpu", "gpu", 5, saturation=2e7)]


def test_qilin_matches_hass_at_30_percent_and_loses_below():
    job = Toy(400)
    hass = schedule(job, qilin_pair(), "hass", rounds=8)
    last = hass.rounds[-1]["makespan"]
    ideal_round = ideal_split(qilin_pair(), job, 50)[0]     # 400 / 8 per round
    assert last <= 1.02 * ideal_round
    q30 = schedule(job, qilin_pair(), "qilin", rounds=8, training=0.3)
    assert q30.result == job.reference()
    assert q30.rounds[-1]["makespan"] == pytest.approx(last, rel=0.02)
    assert q30.training_seconds > 0 and q30.info["training_units"] == [20, 40]
    for f in (0.1, 0.2):
        q = schedule(job, qilin_pair(), "qilin", rounds=8, training=f)
        assert q.rounds[-1]["makespan"] > 1.02 * last


def test_qilin_refuses_two_gpus_and_hass_runs_two_and_four():
    job = Toy(400)
    with pytest.raises(SchedulingError, match="one CPU and one GPU.*1 CPU.*2 GPU"):
        schedule(job, devices_135(), "qilin", rounds=4)
    four = [clean("cpu", "cpu", 1)] + [clean("gpu", f"g{i}", 2 + i) for i in range(4)]
    for devs in (devices_135(), four):
        res = schedule(job, devs, "hass", rounds=4)
        assert res.result == job.reference()
        assert all(res.units[d.name] > 0 for d in devs)


@pytest.mark.parametrize("policy", ["hass", "min-min", "greedy", "qilin"])
def test_a_failing_device_loses_nothing(policy):
    job = Toy(600)
    gpu = SimDevice("gpu", name="bad", speed=4, fail=2)   # its 2nd call raises
    devs = [SimDevice("cpu", name="cpu", speed=1), gpu]
    res = schedule(job, devs, policy, rounds=5)
    assert res.result == job.reference()
    assert len(res.faults) == 1 and res.faults[0].device == "bad"
    assert "injected fault on call 2" in res.faults[0].error
    assert res.units["cpu"] + res.units["bad"] == job.n_units


def test_profiling_survives_two_samples_failing_while_the_third_device_runs():
    # HASS's round 0 gives each device a sample at once; "a" and "b" fail their first call
    # while "c" still runs its own: a's sample waits for c, then b's has no device without
    # a waiting sample (a StopIteration once) and is appended to the one waiting for c
    job = Toy(60)
    devs = [SimDevice("cpu", name="a", fail=1), SimDevice("gpu", name="c", speed=1),
            SimDevice("cpu", name="b", fail=1)]
    res = schedule(job, devs, "hass", rounds=3)
    assert res.result == job.reference()
    assert sorted(f.device for f in res.faults) == ["a", "b"]
    assert res.units["c"] == job.n_units


def test_every_device_failing_is_an_error():
    devs = [SimDevice("gpu", name="a", fail=1), SimDevice("gpu", name="b", fail=1)]
    with pytest.raises(SchedulingError, match="every device failed"):
        schedule(Toy(40), devs, "greedy", rounds=2)


def test_jobs_that_fit_no_device_are_refused_up_front():
    small = [SimDevice("gpu", name="g", memory=1000)]
    with pytest.raises(SchedulingError, match="fits none of the devices: g: one sub-load needs "
                                              "1,600 bytes, the device has 1,000"):
        schedule(Toy(10, nbytes=100, setup=1500), small, "hass", rounds=2)
    with pytest.raises(SchedulingError, match="g: toy has no GPU implementation"):
        schedule(Toy(10, gpu=False), [SimDevice("gpu", name="g")], "hass", rounds=2)
    # with a CPU beside it the GPU is left out and said so
    res = schedule(Toy(10, gpu=False), [SimDevice("cpu", name="c"), SimDevice("gpu", name="g")],
                   "hass", rounds=2)
    assert res.excluded == {"g": "toy has no GPU implementation"}
    assert res.units == {"c": 10}


def test_a_gpu_bundle_never_exceeds_its_memory():
    # 100 bytes a sub-load, 2,000 bytes of memory: at most 20 sub-loads a call
    devs = [clean("cpu", "cpu", 1), clean("gpu", "g", 50, memory=2000)]
    res = schedule(Toy(400, nbytes=100), devs, "hass", rounds=4)
    assert max(s.units for s in res.spans if s.device == "g") <= 20
    assert res.result == Toy(400).reference()


def test_real_cpu_with_simulated_gpu_on_the_wall_clock():
    job = Toy(60)
    res = schedule(job, [CpuDevice(), SimDevice("gpu", speed=2, saturation=0)], "hass", rounds=3)
    assert not res.virtual and res.result == job.reference()
    assert res.makespan > 0 and sum(res.units.values()) == 60


def test_device_specs():
    devs = parse_devices("cpu,sim:gpu:speed=5:launch=2e-4,sim:gpu")
    assert [d.name for d in devs] == ["cpu", "sim:gpu", "sim:gpu#2"]
    assert devs[1].model.speed == 5 and devs[1].model.launch == 2e-4
    bad = {"": "empty", "tpu": "unknown device 'tpu'", "sim:fpga": "sim:cpu or sim:gpu",
           "sim:gpu:speed": "not key=value", "sim:gpu:speed=x": "is not a number",
           "sim:gpu:colour=1": "unknown parameter 'colour'", "sim:gpu:speed=0": "positive",
           "gpu:x": "gpu:N", "cpu,cpu": "appears twice"}
    for spec, msg in bad.items():
        with pytest.raises(InputError, match=msg):
            parse_devices(spec)


def test_bad_policy_and_rounds():
    with pytest.raises(InputError, match="--policy 'fifo'"):
        schedule(Toy(10), "sim:cpu", "fifo")
    with pytest.raises(InputError, match="only 10 sub-loads"):
        schedule(Toy(10), "sim:cpu", "hass", rounds=11)
    with pytest.raises(InputError, match="at least 1 round"):
        schedule(Toy(10), "sim:cpu", "hass", rounds=0)


def test_summary_is_json():
    import json
    res = schedule(Toy(100), devices_135(), "hass", rounds=2)
    s = json.loads(json.dumps(res.summary()))
    assert s["policy"] == "hass" and s["clock"] == "virtual"
    assert np.isclose(sum(s["units"].values()), 100)


def test_cli_schedule_json_report_and_check(tmp_path, capsys):
    import json

    from vcut.cli import main

    report = tmp_path / "s.html"
    assert main(["schedule", "--job", "matmul", "--size", "64", "--units", "32", "--rounds", "4",
                 "--devices", "sim:cpu,sim:gpu:speed=4", "--policy", "all", "--check",
                 "--json", "--report", str(report)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["matches_reference"] is True
    assert [r["policy"] for r in out["results"]] == ["hass", "min-min", "greedy", "qilin"]
    assert all(sum(r["units"].values()) == 32 for r in out["results"])
    page = report.read_text()
    assert page.startswith("<!doctype html>") and "data:image/png;base64," in page
    # two GPUs: 'all' leaves Qilin out; asking for it is refused
    assert main(["schedule", "--job", "matmul", "--size", "64", "--units", "32", "--rounds", "4",
                 "--devices", "sim:cpu,sim:gpu,sim:gpu", "--policy", "all"]) == 0
    assert "qilin" not in capsys.readouterr().out
    assert main(["schedule", "--job", "matmul", "--size", "64", "--rounds", "4",
                 "--devices", "sim:cpu,sim:gpu,sim:gpu", "--policy", "qilin"]) == 2
    assert "one CPU and one GPU" in capsys.readouterr().err


def test_cli_schedule_says_which_devices_it_left_out(capsys):
    # issue 61, item 6: partition-batch left the GPUs out with no word on stderr or
    # in --json's own terms
    import json

    from vcut.cli import main

    reason = ("partition-batch has no GPU implementation (its sub-loads are vcut's sequential "
              "stream, which runs on the CPU)")
    argv = ["schedule", "--job", "partition-batch", "--size", "2", "--rounds", "2",
            "--devices", "sim:cpu,sim:gpu,sim:gpu"]
    assert main(argv + ["--json", "--policy", "all"]) == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    skipped = [{"device": "sim:gpu", "reason": reason}, {"device": "sim:gpu#2", "reason": reason}]
    assert out["devices_skipped"] == skipped
    assert all(r["devices_skipped"] == skipped for r in out["results"])
    assert cap.err.splitlines() == [
        f"note: left out of partition-batch: sim:gpu, sim:gpu#2: {reason}; it runs on sim:cpu"]
    assert main(argv) == 0  # the table too
    cap = capsys.readouterr()
    assert cap.err.splitlines() == [
        f"note: left out of partition-batch: sim:gpu, sim:gpu#2: {reason}; it runs on sim:cpu"]
    assert main(argv[:-1] + ["sim:cpu", "--json"]) == 0  # nothing left out: no note
    cap = capsys.readouterr()
    assert cap.err == "" and json.loads(cap.out)["devices_skipped"] == []


def test_cli_schedule_bad_input(capsys):
    from vcut.cli import main

    cases = [(["--devices", "sim:tpu"], "sim:cpu or sim:gpu"),
             (["--size", "-3"], "--size -3: matmul takes a whole number"),
             (["--units", "0"], "--units 0: use at least 1 sub-load"),
             (["--rounds", "0"], "--rounds 0: use at least 1 round")]
    for extra, msg in cases:
        assert main(["schedule", "--job", "matmul", "--size", "16", "--devices", "sim:cpu"]
                    + extra) == 2
        err = capsys.readouterr().err
        assert msg in err and len(err.strip().splitlines()) == 1


def test_runtime_schedule_is_the_scheduler():
    import runtime

    job = Toy(50)
    a = runtime.schedule(job, devices_135(), "greedy", rounds=5)
    b = schedule(job, devices_135(), "greedy", rounds=5)
    assert a.result == job.reference() and a.makespan == b.makespan and a.units == b.units
