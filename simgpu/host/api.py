"""numba.cuda's host API on the modelled GPU: what ``simgpu.install()`` puts into
``numba.cuda`` (install.py lists the names).  Each function has numba.cuda's signature; what
the model does not have (EMM plugins) raises a SimGPUError
naming the call and what to use instead."""
from __future__ import annotations

import sys
from contextlib import contextmanager

from ..errors import SimGPUError
from . import devicearray as da
from . import ipc
from .device import SimContext, SimDevice, SimGPUs, detect_text
from .driver import MEMORY_MANAGER
from .session import Event, current_session, initialise


def get_current_device():
    session = current_session()
    return SimDevice(session.gpu, session.current_device(), session)


def _allocated(device):
    return lambda: da.allocated_bytes(device)


def current_context(devnum=None):
    initialise()
    session = current_session()
    dev = session.current_device() if devnum is None else session.check_device(devnum, f"current_context({devnum!r})")
    return SimContext(SimDevice(session.gpus[dev], dev, session), _allocated(dev), MEMORY_MANAGER)


def require_context(fn):
    return fn


def select_device(device_id):
    """cuda.select_device: GPU `device_id` of the modelled system becomes current."""
    current_session().select_device(device_id)
    return get_current_device()


def list_devices():
    session = current_session()
    return [SimDevice(session.gpus[i], i, session) for i in range(session.devices)]


def gpus_object():
    return SimGPUs(current_session)


def close():
    return None


def is_available():
    return True


def cuda_error():
    return None


def is_supported_version():
    return True


def is_float16_supported():
    return True


def is_bfloat16_supported():
    return tuple(current_session().gpu.compute_capability) >= (8, 0)


def is_fp8_supported():
    return tuple(current_session().gpu.compute_capability) >= (8, 9)


def detect():
    """Print the modelled GPU as numba.cuda.detect() prints a real one; True."""
    print(detect_text(list_devices()))
    return True


def synchronize():
    """Work runs when issued (the host waits for the simulation): nothing left to wait for."""
    return None


def stream():
    return current_session().new_stream()


def default_stream():
    return current_session().stream_of(0)


legacy_default_stream = default_stream
per_thread_default_stream = default_stream


def external_stream(ptr):
    """cuda.external_stream: the stream of handle `ptr` (numba wraps any handle unchecked);
    on the modelled GPU it shares the clock of the stream with that handle."""
    return current_session().external_stream(ptr)


def event(timing=True):
    return Event(current_session(), timing)


def event_elapsed_time(evtstart, evtend):
    return evtstart.elapsed_time(evtend)


@contextmanager
def pinned(*arylist):
    yield


@contextmanager
def mapped(*arylist, **kws):
    devs = [da.to_device(a) for a in arylist]
    yield devs[0] if len(devs) == 1 else devs
    for a, d in zip(arylist, devs):
        d.copy_to_host(a)


@contextmanager
def defer_cleanup():
    yield


def profile_start():
    return None


def profile_stop():
    return None


@contextmanager
def profiling():
    yield


def open_ipc_array(handle, shape, dtype, strides=None, offset=0):
    """cuda.open_ipc_array: the memory of another process's IPC handle as a device array
    (a context manager; host/ipc.py)."""
    return ipc.open_ipc_array(handle, shape, dtype, strides, offset)


def set_memory_manager(mm_plugin):
    raise SimGPUError("cuda.set_memory_manager: simgpu's device memory is the model's own; "
                      "EMM plugins are not used")


def printer(text):
    sys.stdout.write(text)
