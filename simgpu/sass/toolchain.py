"""Finding and running NVIDIA's compiler tools, and compiling a Python kernel to PTX.

* ``find_tool(name)`` locates ``ptxas`` / ``nvdisasm``: ``$SIMGPU_<NAME>`` if set, then the
  ``$SIMGPU_TOOLCHAIN`` folder (see ``selected_toolchain``), then ``cuda.pathfinder`` (which knows the NVIDIA wheel layouts, conda and CUDA_HOME), then the
  ``nvidia/cu13/bin`` / ``nvidia/cu12/bin`` / ``nvidia/cuda_nvcc/bin`` folders of the installed
  wheels, then ``PATH``.  A missing tool is a ``ToolNotFoundError`` naming the pip package.
* ``run_tool(name, args)`` runs one; every subprocess of this package goes through it.
* ``toolchain_versions()`` - versions of ptxas, nvdisasm, NVVM, numba and numba-cuda (cache keys),
  and the ``$SIMGPU_TOOLCHAIN`` folder they come from.
* ``selected_toolchain()`` - the files of the toolchain ``$SIMGPU_TOOLCHAIN`` names (e.g. the
  CUDA 13.0.88 wheels the validation card's driver matches, beside the installed 13.5 ones);
  libNVVM and libdevice are loaded from it before numba-cuda loads its own (once per process).
* ``compile_ptx(py_func, argtypes, cc)`` wraps ``numba.cuda.compile_ptx``; numba's own errors
  (typing errors pointing at the user's line) reach the caller unchanged.
* ``numba_types_for_args(args)`` types launch arguments as numba.cuda does at launch.
* ``cc_for_gpu(name)`` - compute capability of a GPU model name.
"""
from __future__ import annotations

import base64
import ctypes
import functools
import importlib.util
import linecache
import os
import re
import shutil
import site
import subprocess
import sys
import threading
import types as pytypes
import warnings
from pathlib import Path

import numpy as np

from simgpu import patches, settings
from simgpu._compat import load_numba_cuda
from simgpu.sass import cache, devrt, nvjitlink
from simgpu.errors import SimGPUError, SimGPUWarning

#: pip package that installs each tool (the CUDA 13 wheels; cu12 names in the message too).
TOOL_PACKAGES = {
    "ptxas": "cuda-toolkit[nvcc] (or nvidia-cuda-nvcc)",
    "nvdisasm": "nvidia-cuda-nvdisasm (or cuda-toolkit[nvdisasm])",
}


class ToolNotFoundError(SimGPUError):
    """An NVIDIA command-line tool this package needs is not installed."""


class ToolFailedError(SimGPUError):
    """An NVIDIA tool ran but failed (its stderr is in the message)."""


# ---------------------------------------------------------------------------- finding tools

def _wheel_bin_dirs():
    """``bin`` folders of the NVIDIA pip wheels in every site-packages on sys.path."""
    roots = list(sys.path)
    try:
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # some virtualenv flavours lack these
        pass
    dirs = []
    for root in roots:
        for sub in ("nvidia/cu13/bin", "nvidia/cu12/bin", "nvidia/cuda_nvcc/bin",
                    "nvidia/cuda_nvdisasm/bin"):
            d = Path(root or ".") / sub
            if d.is_dir() and d not in dirs:
                dirs.append(d)
    return dirs

# ---------------------------------------------------------------------------- another toolchain

#: where each part lies under the folders $SIMGPU_TOOLCHAIN may name: a ``pip install --target``
#: folder of the CUDA 13 wheels (nvidia/cu13/...), that nvidia/cu13 folder, a CUDA 12 wheel
#: folder (nvidia/cuda_nvcc/...), or a CUDA home (/usr/local/cuda-13.0)
_TOOLCHAIN_LAYOUTS = ("nvidia/cu13", ".", "nvidia/cuda_nvcc")


def selected_toolchain():
    """None when ``$SIMGPU_TOOLCHAIN`` is not set, else a dict of the files it provides:
    ``root``, ``bin_dirs``, ``ptxas``, ``nvdisasm`` (None when the folder has none: the default
    one disassembles), ``nvvm`` (libnvvm.so) and ``libdevice`` (libdevice.10.bc), the last two
    None where absent (a folder with only ptxas changes only the assembler).  SimGPUError when
    the folder does not exist."""
    root = settings.current().toolchain
    if not root:
        return None
    return _toolchain_files(os.path.abspath(os.path.expanduser(root)))


@functools.lru_cache(maxsize=None)
def _toolchain_files(root):
    if not os.path.isdir(root):
        raise SimGPUError(f"$SIMGPU_TOOLCHAIN = {root!r} is not a folder")
    out = {"root": root, "bin_dirs": [], "ptxas": None, "nvdisasm": None, "nvvm": None, "nvrtc": None,
           "nvjitlink": None, "libdevice": None}
    for sub in _TOOLCHAIN_LAYOUTS:
        base = os.path.normpath(os.path.join(root, sub))
        b = os.path.join(base, "bin")
        if os.path.isdir(b):
            out["bin_dirs"].append(b)
        for tool in ("ptxas", "nvdisasm"):
            exe = os.path.join(b, tool)
            if out[tool] is None and os.path.isfile(exe) and os.access(exe, os.X_OK):
                out[tool] = exe
        for libdir in ("lib", "lib64", "nvvm/lib64", "nvvm/lib"):
            d = os.path.join(base, libdir)
            if out["nvvm"] is None and os.path.isdir(d):
                libs = sorted(f for f in os.listdir(d) if f.startswith("libnvvm.so"))
                if libs:
                    out["nvvm"] = os.path.join(d, libs[-1])
            if out["nvrtc"] is None and os.path.isdir(d):
                libs = sorted(f for f in os.listdir(d) if re.fullmatch(r"libnvrtc\.so(\.\d+)*", f))
                if libs:
                    out["nvrtc"] = os.path.join(d, libs[-1])
            if out["nvjitlink"] is None:
                out["nvjitlink"] = nvjitlink.find_in(d)
        bc = os.path.join(base, "nvvm", "libdevice", "libdevice.10.bc")
        if out["libdevice"] is None and os.path.isfile(bc):
            out["libdevice"] = bc
    return out


def _loaded_libraries(stem):
    """Paths of the shared objects whose file name starts with ``stem`` mapped into this
    process (Linux: /proc/self/maps; elsewhere an empty list)."""
    try:
        with open("/proc/self/maps") as fh:
            paths = {line.split(None, 5)[5].strip() for line in fh if line.count(" ") >= 5 and stem in line}
    except OSError:
        return []
    return sorted(p for p in paths if os.path.basename(p).startswith(stem))


_nvvm_selected = None


