"""A program's run on the modelled GPU: its kernel launches, its transfers, its streams.

The session is the modelled device's clock.  Each stream has its own clock: a kernel launch
on a stream advances it by the launch's *predicted* time (the timing model's
``gpu__time_duration``), a copy by its predicted time over the host link.  An event records
its stream's clock, so ``end.elapsed_time(start)`` measures the modelled GPU, not the host
that simulates it.  Launches whose time is not modelled (``install(sass=False)``: no ptxas
facts to cost them) advance the clock by nothing and are counted in ``untimed`` (a warning
says so).
"""
from __future__ import annotations

import json
import os
import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

from ..errors import SimGPUError, SimGPUWarning
from ..hardware import get_gpu

#: nominal host<->device link per preset: (bytes/s per direction, latency s, what).
#: Datasheet numbers, not measured here.
HOST_LINKS = {
    "H200": (64e9, 2e-6, "PCIe Gen5 x16 (nominal)"),
    "H100": (64e9, 2e-6, "PCIe Gen5 x16 (nominal)"),
    "A100": (32e9, 2e-6, "PCIe Gen4 x16 (nominal)"),
    "V100": (16e9, 2e-6, "PCIe Gen3 x16 (nominal)"),
    "GH200": (450e9, 1e-6, "NVLink-C2C (nominal, per direction)"),
}


@dataclass
class LaunchRecord:
    kernel: str
    grid: tuple
    block: tuple
    time_s: float | None            # predicted; None where not modelled
    bottleneck: str
    report: object
    stream: int = 0


@dataclass
class Transfer:
    kind: str                       # HtoD | DtoH | DtoD
    nbytes: int
    time_s: float
    stream: int = 0


class StreamBase:
    """numba.cuda's stream on the modelled GPU: an ordered queue with its own modelled clock.
    Work runs when it is issued (the host waits for the simulation), so synchronize() has
    nothing left to wait for.  Without numba: :class:`Stream`; with simgpu installed, a
    subclass of numba's ``driver.Stream`` (:func:`numba_stream_classes`)."""

    _next_handle = [1]
    external = False

    def __init__(self, session, handle=None, name="stream"):
        self.session = session
        if handle is None:
            handle = Stream._next_handle[0]
            Stream._next_handle[0] += 1
        self.handle = handle
        self.name = name
        self.clock_s = 0.0

    def __repr__(self):
        return f"<simgpu {self.name} {self.handle} at {self.clock_s * 1e6:.3f} us modelled>"

    def __int__(self):
        return self.handle

    def __bool__(self):
        return True

    @contextmanager
    def auto_synchronize(self):
        yield self
        self.synchronize()

    def add_callback(self, callback, arg=None):
        callback(self, None, arg)

    def query(self):
        return True


def model_synchronize(stream):
    """A stream's synchronize on the model (also numba's ``driver.Stream.synchronize`` while
    simgpu is installed): its work ran when issued, nothing is left to wait for."""
    return None


class Stream(StreamBase):
    synchronize = model_synchronize


class ExternalBase(StreamBase):
    """``cuda.external_stream(handle)``: another object for the stream of that handle (numba
    wraps the handle without checking it); it shares that stream's modelled clock."""

    external = True

    def __init__(self, target):
        self.session, self.handle, self.name, self._target = target.session, target.handle, "external stream", target

    clock_s = property(lambda self: self._target.clock_s,
                       lambda self, v: setattr(self._target, "clock_s", v))

    def __repr__(self):
        return f"<simgpu external stream {self.handle} at {self.clock_s * 1e6:.3f} us modelled>"


class ExternalStream(ExternalBase):
    synchronize = model_synchronize


#: the classes of new streams (Stream, ExternalStream); install() puts numba_stream_classes()
STREAM_CLASSES = [Stream, ExternalStream]


def numba_stream_classes(numba_stream):
    """simgpu's stream classes as subclasses of numba's ``driver.Stream`` (install()): a
    stream is then numba's Stream type (isinstance), and its ``synchronize`` is numba's
    method, which install() swaps for :func:`model_synchronize`."""
    return [type("Stream", (StreamBase, numba_stream), {"__module__": __name__}),
            type("ExternalStream", (ExternalBase, numba_stream), {"__module__": __name__})]


class Event:
    """numba.cuda's event: records its stream's modelled clock."""

    def __init__(self, session, timing=True):
        self.session, self.timing = session, timing
        self.time_s = None
        self.untimed_at = 0

    def record(self, stream=0):
        s = self.session.stream_of(stream)
        self.time_s = s.clock_s
        self.untimed_at = self.session.untimed

    def synchronize(self):
        return None

    def query(self):
        return True

    def wait(self, stream=0):
        """Make `stream` wait for this event: its clock moves up to the event's."""
        s = self.session.stream_of(stream)
        if self.time_s is not None:
            s.clock_s = max(s.clock_s, self.time_s)

    def elapsed_time(self, evtend):
        """Modelled milliseconds from this event to `evtend`."""
        if not self.timing or not evtend.timing:
            raise SimGPUError("elapsed_time needs events created with timing=True (as in numba.cuda)")
        if self.time_s is None or evtend.time_s is None:
            raise SimGPUError("elapsed_time: record both events first (event.record(stream))")
        if evtend.untimed_at != self.untimed_at:
            warnings.warn("elapsed_time covers kernel launches whose time simgpu does not model yet "
                          "(the compiled path's timing model): they count as 0", SimGPUWarning,
                          stacklevel=2)
        return (evtend.time_s - self.time_s) * 1e3


