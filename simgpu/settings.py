"""simgpu's settings: every ``SIMGPU_*`` environment variable, read in this one module.

    simgpu.settings.current()                       the Settings in force now
    with simgpu.settings.override(executor="ir"):   ...launches in here run on the IR path...
    rep.extras["config"]                            what was in force for that launch

The environment is read once, at the first ``current()`` (so a program's ``os.environ`` edits
after that are not seen; ``reload()`` reads it again).  ``override(**fields)`` changes fields
for the block, for the whole process (every thread), and nests; child processes read their own
environment.  Each field, its variable and its meaning:

==================  =========================  ==================================================
field               variable                   meaning
==================  =========================  ==================================================
executor            SIMGPU_EXECUTOR            what ``executor="auto"`` (every launch's default)
                                               means: "auto" (the compiled path "ptx" where
                                               numba-cuda and ptxas are installed, else "ir"),
                                               "ptx" or "ir".  It changes which semantics run.
ptx_kernel_cache    SIMGPU_PTX_KERNEL_CACHE    "0": every PTX launch builds its own Kernel
                                               instead of reusing a cached one (same results).
ptx_blocks          SIMGPU_PTX_BLOCKS          "0": the PTX executor runs every instruction
                                               alone instead of a straight-line run's compiled
                                               function (simgpu/ptx/blocks.py; same results).
ptx_jit             SIMGPU_PTX_JIT             "0": a straight-line run calls the numpy semantics
                                               per instruction instead of running its supported
                                               segments as one numba-compiled call
                                               (simgpu/ptx/jitseg.py), and innermost loops are
                                               interpreted instead of running whole in one
                                               numba call (simgpu/ptx/jitloop.py; same results).
ptx_sass_nan        SIMGPU_PTX_SASS_NAN        "0": which NaN an f64 op or a folded neg/abs gives
                                               follows the PTX instead of ptxas' SASS
                                               (simgpu/ptx/sass_order.py; NaN bit patterns only).
ptx_jit_lanes       SIMGPU_PTX_JIT_LANES       the most lanes a step may have for a compiled
                                               segment or loop to run (default 1024; wider
                                               steps keep the numpy semantics, cheaper per
                                               lane there).
cache_dir           SIMGPU_CACHE_DIR           the disk cache's folder (default ~/.cache/simgpu).
disk_cache          SIMGPU_NO_CACHE            "1" (anything but "" or "0") turns the disk cache
                                               of compile facts off (same results, slower).
ptxas               SIMGPU_PTXAS               the ptxas executable to use (default: found on
                                               the wheels / PATH).  Its SASS sets the registers
                                               and instruction mix the timing model uses.
nvdisasm            SIMGPU_NVDISASM            the nvdisasm executable to use (likewise).
toolchain           SIMGPU_TOOLCHAIN           a folder holding another CUDA toolchain (the
                                               ``pip install --target`` folder of the
                                               nvidia-nvvm and nvidia-cuda-nvcc wheels, their
                                               ``nvidia/cu13`` folder, or a CUDA home): ptxas
                                               (and nvdisasm, if it has one), libNVVM and
                                               libdevice come from it (sass/toolchain.py).
                                               NVVM is loaded once per process: set it before
                                               the first compile (in the environment).
lto                 SIMGPU_LTO                 whether a numba kernel runs the program nvJitLink's
                                               link-time optimisation makes (as numba-cuda >= 0.16
                                               links it on a GPU where nvJitLink is installed):
                                               "auto" (default: the kernel's ``cuda.jit(lto=)``,
                                               else numba-cuda's rule -- on where nvJitLink is
                                               installed, sass/toolchain.py ``lto_for``), "on" or
                                               "off" (every kernel).  It changes the code run.
install             SIMGPU_INSTALL             set by ``simgpu.install()`` for child processes:
                                               the GPU and options (JSON) a child installs with
                                               (host/install.py; host/startup/sitecustomize.py
                                               only checks that it is set).
traceback           SIMGPU_TRACEBACK           "full": a user's error keeps simgpu's internal
                                               frames and chains (simgpu/tracebacks.py; for
                                               simgpu's developers).  Default "short".
numba_errors        SIMGPU_NUMBA_ERRORS        "full": numba's compile errors as numba raises
                                               them, simgpu's reading as a note at the end
                                               (runtime/compile_errors.py).  Default "short".
race_check          SIMGPU_RACE_CHECK          "0": no light shared-memory hazard check on each
                                               launch (sanitize/hazards.py).  Default on.
devices             SIMGPU_DEVICES             how many GPUs (all of the installed preset) the
                                               modelled system has for ``simgpu.install()``
                                               (``cuda.gpus``, ``select_device``).  Default 1.
slow_launch_seconds SIMGPU_SLOW_LAUNCH_SECONDS a launch whose simulation is estimated to take
                                               longer than this many seconds says so on stderr
                                               at once, with how to make it faster, and shows
                                               a progress bar (runtime/progress.py).  Default
                                               10; "inf" or "off": never.
==================  =========================  ==================================================

This module imports nothing of simgpu's but errors: it is in the bottom layer.
"""
from __future__ import annotations