def _select_nvvm():
    """Load the selected toolchain's libNVVM (and libNVRTC, which compiles the CUDA C numba links
    in) before numba-cuda loads its own, and point numba-cuda's libdevice at the same
    toolchain's (numba-cuda and cuda.bindings take the libraries through cuda.pathfinder, which
    uses one already loaded in the process, and libdevice from ``get_cuda_paths()``, which it
    computes once).  A library loaded already from elsewhere cannot be replaced: SimGPUError."""
    global _nvvm_selected
    chosen = selected_toolchain()
    if chosen is None or chosen["nvvm"] is None:
        return
    if _nvvm_selected == chosen["nvvm"]:
        return
    for lib, stem in (("nvvm", "libnvvm"), ("nvrtc", "libnvrtc.so")):
        if chosen[lib] is None:
            continue
        want = os.path.realpath(chosen[lib])
        loaded = [p for p in _loaded_libraries(stem) if os.path.realpath(p) != want]
        if loaded:
            raise SimGPUError(f"$SIMGPU_TOOLCHAIN asks for {chosen[lib]}, but this process has loaded "
                              f"{loaded[0]} already (NVIDIA's libraries are loaded once per process): "
                              f"set SIMGPU_TOOLCHAIN in the environment before the first compile")
    _select_nvrtc()
    ctypes.CDLL(chosen["nvvm"], mode=getattr(os, "RTLD_GLOBAL", 0))
    if chosen["libdevice"] is not None:
        from numba.cuda import cuda_paths
        paths = cuda_paths.get_cuda_paths()
        cached = getattr(cuda_paths.get_cuda_paths, "_cached_result", None)
        if cached is not paths or "libdevice" not in paths:
            raise SimGPUError("this numba-cuda keeps its CUDA paths differently: simgpu cannot "
                              "point its libdevice at $SIMGPU_TOOLCHAIN")
        paths["libdevice"] = type(paths["libdevice"])("SIMGPU_TOOLCHAIN", chosen["libdevice"])
    _nvvm_selected = chosen["nvvm"]


_nvrtc_selected = None


def _select_nvrtc():
    """Load the selected toolchain's libNVRTC (and its builtins) before cuda.bindings loads one:
    simgpu.cuda_source's and numba's CUDA C then compile with the toolchain's NVRTC, whose PTX
    ISA its ptxas reads (a newer NVRTC's .version is refused).  SimGPUError if another libNVRTC
    is loaded already."""
    global _nvrtc_selected
    chosen = selected_toolchain()
    if chosen is None or chosen["nvrtc"] is None or _nvrtc_selected == chosen["nvrtc"]:
        return
    want = os.path.realpath(chosen["nvrtc"])
    loaded = [p for p in _loaded_libraries("libnvrtc.so") if os.path.realpath(p) != want]
    if loaded:
        raise SimGPUError(f"$SIMGPU_TOOLCHAIN asks for {chosen['nvrtc']}, but this process has loaded "
                          f"{loaded[0]} already (NVIDIA's libraries are loaded once per process): "
                          f"set SIMGPU_TOOLCHAIN in the environment before the first compile")
    mode = getattr(os, "RTLD_GLOBAL", 0)
    # libNVRTC opens its builtins by file name; loaded first, they are found by it
    d = os.path.dirname(chosen["nvrtc"])
    for f in sorted(os.listdir(d)):
        if re.fullmatch(r"libnvrtc-builtins\.so(\.\d+)*", f):
            ctypes.CDLL(os.path.join(d, f), mode=mode)
    ctypes.CDLL(chosen["nvrtc"], mode=mode)
    _nvrtc_selected = chosen["nvrtc"]


def nvvm_library():
    """Path of the libNVVM numba-cuda compiles with (after its first use), or None."""
    libs = _loaded_libraries("libnvvm")
    return libs[0] if libs else None


def build_version(path):
    """The CUDA release a binary of NVIDIA's toolchain was built for, read from the version
    text inside it ("V13.0.88 cuda_13.0.r13.0/compiler.36424714_0"); cached on disk by path,
    size and mtime.  None when the file carries none."""
    st = os.stat(path)
    key = cache.make_key("tool", "build_version", path, st.st_size, st.st_mtime_ns)
    hit = cache.load("tool", key)
    if hit is not None:
        return hit["value"]
    with open(path, "rb") as fh:
        data = fh.read()
    m = re.search(rb"release [\d.]+, (V[\d.]+)", data)
    build = re.search(rb"Build (cuda_[\w./-]+)", data)
    value = " ".join(x.group(1).decode() for x in (m, build) if x) or None
    cache.store("tool", key, {"value": value})
    return value



def _pathfinder_lookup(name):
    try:
        from cuda.pathfinder import find_nvidia_binary_utility
    except ImportError:
        return None
    try:
        return find_nvidia_binary_utility(name)
    except Exception:  # unsupported name or broken install: fall through to other searches
        return None


def find_tool(name):
    """Absolute path of NVIDIA tool ``name`` ("ptxas", "nvdisasm"); ToolNotFoundError if absent."""
    override = settings.current().tool(name)
    if override:
        if os.access(override, os.X_OK):
            return override
        raise ToolNotFoundError(f"${'SIMGPU_' + name.upper()} = {override!r} is not an executable")
    chosen = selected_toolchain()
    if chosen is not None:
        if chosen.get(name):
            return chosen[name]
        if name == "ptxas":     # the point of a toolchain: its ptxas; nvdisasm may come from elsewhere
            raise ToolNotFoundError(f"$SIMGPU_TOOLCHAIN = {chosen['root']!r} has no ptxas "
                                    f"(looked in {', '.join(chosen['bin_dirs'])})")
    found = _pathfinder_lookup(name)
    if found:
        return found
    for d in _wheel_bin_dirs():
        exe = d / name
        if exe.is_file() and os.access(exe, os.X_OK):
            return str(exe)
    found = shutil.which(name)
    if found:
        return found
    package = TOOL_PACKAGES.get(name, "the CUDA toolkit")
    raise ToolNotFoundError(
        f"NVIDIA tool {name!r} not found (looked with cuda.pathfinder, in the nvidia/*/bin "
        f"folders of site-packages and on PATH); install it with: pip install {package}")


@functools.lru_cache(maxsize=None)
def compiled_path_available():
    """(True, "") when this machine can compile kernels with numba-cuda and assemble them
    with ptxas (the compiled path), else (False, why).  Cheap: finds the tools and the
    numba-cuda package without importing numba."""
    for name in ("ptxas", "nvdisasm"):
        try:
            find_tool(name)
        except ToolNotFoundError as e:
            return False, str(e)
    if importlib.util.find_spec("numba_cuda") is None and importlib.util.find_spec("numba") is None:
        return False, "numba-cuda is not installed (pip install 'numba-cuda[cu13]')"
    return True, ""


def run_tool(name, args, timeout=120):
    """Run tool ``name`` with ``args``; return the CompletedProcess (text mode).
    A non-zero exit is ToolFailedError carrying the tool's own messages."""
    exe = find_tool(name)
    proc = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        msg = (proc.stderr.strip() or proc.stdout.strip())[-4000:]
        raise ToolFailedError(f"{name} failed (exit {proc.returncode}): {msg}")
    return proc


# ---------------------------------------------------------------------------- versions

def _version_line(name):
    out = run_tool(name, ["--version"]).stdout
    m = re.search(r"release [\d.]+, (V[\d.]+)", out)
    build = re.search(r"Build (\S+)", out)
    return " ".join(x.group(1) for x in (m, build) if x) or out.strip().splitlines()[-1]