class Session:
    """The modelled GPU a program runs on, and what the program did with it."""

    def __init__(self, gpu=None, memory=True, sass=True, devices=1):
        """`gpu`: a preset (name or GPU) for every device, or a list of them, one per device
        (a system of mixed GPUs; `devices` is then the list's length)."""
        self.memory = memory
        self.sass = sass or memory      # ptxas/nvdisasm facts: counts, registers (host/kernels.py)
        if isinstance(gpu, (list, tuple)):
            if not gpu:
                raise SimGPUError("gpu=[]: the modelled system needs at least one GPU")
            devices = len(gpu)
        if not isinstance(devices, int) or isinstance(devices, bool) or devices < 1:
            raise SimGPUError(f"devices={devices!r}: the modelled system needs a whole number of GPUs >= 1")
        presets = list(gpu) if isinstance(gpu, (list, tuple)) else [gpu]
        self.gpus = [get_gpu(g) for g in presets] * (devices if len(presets) == 1 else 1)
        self.devices = devices          # GPUs in the modelled system
        self.launches = []
        self.transfers = []
        self.untimed = 0
        self.default_stream = STREAM_CLASSES[0](self, 0, "default stream")
        self.streams = {0: self.default_stream}
        self._device_defaults = {0: self.default_stream}     # device -> its default stream
        self._selected = 0              # cuda.select_device's device (threads start on it)
        self._thread = threading.local()                     # .stack: `with cuda.gpus[i]` nesting
        self.peer_access = set()        # (device, peer): ctx.enable_peer_access was called

    # -- devices (CUDA's current device is per host thread) ---------------------------------
    @property
    def gpu(self):
        """The current device's GPU (the preset launches on this thread are modelled on)."""
        return self.gpus[self.current_device()]

    def current_device(self):
        stack = getattr(self._thread, "stack", None)
        return stack[-1] if stack else self._selected

    def check_device(self, i, what):
        if not isinstance(i, int) or not 0 <= i < self.devices:
            raise SimGPUError(f"{what}: the modelled system has {self.devices} GPU"
                              f"{'s' if self.devices > 1 else ''} (0..{self.devices - 1}), not {i!r}"
                              + ("; model more with simgpu.install(devices=N) or SIMGPU_DEVICES=N"
                                 if self.devices == 1 else ""))
        return i

    def select_device(self, i):
        self._selected = self.check_device(i, f"select_device({i!r})")

    def push_device(self, i):
        self.check_device(i, f"cuda.gpus[{i!r}]")
        if not hasattr(self._thread, "stack"):
            self._thread.stack = []
        self._thread.stack.append(i)

    def pop_device(self):
        self._thread.stack.pop()

    # -- streams ---------------------------------------------------------------------------
    def new_stream(self):
        while Stream._next_handle[0] in self.streams:      # a handle an external stream took
            Stream._next_handle[0] += 1
        s = STREAM_CLASSES[0](self)
        self.streams[s.handle] = s
        return s

    def external_stream(self, ptr):
        """The stream of handle `ptr` (a stream of this session, or a new one: a handle from
        elsewhere is a stream like any other on the modelled GPU) as an external stream."""
        handle = int(ptr)
        target = self.streams.get(handle)
        if target is None:
            target = self.streams[handle] = STREAM_CLASSES[0](self, handle, "stream")
        return STREAM_CLASSES[1](target)

    def stream_of(self, stream):
        """The Stream for numba's stream argument (0 / None: the default stream)."""
        if isinstance(stream, StreamBase):
            return stream
        if stream in (0, None):
            dev = self.current_device()
            if dev not in self._device_defaults:     # each GPU has its own default stream and clock
                self._device_defaults[dev] = STREAM_CLASSES[0](self, 0, f"default stream of GPU {dev}")
            return self._device_defaults[dev]
        raise SimGPUError(f"stream={stream!r} is not a stream of the modelled GPU: pass cuda.stream() "
                          "or 0 (external streams are not modelled)")

    # -- what the program did ---------------------------------------------------------------
    def record_launch(self, name, grid, block, report, stream=0):
        time_ns = report.metrics.get("gpu__time_duration.sum")
        time_s = None if time_ns is None else time_ns * 1e-9
        s = self.stream_of(stream)
        if time_s is None:
            self.untimed += 1
        else:
            s.clock_s += time_s
        rec = LaunchRecord(name, tuple(grid), tuple(block), time_s,
                           str(report.extras.get("bottleneck", "-") or "-"), report, s.handle)
        self.launches.append(rec)
        return rec

    def record_transfer(self, kind, nbytes, stream=0):
        bw, latency, _ = HOST_LINKS.get(self.gpu.name, HOST_LINKS["H200"])
        t = latency + nbytes / (bw if kind != "DtoD" else self.gpu.dram.bandwidth_bytes_per_s / 2)
        s = self.stream_of(stream if isinstance(stream, StreamBase) or stream in (0, None) else 0)
        s.clock_s += t
        self.transfers.append(Transfer(kind, nbytes, t, s.handle))

    # -- the summary ------------------------------------------------------------------------
    def summary(self):
        """One line per launch, then per-kernel totals and the transfers."""
        return "\n".join(summary_lines(self))

    def write_reports(self, directory):
        """Each launch's report as text, JSON (and HTML) in `directory`; the paths written."""
        os.makedirs(directory, exist_ok=True)
        written = []
        for n, rec in enumerate(self.launches, 1):
            stem = os.path.join(directory, f"{n:04d}_{_safe(rec.kernel)}")
            with open(stem + ".txt", "w") as f:
                f.write(str(rec.report) + "\n")
            rec.report.to_json(stem + ".json")
            written += [stem + ".txt", stem + ".json"]
            page = getattr(rec.report, "to_html", None)
            if page is not None:            # the styled page (runtime/report_html.py)
                page(stem + ".html")
                written.append(stem + ".html")
        with open(os.path.join(directory, "summary.json"), "w") as f:
            json.dump(summary_dict(self), f, indent=2)
        return written + [os.path.join(directory, "summary.json")]