import dataclasses
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, fields

from .errors import SimGPUError

EXECUTORS = ("auto", "ptx", "ir")


def _text(raw):
    return raw or None


def _executor(raw):
    value = (raw or "").strip().lower() or "auto"
    return value


LTO_MODES = ("auto", "on", "off")


def _lto(raw):
    value = (raw or "").strip().lower() or "auto"
    return {"1": "on", "true": "on", "yes": "on", "0": "off", "false": "off", "no": "off"}.get(value, value)


def _short_or_full(raw):
    return "full" if (raw or "").strip().lower() == "full" else "short"


def _not_zero(raw):
    return raw != "0"


def _lanes(raw):
    text = (raw or "").strip()
    try:
        return int(text) if text else 1024
    except ValueError:
        return -1           # refused by _checked


def _count(raw):
    text = (raw or "").strip()
    try:
        return int(text) if text else 1
    except ValueError:
        return 0            # refused by _checked


def _empty_or_zero(raw):
    return raw in ("", "0")


SLOW_LAUNCH_SECONDS = 10.0


def _seconds(raw):
    text = (raw or "").strip().lower()
    if not text:
        return SLOW_LAUNCH_SECONDS
    if text == "off":
        return float("inf")
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    return value


@dataclass(frozen=True)
class Settings:
    """The settings in force (see the module docstring for each field's variable and meaning)."""
    executor: str = "auto"
    ptx_kernel_cache: bool = True
    ptx_blocks: bool = True
    ptx_jit: bool = True
    ptx_jit_lanes: int = 1024
    ptx_sass_nan: bool = True
    cache_dir: str | None = None
    disk_cache: bool = True
    ptxas: str | None = None
    nvdisasm: str | None = None
    toolchain: str | None = None
    lto: str = "auto"           # numba kernels: nvJitLink's LTO program (sass/toolchain.py lto_for)
    install: str | None = None
    traceback: str = "short"
    numba_errors: str = "short"
    race_check: bool = True     # the default launch's light shared-memory hazard check (sanitize/hazards.py)
    devices: int = 1            # GPUs in the modelled system (simgpu.install(); host/session.py)
    slow_launch_seconds: float = SLOW_LAUNCH_SECONDS    # a longer launch says so (runtime/progress.py)

    def tool(self, name):
        """The path set for NVIDIA tool ``name`` ("ptxas", "nvdisasm"), or None."""
        return getattr(self, name, None) if name in TOOLS else None

    def record(self):
        """The settings as a plain dict (what ``rep.extras["config"]`` holds)."""
        return dataclasses.asdict(self)


# field -> (environment variable, how its text becomes the value; the text is "" when unset)
ENV = {
    "executor": ("SIMGPU_EXECUTOR", _executor),
    "ptx_kernel_cache": ("SIMGPU_PTX_KERNEL_CACHE", _not_zero),
    "ptx_blocks": ("SIMGPU_PTX_BLOCKS", _not_zero),
    "ptx_jit": ("SIMGPU_PTX_JIT", _not_zero),
    "ptx_jit_lanes": ("SIMGPU_PTX_JIT_LANES", _lanes),
    "ptx_sass_nan": ("SIMGPU_PTX_SASS_NAN", _not_zero),
    "cache_dir": ("SIMGPU_CACHE_DIR", _text),
    "disk_cache": ("SIMGPU_NO_CACHE", _empty_or_zero),
    "ptxas": ("SIMGPU_PTXAS", _text),
    "nvdisasm": ("SIMGPU_NVDISASM", _text),
    "toolchain": ("SIMGPU_TOOLCHAIN", _text),
    "lto": ("SIMGPU_LTO", _lto),
    "install": ("SIMGPU_INSTALL", _text),
    "traceback": ("SIMGPU_TRACEBACK", _short_or_full),
    "numba_errors": ("SIMGPU_NUMBA_ERRORS", _short_or_full),
    "race_check": ("SIMGPU_RACE_CHECK", _not_zero),
    "devices": ("SIMGPU_DEVICES", _count),
    "slow_launch_seconds": ("SIMGPU_SLOW_LAUNCH_SECONDS", _seconds),
}
TOOLS = ("ptxas", "nvdisasm")
FIELDS = tuple(f.name for f in fields(Settings))