def _tool_fact(name, what, compute):
    """``compute()`` for tool ``name``, kept in the disk cache under the executable's path,
    size and mtime (so a cached compile in a new process starts no subprocess)."""
    exe = find_tool(name)
    st = os.stat(exe)
    key = cache.make_key("tool", what, exe, st.st_size, st.st_mtime_ns)
    hit = cache.load("tool", key)
    if hit is not None:
        return hit["value"]
    value = compute()
    cache.store("tool", key, {"value": value})
    return value


def tool_version(name):
    """Version of tool ``name``, e.g. 'V13.5.37 cuda_13.5.r13.5/compiler.39125733_0' (of the
    executable ``find_tool`` finds now)."""
    return _tool_version_at(name, find_tool(name))


@functools.lru_cache(maxsize=None)
def _tool_version_at(name, _exe):
    return _tool_fact(name, "version", lambda: _version_line(name))


def supported_archs():
    """The sm_XY numbers this ptxas can target, e.g. {75, 80, 86, 89, 90, 100, ...}."""
    return _archs_at(find_tool("ptxas"))


@functools.lru_cache(maxsize=None)
def _archs_at(_exe):
    def compute():
        try:
            out = run_tool("ptxas", ["--list-arch"]).stdout
        except ToolFailedError:     # ptxas before 13.1 has no --list-arch: its --help lists them
            out = run_tool("ptxas", ["--help"]).stdout
            out = " ".join(re.findall(r"'(sm_\d+)[a-z]?'", out))
        return sorted({int(x) for x in re.findall(r"(?:sm_)?(\d+)[a-z]?\b", out)})
    return frozenset(_tool_fact("ptxas", "archs", compute))


def _numba_cuda():
    load_numba_cuda()
    _select_nvvm()
    from numba import cuda
    return cuda


@functools.lru_cache(maxsize=None)
def frontend_versions():
    """Versions of the Python-to-PTX side: numba, numba-cuda and its NVVM."""
    import numba
    _numba_cuda()
    try:
        import numba_cuda
        nc = numba_cuda.__version__
    except ImportError:  # numba's built-in (older) CUDA target
        nc = "builtin"
    try:
        from numba.cuda.cudadrv import nvvm
        nv = ".".join(map(str, nvvm.NVVM().get_version()))
        lib = nvvm_library()
        build = build_version(lib) if lib else None
        if build:       # the API version (2.0) is the same for every CUDA 13 release
            nv = f"{nv} {build}"
    except Exception as exc:  # NVVM missing: compile_ptx will say so itself
        nv = f"unavailable ({type(exc).__name__})"
    return {"numba": numba.__version__, "numba_cuda": nc, "nvvm": nv}


def toolchain_versions():
    """Everything whose version changes the compiled facts (used in cache keys), and the
    ``$SIMGPU_TOOLCHAIN`` folder they were taken from (None: the installed wheels)."""
    chosen = selected_toolchain()
    return {**frontend_versions(), "ptxas": tool_version("ptxas"),
            "nvdisasm": tool_version("nvdisasm"), "toolchain": chosen["root"] if chosen else None}


# ---------------------------------------------------------------------------- GPUs

_GPU_CC = [  # (substring of the GPU name, upper case; compute capability); first match wins
    ("GH200", (9, 0)), ("H200", (9, 0)), ("H100", (9, 0)), ("H800", (9, 0)),
    ("B200", (10, 0)), ("B100", (10, 0)), ("GB200", (10, 0)),
    ("A100", (8, 0)), ("A800", (8, 0)), ("A30", (8, 0)),
    ("L40", (8, 9)), ("L4", (8, 9)), ("RTX 4090", (8, 9)),
    ("A10", (8, 6)), ("A40", (8, 6)), ("RTX 3090", (8, 6)),
    ("T4", (7, 5)), ("V100", (7, 0)),
]


def cc_for_gpu(gpu):
    """Compute capability for a GPU: a name ('H200', 'NVIDIA A100-SXM4-80GB'), 'sm_90' or (9, 0)."""
    if isinstance(gpu, tuple):
        return (int(gpu[0]), int(gpu[1]))
    name = str(gpu).upper()
    m = re.fullmatch(r"SM_?(\d+)(\d)[AF]?", name)
    if m:
        return (int(m.group(1)), int(m.group(2)))
    for key, cc in _GPU_CC:
        if key in name:
            return cc
    raise SimGPUError(f"unknown GPU {gpu!r}: give a compute capability such as (9, 0) or 'sm_90' "
                      f"(known names: {', '.join(k for k, _ in _GPU_CC)})")


def check_arch(cc):
    """SimGPUError if this ptxas cannot generate code for compute capability ``cc``."""
    sm = cc[0] * 10 + cc[1]
    archs = supported_archs()
    if sm not in archs:
        raise SimGPUError(
            f"ptxas {tool_version('ptxas').split()[0]} cannot compile for sm_{sm} (it supports "
            f"sm_{', sm_'.join(map(str, sorted(archs)))}); CUDA 13 dropped sm_70 and older - "
            f"a CUDA 12 toolchain (pip install nvidia-cuda-nvcc-cu12) still targets them")


# ---------------------------------------------------------------------------- Python -> PTX

_compile_lock = threading.Lock()


class _TargetDevice:
    """Stands in for ``get_current_device()`` while numba compiles device functions that a
    kernel calls: numba-cuda asks the *current* GPU for their compute capability, which fails on
    a machine without a GPU (and would be the wrong cc when compiling for another GPU)."""

    def __init__(self, cc):
        self.compute_capability = cc


def py_function(func):
    """The plain Python function behind a numba dispatcher (or ``func`` itself)."""
    return getattr(func, "py_func", func)


def compile_ptx(py_func, argtypes, cc, lineinfo=True):
    """PTX text for kernel ``py_func`` with numba types ``argtypes`` on compute capability ``cc``
    (a numba dispatcher: with its code-changing options, :func:`dispatcher_options`).
    Returns (ptx, entry_name).  numba's errors propagate unchanged."""
    ptx, entry, _linked = compile_ptx_linked(py_func, argtypes, cc, lineinfo)
    return ptx, entry


def compile_ptx_linked(py_func, argtypes, cc, lineinfo=True, lto=False):
    """:func:`compile_ptx`, and whether other code was linked in (CUDA C/PTX files of
    ``cuda.declare_device(link=...)``, numba's helpers: code the function's fingerprint
    does not cover, so the PTX cache does not keep it).  ``lto``: the program nvJitLink's
    link-time optimisation makes of the kernel and what it links, as numba-cuda loads it
    where nvJitLink is installed (:func:`kernel_lto_ptx`; decide with :func:`lto_for`)."""
    cuda = _numba_cuda()
    linked = False
    options = dispatcher_options(py_func)
    func = numba_view(py_function(py_func), cuda)
    with _compile_lock, patches.swapped("numba.cuda.dispatcher:get_current_device",
                                        lambda: _TargetDevice(tuple(cc))):
        try:
            if lto:
                try:
                    ptx, linked = kernel_lto_ptx(func, argtypes, cc, lineinfo, options)
                except Exception as exc:
                    # numba's line information that fails to build (as below), or that nvJitLink
                    # refuses once CUDA C with its own debug locations is inlined (NRT's
                    # functions: "!dbg attachment points at wrong subprogram"): the kernel
                    # without .loc lines, as numba-cuda's default (lineinfo=False) links it
                    if not (lineinfo and (raised_in_debuginfo(exc) or isinstance(exc, nvjitlink.NvJitLinkError))):
                        raise
                    ptx, linked = kernel_lto_ptx(func, argtypes, cc, False, options)
                return ptx, entry_name(ptx), linked
            try:
                ptx, _resty = cuda.compile_ptx(func, tuple(argtypes), cc=tuple(cc), lineinfo=lineinfo,
                                               **options)
            except Exception as exc:
                if not (lineinfo and raised_in_debuginfo(exc)):
                    raise
                # numba-cuda's line information fails for some types (an empty tuple's debug
                # type divides by its element size, 0): the kernel as the user's cuda.jit
                # compiles it, without .loc lines (the report has no source lines for it)
                lineinfo = False
                ptx, _resty = cuda.compile_ptx(func, tuple(argtypes), cc=tuple(cc), lineinfo=False, **options)
            if _needs_linking(ptx):
                ptx, linked = link_ptx(ptx, linked_sources_ptx(func, argtypes, cc, lineinfo, options)), True
        except Exception as exc:
            _note_source_location(exc)
            raise
    return ptx, entry_name(ptx), linked


