"""``--devices``: the devices a schedule runs on, from their spec on the command line.

Above `devices` (the CPU, CUDA GPUs, simulated devices) and `workers` (the devices of a
Dask cluster's workers), so that neither needs the other's module to be complete.
"""

from vcut_base.errors import InputError
from runtime.gpu import gpu_available

from .devices import CpuDevice, CudaDevice, SimDevice
from .workers import WorkerDevice, worker_devices

__all__ = ["parse_devices"]


def parse_devices(spec, client=None):
    """Devices from a comma-separated spec: ``auto``, ``cpu``, ``gpu:N``, ``sim:...``,
    ``dask``.

    ``auto`` is the CPU plus every CUDA GPU numba finds; ``dask`` the devices of
    every worker of ``client``'s cluster (a `distributed.Client`)."""
    if not spec or not spec.strip():
        raise InputError("--devices: empty; use e.g. cpu,gpu:0 or cpu,sim:gpu:speed=4")
    devices = []
    for item in (s.strip() for s in spec.split(",")):
        if item == "auto":
            devices.append(CpuDevice())
            if gpu_available():
                from numba import cuda  # lazy: numba.cuda is optional
                devices.extend(CudaDevice(i) for i in range(len(cuda.gpus)))
        elif item == "cpu":
            devices.append(CpuDevice())
        elif item == "dask":
            if client is None:
                raise InputError("--devices dask: the workers of a Dask cluster; give "
                                 "--workers N (a local cluster) or --scheduler tcp://HOST:PORT")
            if any(isinstance(d, WorkerDevice) for d in devices):
                raise InputError("--devices: dask appears twice; name it once")
            devices.extend(worker_devices(client))
        elif item == "gpu" or item.startswith("gpu:"):
            idx = item[4:] or "0"
            if not idx.isdigit():
                raise InputError(f"--devices {item!r}: a GPU is gpu:N with N a device number")
            devices.append(CudaDevice(int(idx)))
        elif item.startswith("sim:"):
            parts = item.split(":")
            kind, params = parts[1], {}
            for p in parts[2:]:
                key, eq, value = p.partition("=")
                if not eq:
                    raise InputError(f"--devices {item!r}: parameter {p!r} is not key=value")
                try:
                    params[key] = float(value) if key != "fail" else int(value)
                except ValueError:
                    raise InputError(f"--devices {item!r}: {key}={value!r} is not a number")
            devices.append(SimDevice(kind, **params))
        else:
            raise InputError(f"--devices: unknown device {item!r}; use cpu, gpu:N, "
                             f"sim:cpu[:key=value...], sim:gpu[:key=value...], dask or auto")
    names = {}
    for d in devices:  # unique names: sim:gpu, sim:gpu#2 ...
        names[d.name] = names.get(d.name, 0) + 1
        if names[d.name] > 1:
            d.name = f"{d.name}#{names[d.name]}"
    if len([d for d in devices if isinstance(d, CpuDevice)]) > 1:
        raise InputError("--devices: the host CPU appears twice; name it once")
    return devices