_lock = threading.RLock()
_from_env = None          # Settings read from the environment (None: not read yet)
_overrides = []           # [(token, {field: value})], innermost last
_current = None           # the merged Settings (None: to be computed)


def variable(field):
    """The environment variable of ``field`` ("executor" -> "SIMGPU_EXECUTOR")."""
    return ENV[field][0]


def from_environment(environ=None):
    """Settings read from ``environ`` (default os.environ) now, without caching."""
    environ = os.environ if environ is None else environ
    values = {name: parse(environ.get(var, "")) for name, (var, parse) in ENV.items()}
    return _checked(Settings(**values), source="the environment")


def _checked(s, source):
    if not s.slow_launch_seconds >= 0:          # NaN (unreadable text) or negative
        raise SimGPUError(f"{source}: slow_launch_seconds ({variable('slow_launch_seconds')}) must be "
                          f"a number of seconds >= 0, \"inf\" or \"off\", not {s.slow_launch_seconds!r}")
    if s.ptx_jit_lanes < 0:
        raise SimGPUError(f"{source}: ptx_jit_lanes ({variable('ptx_jit_lanes')}) must be a whole number "
                          f"of lanes >= 0")
    if not isinstance(s.devices, int) or s.devices < 1:
        raise SimGPUError(f"{source}: devices ({variable('devices')}) must be a whole number of GPUs >= 1")
    if s.lto not in LTO_MODES:
        raise SimGPUError(f"{source}: lto {s.lto!r} ({variable('lto')}) is not one of {', '.join(LTO_MODES)}")
    if s.executor not in EXECUTORS:
        raise SimGPUError(f"{source}: executor {s.executor!r} ({variable('executor')}) is not one of "
                          f"{', '.join(EXECUTORS)}")
    return s


def current() -> Settings:
    """The Settings in force: the environment (read at the first call) under any overrides."""
    global _from_env, _current
    with _lock:
        if _current is None:
            if _from_env is None:
                _from_env = from_environment()
            merged = {}
            for _, changes in _overrides:
                merged.update(changes)
            _current = dataclasses.replace(_from_env, **merged)
        return _current


def reload():
    """Read the environment again at the next current() (overrides stay)."""
    global _from_env, _current
    with _lock:
        _from_env = _current = None


@contextmanager
def override(**changes):
    """``with simgpu.settings.override(executor="ir", disk_cache=False): ...`` -- these fields
    have these values inside the block (process-wide); the environment is not changed."""
    global _current
    unknown = sorted(set(changes) - set(FIELDS))
    if unknown:
        raise SimGPUError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(FIELDS)}")
    if "executor" in changes:
        changes["executor"] = _executor(changes["executor"])
        _checked(dataclasses.replace(Settings(), executor=changes["executor"]), source="override")
    if "lto" in changes:
        v = changes["lto"]          # True / False / None, or the variable's text
        changes["lto"] = {True: "on", False: "off", None: "auto"}[v] if v in (True, False, None) else _lto(v)
        _checked(dataclasses.replace(Settings(), lto=changes["lto"]), source="override")
    if "slow_launch_seconds" in changes:
        changes["slow_launch_seconds"] = float(changes["slow_launch_seconds"])
        _checked(dataclasses.replace(Settings(), slow_launch_seconds=changes["slow_launch_seconds"]),
                 source="override")
    token = object()
    with _lock:
        _overrides.append((token, dict(changes)))
        _current = None
    try:
        yield current()
    finally:
        with _lock:
            _overrides[:] = [(t, c) for t, c in _overrides if t is not token]
            _current = None