# ---------------------------------------------------------------------------- LTO (nvJitLink)

#: the numba-cuda release whose ``cuda.jit`` turns LTO on by default where nvJitLink is installed
#: (NVIDIA/numba-cuda #310, released in 0.16.0; before it ``lto`` defaulted to False)
LTO_DEFAULT_SINCE = (0, 16, 0)
_lto_fallback_said = []


def numba_cuda_defaults_lto(version=None):
    """Whether numba-cuda ``version`` (default: the installed one) turns ``lto`` on by default."""
    if version is None:
        version = frontend_versions()["numba_cuda"]
    nums = re.findall(r"\d+", str(version))[:3]
    return len(nums) >= 2 and tuple(int(x) for x in nums) >= LTO_DEFAULT_SINCE


def lto_for(py_func, requested=None):
    """Whether a launch of kernel ``py_func`` runs the LTO program, as numba-cuda 0.30 decides on a
    GPU (``decorators.py``: ``lto = _have_nvjitlink() and not debug`` unless ``cuda.jit(lto=...)``
    says):

    * ``simgpu.settings`` ``lto`` (``$SIMGPU_LTO``) "on" / "off" decides for every kernel;
    * else the kernel's own choice: a numba dispatcher's ``targetoptions["lto"]`` (numba-cuda
      resolved it when the decorator ran: the default rule on this machine, or the user's
      ``lto=``), ``requested`` (``simgpu.jit(lto=...)``);
    * else numba-cuda's default: on where nvJitLink is installed (``sass/nvjitlink.py``: the
      ``$SIMGPU_TOOLCHAIN`` folder's, else the installed wheel's), numba-cuda is 0.16 or newer,
      and the kernel is not compiled for debugging.

    Where LTO is asked for but no nvJitLink can be found, the kernel compiles without it and
    simgpu says so, once per process (a SimGPUWarning naming the pip package)."""
    mode = settings.current().lto
    opts = getattr(py_func, "targetoptions", None)
    if mode in ("on", "off"):
        want = None
    elif isinstance(opts, dict) and opts.get("lto") is not None:
        want = bool(opts["lto"])
    elif requested is not None:
        want = bool(requested)
    else:
        debug = opts.get("debug") if isinstance(opts, dict) else None
        if debug is None:
            _numba_cuda()
            from numba.cuda.core import config as numba_config
            debug = bool(numba_config.CUDA_DEBUGINFO_DEFAULT)
        # numba-cuda's own default: without nvJitLink it links without LTO, and says nothing
        return not debug and numba_cuda_defaults_lto() and _nvjitlink_missing() is None
    return _lto_wanted(want, mode)


def _nvjitlink_missing():
    """None where nvJitLink can be used, else the NvJitLinkMissing saying why."""
    try:
        nvjitlink.linker(nvjitlink.library())
    except nvjitlink.NvJitLinkMissing as exc:
        return exc
    return None


def _lto_wanted(want, mode):
    """``want`` (``SIMGPU_LTO`` "on"/"off" decides instead), unless LTO is wanted and no
    nvJitLink can be found: then False, said once per process."""
    if mode in ("on", "off"):
        want = mode == "on"
    if want:
        exc = _nvjitlink_missing()
        if exc is not None:
            if not _lto_fallback_said:
                _lto_fallback_said.append(str(exc))
                asked = "SIMGPU_LTO=on" if mode == "on" else "the kernel's lto, numba-cuda's default"
                warnings.warn(SimGPUWarning(
                    f"LTO was asked for ({asked}) but {exc}: simgpu compiles kernels without link-time "
                    f"optimisation, so a kernel that calls linked code (float16 arithmetic, link= sources) "
                    f"runs other code than numba-cuda with nvJitLink would (SIMGPU_LTO=off silences this)"),
                    stacklevel=3)
            return False
    return want


def kernel_lto_ptx(func, argtypes, cc, lineinfo=True, options=None):
    """(PTX, linked) of numba view ``func`` as numba-cuda links it with LTO (``codegen.py``
    ``get_cubin`` with ``lto``): NVVM's LTO-IR of the kernel (``-gen-lto``, the dispatcher's
    NVVM options), the CUDA C it links as NVRTC's LTO-IR (:func:`lto_link`), then nvJitLink
    ``-arch=sm_XY -lto -ptx``.  ``linked``: whether files were linked in (not in the fingerprint)."""
    from numba.cuda.compiler import _compile_pyfunc_with_fixup
    lib, _ = _compile_pyfunc_with_fixup(func, tuple(argtypes), lineinfo=lineinfo, device=False,
                                        abi="numba", cc=tuple(cc), lto=True, **(options or {}))
    files = list(getattr(lib, "_linking_files", ()))
    ir = lib.get_llvm_str()                 # (the library's "PTX" is LTO-IR here: read its IR)
    declared = set(re.findall(r'^declare\b[^@\n]*@"?([\w.$]+)', ir, re.M))
    files += [f for f in helper_files(ir, declared) if f not in files]
    if "Debug Info Version" in ir and any(_linking_source(f)[1] in ("cu", "ltoir") for f in files):
        ltoir = _ltoir_linkable_with_lines(lib, cc)     # (a device function numba compiled with lines)
    else:
        ltoir = lib.get_ltoir(cc=tuple(cc))
    ptx = lto_link(ltoir, files, cc, lineinfo, entry=lib._entry_name)
    return ptx, bool(files)


_DEBUG_FLAG = re.compile(r'!\{\s*i32 2,\s*!"(Debug Info Version|Dwarf Version)"')


def _ltoir_linkable_with_lines(lib, cc):
    """``lib.get_ltoir(cc)`` (NVVM ``-gen-lto`` with the library's NVVM options) of IR whose
    debug-info module flags have the behaviour NVRTC's LTO-IR gives them (1, "error") instead of
    numba's (2, "warning"): nvJitLink refuses to link the two ("linking module flags 'Debug Info
    Version': IDs have conflicting behaviors"), so numba-cuda cannot link a kernel with
    ``lineinfo=True`` and LTO to CUDA C at all.  Only the flag's behaviour changes (both say
    version 3): the program is the same, with its line information."""
    from numba.cuda.cudadrv import nvvm
    options = dict(lib._nvvm_options, arch=f"compute_{cc[0]}{cc[1]}")
    options["gen-lto"] = None
    irs = [_DEBUG_FLAG.sub(lambda m: f'!{{ i32 1, !"{m.group(1)}"', ir) for ir in lib.llvm_strs]
    return nvvm.compile_ir(irs, **options)