def _safe(name):
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in name)[:60]


def fmt_time(t):
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.2f} us"
    return f"{t * 1e3:.3f} ms"


def _dims(d):
    d = list(d)
    while len(d) > 1 and d[-1] == 1:
        d.pop()
    return "x".join(map(str, d))


def summary_lines(session):
    """The lines of Session.summary()."""
    out = [f"simgpu: {len(session.launches)} kernel launch(es) on the modelled {session.gpu.name}"]
    if session.launches:
        w = max(12, *(len(r.kernel) for r in session.launches))
        out.append(f"  {'#':>4}  {'kernel':<{w}}  {'grid x block':<22} {'time':>11}  bottleneck")
        for n, r in enumerate(session.launches, 1):
            gb = f"{_dims(r.grid)} x {_dims(r.block)}"
            out.append(f"  {n:>4}  {r.kernel:<{w}}  {gb:<22} {fmt_time(r.time_s):>11}  {r.bottleneck}")
        out.append("  per kernel:")
        for name, (count, total, untimed) in kernel_totals(session).items():
            t = fmt_time(total) if untimed < count else "-"
            note = f" ({untimed} not timed)" if untimed and untimed < count else ""
            out.append(f"    {name:<{w}}  {count:>5} launch(es)  total {t:>11}{note}")
    if session.untimed:
        out.append(f"  time: '-' = not modelled yet on the compiled path ({session.untimed} launch(es))")
    for kind in ("HtoD", "DtoH", "DtoD"):
        ts = [t for t in session.transfers if t.kind == kind]
        if ts:
            out.append(f"  transfers {kind}: {len(ts)} copies, {sum(t.nbytes for t in ts):,} B, "
                       f"predicted {fmt_time(sum(t.time_s for t in ts))} "
                       f"({HOST_LINKS.get(session.gpu.name, HOST_LINKS['H200'])[2] if kind != 'DtoD' else 'DRAM'})")
    return out


def kernel_totals(session):
    """kernel name -> (launches, total predicted time, launches without a time)."""
    totals = {}
    for r in session.launches:
        c, t, u = totals.get(r.kernel, (0, 0.0, 0))
        totals[r.kernel] = (c + 1, t + (r.time_s or 0.0), u + (r.time_s is None))
    return totals


def summary_dict(session):
    return {"gpu": session.gpu.name,
            "launches": [{"kernel": r.kernel, "grid": list(r.grid), "block": list(r.block),
                          "time_s": r.time_s, "bottleneck": r.bottleneck, "stream": r.stream}
                         for r in session.launches],
            "transfers": [vars(t) for t in session.transfers]}


_CURRENT = [None]
_INITIALISED_PID = [None]       # the process that first used the modelled device


def initialise():
    """The CUDA driver's fork rule: a process that used the device (a context, memory, a
    launch) cannot use it in a child made by ``fork`` -- numba's CudaDriverError "CUDA
    initialized before forking" (a ``spawn`` child starts afresh)."""
    pid = os.getpid()
    if _INITIALISED_PID[0] is None:
        _INITIALISED_PID[0] = pid
    elif _INITIALISED_PID[0] != pid:
        try:
            from numba.cuda.cudadrv.error import CudaDriverError
        except ImportError:
            raise SimGPUError("CUDA initialized before forking") from None
        raise CudaDriverError("CUDA initialized before forking")


def current_session():
    """The session of the installed modelled GPU (simgpu.install()); one is made if none is."""
    if _CURRENT[0] is None:
        _CURRENT[0] = Session()
    return _CURRENT[0]


def set_session(session):
    _CURRENT[0] = session