def lto_link(ltoir, files, cc, lineinfo=True, entry=None):
    """The PTX nvJitLink makes with link-time optimisation of LTO-IR ``ltoir`` and numba's linking
    ``files`` (paths or LinkableCode): CUDA C compiled to LTO-IR by NVRTC (numba-cuda's own
    ``nvrtc.compile(..., ltoir=True)``: its include paths and options), LTO-IR as it is; PTX
    files are not LTO-IR (numba links them beside the optimised program, unoptimised) and are
    merged into the linked PTX as without LTO (:func:`link_ptx`, with simgpu's device runtime).
    Machine code is a LinkError, as without LTO.  ``entry``: the kernel's (mangled) name, the one
    ``.entry`` kept (linked CUDA C may define kernels).  ``cc`` (9, 0) links for ``sm_90``:
    numba-cuda on an sm_90 card links for ``sm_90a``, whose LTO PTX here differs only in its
    ``.target``."""
    link, _ver = nvjitlink.linker(nvjitlink.library())
    inputs, ptx_files = [(bytes(ltoir), "ltoir")], []
    for f in sorted(files, key=_linking_name):
        name, ext, data = _linking_source(f)
        if ext == "cu":         # without line information, as numba-cuda's linker compiles it
            inputs.append((nvrtc_ltoir_cached(data, name, cc), "ltoir"))
        elif ext == "ltoir":
            inputs.append((bytes(data), "ltoir"))
        elif ext == "ptx":
            ptx_files.append(data)
        else:
            linking_file_ptx(f, cc)         # raises the LinkError for machine code
    sm = f"sm_{cc[0]}{cc[1]}"
    ptx = link(inputs, [f"-arch={sm}", "-lto", "-ptx", *(["-lineinfo"] if lineinfo else [])], "ptx")
    if entry is not None and len(inputs) > 1:
        ptx = _drop_entries(ptx, keep=entry)    # the linked CUDA C's own kernels (NRT's), as without LTO
    return link_ptx(ptx, ptx_files)


def nvrtc_ltoir_cached(source, name, cc):
    """NVRTC's LTO-IR of CUDA C ``source`` as numba-cuda compiles a linked file for LTO
    (``cudadrv/nvrtc.py`` ``compile(..., ltoir=True)``), kept in the disk cache."""
    key = cache.make_key("nvrtc-ltoir", source, name, tuple(cc), _nvrtc_version())
    hit = _NVRTC_MEMO.get(key)
    if hit is None:
        stored = cache.load("nvrtc", key)
        if stored:
            hit = base64.b64decode(stored["ltoir"])
        else:
            _select_nvrtc()
            from numba.cuda.cudadrv import nvrtc as numba_nvrtc
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")     # NVRTC's log (numba warns with it)
                obj, _log = numba_nvrtc.compile(source, name, tuple(cc[:2]), ltoir=True)
            hit = bytes(obj.code)
            cache.store("nvrtc", key, {"ltoir": base64.b64encode(hit).decode()})
        _NVRTC_MEMO[key] = hit
    return hit


def raised_in_debuginfo(exc):
    """Whether `exc` was raised inside numba-cuda's debug/line information generator
    (numba/cuda/debuginfo.py), not by the kernel's typing or lowering."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    parts = (last or "").replace("\\", "/").split("/")
    return parts[-1:] == ["debuginfo.py"] and "cuda" in parts


_EXTERN_DECL = re.compile(r"^[ \t]*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?([\w$]+)\s*(?:\([^)]*\))?\s*;[ \t]*\n?",
                          re.M | re.S)
_PROVIDED = devrt.SYSCALLS        # ptxas resolves these itself; simgpu.ptx implements them


class LinkError(SimGPUError):
    """Code numba would link into a kernel that simgpu cannot link (machine code, LTO-IR)."""


def _needs_linking(ptx):
    return any(n not in _PROVIDED for n in _EXTERN_DECL.findall(ptx))


def linked_sources_ptx(func, argtypes, cc, lineinfo=True, options=None):
    """PTX of what numba links into the kernel when it loads it (the fp16/bf16/fp8 shims of
    ``cuda.fp16`` and friends, ``cuda.declare_device`` sources and ``link=`` files, the
    device-runtime functions of cooperative groups): see :func:`library_link_ptx`."""
    from numba.cuda.compiler import _compile_pyfunc_with_fixup
    lib, _ = _compile_pyfunc_with_fixup(func, tuple(argtypes), lineinfo=lineinfo, device=False,
                                        abi="numba", cc=tuple(cc), **(options or {}))
    files = list(getattr(lib, "_linking_files", ()))
    files += [f for f in helper_files(lib.get_asm_str(cc=tuple(cc))) if f not in files]
    return linking_files_ptx(files, cc)


def helper_files(ptx, declared=None):
    """The CUDA C files numba-cuda's ``_Kernel`` links for the helper functions the kernel's
    PTX names (``reshape_funcs.cu``: ``numba_attempt_nocopy_reshape`` of ``a.reshape``; NRT's
    library where the PTX declares NRT functions), which numba's compile functions leave out
    (numba/cuda/dispatcher.py, ``link_to_library_functions``, ``maybe_link_nrt``).  ``ptx`` may
    be the LLVM IR with its ``declared`` functions (an LTO library has no PTX)."""
    from numba.cuda import dispatcher
    out = []
    names = getattr(dispatcher, "reshape_funcs", ())
    if any(n in ptx for n in names):
        out.append(os.path.join(os.path.dirname(os.path.abspath(dispatcher.__file__)), "reshape_funcs.cu"))
    nrt = getattr(dispatcher._Kernel, "NRT_functions", ())     # maybe_link_nrt: NRT declared -> its library
    library = getattr(dispatcher, "NRT_LIBRARY", None)
    declared = set(_EXTERN_DECL.findall(ptx)) if declared is None else declared
    if library is not None and nrt and any(n in declared for n in nrt):
        out.append(library)
    return out


def library_link_ptx(library, cc):
    """The PTX of numba-cuda's compiled kernel (a ``CUDACodeLibrary``) with everything numba
    links into it when it loads the module, as one module that simgpu.ptx runs and ptxas
    assembles: its own PTX, then each linking file (CUDA C++ compiled with NVRTC as numba
    compiles it, PTX as it is; see :func:`linking_file_ptx`), then simgpu's definitions of
    the device-runtime functions it calls (``sass/devrt.py``: cooperative groups)."""
    cc = tuple(cc)
    lto = library_lto(library)
    memo = library.__dict__.setdefault("_simgpu_linked_ptx", {})   # numba links once per cc too
    ptx = memo.get((cc, lto))
    if ptx is None:
        files = list(getattr(library, "_linking_files", ()))
        if lto:         # as numba-cuda's get_cubin with the library's lto: LTO-IR, nvJitLink -lto
            lines = "Debug Info Version" in library.get_llvm_str()
            ltoir = (_ltoir_linkable_with_lines(library, cc)
                     if lines and any(_linking_source(f)[1] in ("cu", "ltoir") for f in files)
                     else library.get_ltoir(cc=cc))
            ptx = lto_link(ltoir, files, cc, lines, entry=getattr(library, "_entry_name", None))
        else:
            ptx = link_ptx(library.get_asm_str(cc=cc), linking_files_ptx(files, cc))
        memo[(cc, lto)] = ptx
    return ptx


def library_lto(library):
    """Whether numba-cuda's compiled kernel ``library`` (a ``CUDACodeLibrary``) runs its LTO
    program: ``SIMGPU_LTO`` on/off, else the library's own ``lto`` (numba-cuda's decorator
    decided it: ``cuda.jit(lto=...)`` or its default), with :func:`lto_for`'s fallback and
    message where nvJitLink is missing."""
    return _lto_wanted(bool(getattr(library, "_lto", False)), settings.current().lto)


def link_ptx(ptx, extra):
    """`ptx` with the modules `extra` merged in and the device-runtime functions it still
    calls defined (``ptx`` unchanged when there is nothing to link)."""
    extra = [e for e in extra if e]
    rt = devrt.devrt_ptx(devrt.called(ptx + "\n".join(extra)))
    if rt:
        extra.append(rt)
    return merge_ptx(ptx, extra) if extra else ptx


def linking_files_ptx(files, cc):
    """PTX of each of numba's linking files (paths or LinkableCode objects), in a stable order."""
    return [linking_file_ptx(f, cc) for f in sorted(files, key=_linking_name)]


def _linking_name(obj):
    return obj if isinstance(obj, str) else f"{getattr(obj, 'name', '')}:{id(obj)}"


_MACHINE_CODE = {"a": "a static library", "lib": "a static library", "o": "an object file",
                 "cubin": "a cubin", "fatbin": "a fatbin", "ltoir": "LTO-IR"}


def linking_file_ptx(obj, cc):
    """PTX for one file that numba links: a ``.cu`` path or CUSource -> NVRTC (numba's include
    paths, relocatable device code, as numba's linker compiles it; cached), a ``.ptx`` path or
    PTXSource -> its text.  Machine code and LTO-IR (``.a .o .cubin .fatbin .ltoir`` and their
    LinkableCode classes) is a LinkError: simgpu executes PTX and cannot link them."""
    name, ext, data = _linking_source(obj)
    if ext == "cu":
        return nvrtc_ptx_cached(data, name, cc)
    if ext == "ptx":
        return data
    what = _MACHINE_CODE.get(ext, f"a file of kind {ext or '?'}")
    raise LinkError(f"the kernel links {name!r}, {what}: simgpu executes PTX, so it links CUDA C++ "
                    "sources (.cu, compiled with NVRTC), PTX (.ptx) and, with LTO, LTO-IR only, not "
                    "machine code (.a, .o, .cubin, .fatbin); pass the .cu source or its PTX instead")


def _linking_source(obj):
    """(name, kind, data) of one of numba's linking files: kind "cu", "ptx" (data: text),
    "ltoir" (bytes), or a machine-code kind (data None)."""
    if isinstance(obj, str):
        name = os.path.basename(obj)
        ext = Path(obj).suffix.lstrip(".").lower()
        if ext in ("cu", "ptx"):
            try:
                data = Path(obj).read_text()
            except OSError as e:
                raise LinkError(f"cannot read {obj!r}, a file the kernel links (link=[...]): {e}") from e
        else:
            data = None
    else:
        name = getattr(obj, "name", "<linked>")
        kind = getattr(obj, "kind", None)
        ext = "cu" if kind == "cu" else str(getattr(kind, "name", kind) or "").lower()
        ext = {"cu_jit_input_ptx": "ptx", "cu_jit_input_object": "o", "cu_jit_input_library": "a",
               "cu_jit_input_cubin": "cubin", "cu_jit_input_fatbinary": "fatbin",
               "cu_jit_input_nvvm": "ltoir"}.get(ext, ext)
        data = obj.data if ext in ("cu", "ptx", "ltoir") else None
        if isinstance(data, bytes) and ext != "ltoir":
            data = data.decode()
        return name, ext, data
    if ext == "ltoir":
        data = Path(obj).read_bytes()
    return name, ext, data


_NVRTC_MEMO = {}


def nvrtc_ptx_cached(source, name, cc):
    """:func:`nvrtc_ptx` without line information, remembered per (source, name, cc) in memory
    and in the disk cache (numba's fp16 shim is linked into every float16 kernel)."""
    key = cache.make_key("nvrtc", source, name, tuple(cc), _nvrtc_version())
    hit = _NVRTC_MEMO.get(key)
    if hit is None:
        stored = cache.load("nvrtc", key)
        hit = stored["ptx"] if stored else None
        if hit is None:
            hit = nvrtc_ptx(source, name, cc, lineinfo=False)
            cache.store("nvrtc", key, {"ptx": hit})
        _NVRTC_MEMO[key] = hit
    return hit


@functools.lru_cache(maxsize=None)
def _nvrtc_version():
    _select_nvrtc()
    from cuda.bindings import nvrtc
    _, major, minor = nvrtc.nvrtcVersion()
    return f"{major}.{minor}"


def _nvrtc_includes():
    from numba.cuda.cuda_paths import get_cuda_paths
    from numba.cuda import config as numba_config
    import numba.cuda.cudadrv.nvrtc as numba_nvrtc
    from cuda import pathfinder
    root = os.path.dirname(os.path.dirname(os.path.abspath(numba_nvrtc.__file__)))
    inc = [os.path.join(root, "include", _nvrtc_version().split(".")[0]), get_cuda_paths()["include_dir"].info]
    cccl = pathfinder.locate_nvidia_header_directory("cccl")
    if cccl is not None:
        inc.append(cccl.abs_path)
    inc.append(os.path.join(root, "memory_management"))          # numba's NRT headers
    extra = getattr(numba_config, "CUDA_NVRTC_EXTRA_SEARCH_PATHS", "") or ""
    inc += [d for d in extra.split(":") if d]
    return [d for d in inc if d and os.path.isdir(d)]


def _nvrtc_text(size_of, get, prog):
    """The bytes NVRTC's `get` (nvrtcGetPTX, nvrtcGetProgramLog) writes, read into a fresh
    writable buffer, without the terminating NUL.  (Never a ``bytes`` object: NVRTC writes
    into the buffer, and ``b" " * 1`` is CPython's cached one-byte object -- an empty log's
    size is 1 -- so writing its NUL there turned every later ``b" "`` into ``b"\\0"``.)"""
    _, size = size_of(prog)
    buf = bytearray(size)
    get(prog, buf)
    return bytes(buf).rstrip(b"\0")


def nvrtc_ptx(source, name, cc, lineinfo=True):
    """PTX of CUDA C++ `source` for compute capability `cc` (NVRTC, relocatable device code)."""
    _select_nvrtc()
    from cuda.bindings import nvrtc
    opts = [f"-arch=compute_{cc[0]}{cc[1]}", "-rdc=true"] + [f"-I{d}" for d in _nvrtc_includes()]
    if lineinfo:
        opts.append("-lineinfo")
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    try:
        err, = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            log = _nvrtc_text(nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog, prog)
            raise ToolFailedError(f"NVRTC failed on {name}: {log.decode(errors='replace').strip()}")
        buf = _nvrtc_text(nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX, prog)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return buf.decode()


def nvrtc_kernel_ptx(source, name, arch, filename="kernel.cu", options=()):
    """(PTX, entry name) of kernel `name` in CUDA C++ `source`, compiled whole-program by NVRTC
    for virtual architecture `arch` ("compute_90", "compute_90a"), with line information naming
    `filename`.  The entry name is NVRTC's lowered (mangled) name of `name` (the name itself
    for an ``extern "C"`` kernel)."""
    _select_nvrtc()
    from cuda.bindings import nvrtc
    opts = [f"-arch={arch}", "-lineinfo", *[f"-I{d}" for d in _nvrtc_includes()], *options]
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), filename.encode(), 0, [], [])
    try:
        nvrtc.nvrtcAddNameExpression(prog, name.encode())
        err, = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        log = _nvrtc_text(nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog, prog)
        log = log.decode(errors="replace").strip()
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise ToolFailedError(f"NVRTC could not compile {filename}:\n{log}")
        buf = _nvrtc_text(nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX, prog)
        err, lowered = nvrtc.nvrtcGetLoweredName(prog, name.encode())
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise ToolFailedError(f"NVRTC does not know a kernel {name!r} in {filename}")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return buf.rstrip(b"\0").decode(), lowered.decode()


_HEADER = re.compile(r"^\s*\.(version|target|address_size|file|loc)\b[^\n]*\n?", re.M)
_FUNC_START = re.compile(r"^[ \t]*(?:\.visible\s+|\.weak\s+)?\.func\s+(?:\([^)]*\)\s*)?([\w$]+)", re.M)


def merge_ptx(kernel_ptx, extra):
    """One PTX module: the kernel's, with the functions the `extra` modules define placed
    before it (after its header) and their `.extern` declarations dropped; the newest
    `.version` of all of them.  The extras lose their headers and line information (their
    `.loc`s would name the kernel's files); a function two extras define (an inline helper
    of a header both include) is kept once, as a linker keeps one weak definition."""
    defined = set()
    bodies = []
    versions = re.findall(r"^\s*\.version\s+(\d+)\.(\d+)", kernel_ptx, re.M)
    for text in extra:
        versions += re.findall(r"^\s*\.version\s+(\d+)\.(\d+)", text, re.M)
        text = _HEADER.sub("", text)
        text = _drop_functions(text, defined)
        text = _drop_entries(text)
        for name in _FUNC_START.findall(text):
            if _defines(text, name):
                defined.add(name)
        bodies.append(text)
    # an extra's .extern declaration of a function another extra defines (times4.cu calling
    # times2.cu's times2): dropped where the definition comes first, a forward declaration
    # with the definition's linkage where it comes later (ptxas refuses an .extern and a
    # definition of one name in one module, and wants a function declared before its call)
    linkage, earlier, out_bodies = {}, set(), []
    for b in bodies:
        for m in re.finditer(r"^[ \t]*(\.visible\s+|\.weak\s+)?\.func\s+(?:\([^)]*\)\s*)?([\w$]+)", b, re.M):
            if _defines(b, m.group(2)):
                linkage.setdefault(m.group(2), (m.group(1) or "").strip())
    for b in bodies:
        def declare(m):
            name = m.group(1)
            if name not in defined:
                return m.group(0)
            return "" if name in earlier else _forward_declaration(m.group(0), linkage.get(name, ""))
        out_bodies.append(_EXTERN_DECL.sub(declare, b))
        earlier |= {n for n in _FUNC_START.findall(b) if _defines(b, n)}
    bodies = out_bodies
    out = _EXTERN_DECL.sub(lambda m: "" if m.group(1) in defined else m.group(0), kernel_ptx)
    if versions:
        major, minor = max((int(a), int(b)) for a, b in versions)
        out = re.sub(r"^(\s*)\.version\s+\d+\.\d+", rf"\g<1>.version {major}.{minor}", out, count=1, flags=re.M)
    m = re.search(r"^\s*\.address_size\s+\d+[^\n]*\n", out, re.M)
    at = m.end() if m else 0
    return out[:at] + "\n" + "\n".join(bodies) + "\n" + out[at:]


def _forward_declaration(decl, linkage):
    """``.extern .func (...) f(...);`` as a declaration with the definition's `linkage`
    (``.visible``, ``.weak`` or none): ``.visible .func (...) f(...);``."""
    return re.sub(r"\.extern\s+", f"{linkage} " if linkage else "", decl, count=1)


def _function_spans(text):
    """(name, start, end, has_body) of each top-level .func in `text` (declaration or definition)."""
    out = []
    for m in _FUNC_START.finditer(text):
        i = m.end()
        depth, n = 0, len(text)
        # the parameter list, then either ';' (a declaration) or the body's braces
        while i < n and text[i] != "{" and text[i] != ";":
            i += 1
        if i >= n or text[i] == ";":
            out.append((m.group(1), m.start(), min(i + 1, n), False))
            continue
        while i < n:
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    i += 1
                    break
            i += 1
        out.append((m.group(1), m.start(), i, True))
    return out


_ENTRY_START = re.compile(r"^[ \t]*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)", re.M)


def _drop_entries(text, keep=None):
    """`text` without its kernels (.entry) but ``keep``: a linked file's own kernels (NRT's) are
    launched by numba through the driver, never called by the kernel; one module holds one entry."""
    spans = []
    for m in _ENTRY_START.finditer(text):
        if m.group(1) == keep:
            continue
        i, depth = text.find("{", m.end()), 0
        if i < 0:
            break
        while i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
            if depth == 0:
                break
        spans.append((m.start(), i))
    for a, b in reversed(spans):
        text = text[:a] + text[b:]
    return text


def _defines(text, name):
    return any(n == name and body for n, _, _, body in _function_spans(text))


def _drop_functions(text, defined):
    """`text` without the definitions (and declarations) of functions already `defined`."""
    if not defined:
        return text
    cut = [(s, e) for n, s, e, _ in _function_spans(text) if n in defined]
    for s, e in reversed(cut):
        text = text[:s] + text[e:]
    return text


_VIEWS = {}          # id(function) -> (function, its numba view): one dispatcher per device function


def numba_view(func, cuda):
    """``func`` as numba-cuda can compile it: simgpu's stand-ins (``from simgpu import cuda``,
    simgpu/frontend/stubs.py) become numba.cuda's own objects, and device functions (simgpu
    kernels with device=True, plain Python functions) become numba device functions, in the
    function's globals and closure.  ``func`` itself when it uses none of them."""
    hit = _VIEWS.get(id(func))
    if hit is not None and hit[0] is func:
        return hit[1]
    g = func.__globals__
    repl = {}
    for name in func.__code__.co_names:
        if name in g:
            r = _numba_object(g[name], cuda)
            if r is not g[name]:
                repl[name] = r
    cells = func.__closure__ or ()
    new_cells = tuple(pytypes.CellType(_numba_object(c.cell_contents, cuda)) if _filled(c) else c for c in cells)
    changed = any(a is not b for a, b in zip(cells, new_cells))
    view = func
    if repl or changed:
        view = pytypes.FunctionType(func.__code__, {**g, **repl}, func.__name__, func.__defaults__,
                                    new_cells or None)
        view.__kwdefaults__, view.__qualname__ = func.__kwdefaults__, func.__qualname__
        view.__module__ = func.__module__
    _VIEWS[id(func)] = (func, view)
    return view


def _filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _numba_object(v, cuda):
    """numba.cuda's object for one of simgpu's stand-ins, a numba device function for a
    simgpu device function or a plain Python function; ``v`` otherwise."""
    if isinstance(v, pytypes.ModuleType):
        return cuda if v.__name__ == "simgpu.cuda" else v
    path = getattr(type(v), "__name__", "") == "_Stub" and v.__dict__.get("_path")
    if path:
        obj = cuda
        for part in path.split(".")[1:]:
            obj = getattr(obj, part)
        return obj
    if getattr(v, "device", False) is True and isinstance(getattr(v, "py_func", None), pytypes.FunctionType) \
            and type(v).__module__.startswith("simgpu."):
        return _device(v.py_func, cuda)
    if isinstance(v, pytypes.FunctionType) and not v.__module__.startswith(("numba", "numpy", "simgpu.sass")):
        return _device(v, cuda)
    return v


_DEVICE = {}


def _device(fn, cuda):
    d = _DEVICE.get(id(fn))
    if d is None or d[0] is not fn:
        d = _DEVICE[id(fn)] = (fn, cuda.jit(device=True)(numba_view(fn, cuda)))
    return d[1]


def _note_source_location(exc):
    """If numba's error does not say where it happened, add a note (PEP 678; the exception's
    type and message stay numba's) naming the user's line.  numba-cuda 0.30 with numba 0.68
    loses the location: its type inference catches only its own vendored TypingError class,
    while numba core raises ``numba.core.errors.TypingError``.  The location is the ``loc`` of
    the innermost typing constraint on the traceback."""
    if not type(exc).__module__.startswith("numba") or not hasattr(exc, "add_note"):
        return
    loc, tb = None, exc.__traceback__
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        cand = getattr(owner, "loc", None) if owner is not None else None
        if getattr(cand, "filename", None) and getattr(cand, "line", None):
            loc = cand
        tb = tb.tb_next
    if loc is None or f'File "{loc.filename}", line {loc.line}' in str(exc):
        return
    text = linecache.getline(loc.filename, loc.line).strip()
    exc.add_note(f'File "{loc.filename}", line {loc.line}: {text}\n'
                 f"    (location added by simgpu.sass: numba's message above lacks it)")


def entry_name(ptx):
    """The (mangled) name of the single ``.entry`` in ``ptx``."""
    names = re.findall(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$.]+)", ptx, re.M)
    if len(names) != 1:
        raise SimGPUError(f"expected one .entry in the PTX, found {len(names)}")
    return names[0]


def numba_types_for_args(args):
    """numba types of launch arguments, exactly as numba.cuda types them at launch
    (Python int -> int64, float -> float64, numpy scalars keep their dtype, arrays -> array
    types with layout).  numba types given as arguments are kept."""
    _numba_cuda()
    from numba.core import types
    try:
        from numba.cuda.typing.typeof import Purpose, typeof
    except ImportError:  # numba's built-in CUDA target
        from numba.core.typing.typeof import Purpose, typeof
    out = []
    for i, a in enumerate(args):
        if isinstance(a, types.Type):
            out.append(a)
            continue
        t = typeof(a, Purpose.argument)
        if t is None:
            raise SimGPUError(f"argument {i} ({type(a).__name__}) has no numba type")
        out.append(t)
    return tuple(out)


# -- a numba dispatcher given to simgpu.launch: its options and explicit signatures ----------
#: cuda.jit options that change the code a kernel compiles to, with numba's defaults
#: (``cuda.compile_ptx`` takes them); a dispatcher's other options do not change its results
CODE_OPTIONS = {"fastmath": False, "opt": True, "forceinline": False, "launch_bounds": None}


def dispatcher_options(func):
    """The code-changing options (``CODE_OPTIONS``) a numba dispatcher was made with
    (``cuda.jit(fastmath=True)``) where they differ from numba's defaults; {} for a plain
    function.  A plain launch of the dispatcher compiles with them, as numba does."""
    opts = getattr(func, "targetoptions", None)
    if not isinstance(opts, dict):
        return {}
    return {k: opts[k] for k, default in CODE_OPTIONS.items() if k in opts and opts[k] != default}


def explicit_signature(func, args):
    """The argument types numba launches numba dispatcher ``func`` with for launch arguments
    ``args``, where it was made with explicit signatures (``cuda.jit("void(int32[:], f4)")``:
    numba compiles only those and casts the arguments to the one that matches): an exact match
    first, else the first whose types the arguments convert to.  None for a dispatcher that
    compiles per launch, a plain function, or no match (numba's error then comes from typing
    the arguments as given)."""
    if getattr(func, "_can_compile", True) or not hasattr(func, "overloads"):
        return None
    sigs = [tuple(s) for s in func.overloads.keys() if len(s) == len(args)]
    if not sigs:
        return None
    try:
        actual = numba_types_for_args(args)
    except Exception:
        return None
    for s in sigs:
        if s == tuple(actual):
            return s
    from numba.cuda import types
    tctx = getattr(func, "typingctx", None)

    def converts(a, f):         # an integer is an address for a pointer parameter, as numba takes it
        return (a == f or (isinstance(f, (types.CPointer, types.RawPointer)) and isinstance(a, types.Integer))
                or (tctx is not None and tctx.can_convert(a, f) is not None))
    for s in sigs:
        if all(converts(a, f) for a, f in zip(actual, s)):
            return s
    return None


def cast_to_signature(types_, args):
    """Launch arguments as numba passes them to a kernel of argument types ``types_``: scalars
    cast to the parameter's type (integers wrap, as ctypes does), an integer for a pointer
    parameter (``types.CPointer``, ``voidptr``) as a 64-bit address, tuples element-wise,
    arrays and records as they are."""
    from numba.cuda import types
    from numba.cuda.np.numpy_support import as_dtype

    def cast(t, v):
        if isinstance(t, types.BaseTuple) and isinstance(v, tuple):
            items = [cast(tt, vv) for tt, vv in zip(t, v)]
            return type(v)(*items) if hasattr(type(v), "_fields") else tuple(items)
        if isinstance(t, (types.CPointer, types.RawPointer)) and isinstance(v, (int, np.integer)):
            return np.uint64(int(v) & 0xFFFFFFFFFFFFFFFF)
        if isinstance(t, types.EnumMember):
            v, t = getattr(v, "value", v), t.dtype
        if isinstance(t, (types.Integer, types.Float, types.Complex, types.Boolean)) and \
                isinstance(v, (bool, int, float, complex, np.number, np.bool_)):
            dt = as_dtype(t)
            if isinstance(t, types.Integer) and isinstance(v, (int, np.integer)):
                bits = int(v) & ((1 << (8 * dt.itemsize)) - 1)
                return np.array(bits, dtype=f"u{dt.itemsize}").view(dt)[()]
            return np.array(v).astype(dt)[()]
        return v
    return [cast(t, v) for t, v in zip(types_, args)]
