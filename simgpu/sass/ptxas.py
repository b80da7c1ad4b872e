"""Running ``ptxas -v`` on PTX and reading the resource facts it prints.

``assemble(ptx, cc)`` writes the PTX to a temporary folder, runs
``ptxas -arch=sm_XY -v [-lineinfo] in.ptx -o out.cubin`` and returns the cubin bytes with a
``PtxasReport``: per entry/function the registers, barriers, stack frame, spill stores/loads,
static shared memory and constant banks, exactly as ptxas states them.  The cubin's ELF section
sizes are read too (``.nv.constant0.<kernel>`` = parameter bank, ``.nv.shared.<kernel>`` =
static shared memory), since CUDA 13's ptxas no longer prints ``cmem[0]``.

ptxas -v lines parsed (CUDA 12/13 wording)::

    ptxas info    : 16 bytes gmem, 64 bytes cmem[3]
    ptxas info    : Compiling entry function '_Z...' for 'sm_90'
    ptxas info    : Function properties for _Z...
        256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem
"""
from __future__ import annotations

import re
import struct
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .toolchain import check_arch, run_tool, tool_version


@dataclass
class FunctionResources:
    """What ptxas reports for one entry (kernel) or non-inlined device function."""
    name: str
    kind: str = "function"          # "entry" or "function"
    registers: int | None = None    # per thread, as allocated by ptxas
    barriers: int | None = None     # named barriers used (bar.sync ids)
    stack_frame: int = 0            # bytes per thread of local-memory stack frame
    spill_stores: int = 0           # bytes per thread
    spill_loads: int = 0            # bytes per thread
    cumulative_stack: int | None = None  # bytes, including callees
    shared_bytes: int = 0           # static shared memory ("smem"), bytes per block
    local_bytes: int | None = None  # "lmem" where ptxas prints it (older versions)
    cmem: dict = field(default_factory=dict)   # constant bank -> bytes, as printed
    param_bank_bytes: int | None = None        # size of .nv.constant0.<name> in the cubin
    compile_time_ms: float | None = None

    @property
    def uses_local_memory(self):
        """True when the function needs per-thread local memory (stack frame or spills)."""
        return bool(self.stack_frame or self.spill_stores or self.spill_loads or self.local_bytes)


@dataclass
class PtxasReport:
    """All ptxas -v facts for one PTX module on one architecture."""
    arch: str                       # "sm_90"
    ptxas_version: str
    gmem_bytes: int = 0             # module-scope global variables
    cmem: dict = field(default_factory=dict)   # module-scope constant banks -> bytes
    functions: dict = field(default_factory=dict)  # name -> FunctionResources
    warnings: list = field(default_factory=list)
    log: str = ""

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, d):
        d = dict(d)
        d["functions"] = {k: FunctionResources(**{**v, "cmem": _int_keys(v["cmem"])})
                          for k, v in d["functions"].items()}
        d["cmem"] = _int_keys(d["cmem"])
        return cls(**d)


def _int_keys(d):
    return {int(k): v for k, v in d.items()}


_COMPILING = re.compile(r"Compiling entry function '([^']+)' for '(\w+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(.*)")
_BYTES = re.compile(r"(\d+) bytes (gmem|smem|lmem|cmem|cumulative stack size)(?:\[(\d+)\])?")
_BARRIERS = re.compile(r"used (\d+) barriers")
_TIME = re.compile(r"Compile time = ([\d.]+) ms")


def parse_ptxas_log(log, arch, version=""):
    """PtxasReport from the text ``ptxas -v`` printed (stdout + stderr)."""
    rep = PtxasReport(arch=arch, ptxas_version=version, log=log)
    cur = None

    def func(name, kind=None):
        f = rep.functions.setdefault(name, FunctionResources(name=name))
        if kind:
            f.kind = kind
        return f

    for line in log.splitlines():
        if "warning" in line.lower():
            rep.warnings.append(line.strip())
        if m := _COMPILING.search(line):
            cur = func(m.group(1), "entry")
        elif m := _PROPS.search(line):
            cur = func(m.group(1))
        elif (m := _STACK.search(line)) and cur is not None:
            cur.stack_frame, cur.spill_stores, cur.spill_loads = map(int, m.groups())
        elif (m := _USED.search(line)) and cur is not None:
            cur.registers = int(m.group(1))
            _apply_bytes(cur, m.group(2))
            if b := _BARRIERS.search(m.group(2)):
                cur.barriers = int(b.group(1))
        elif (m := _TIME.search(line)) and cur is not None:
            cur.compile_time_ms = float(m.group(1))
        elif "bytes gmem" in line or ("cmem[" in line and "registers" not in line):
            for n, what, bank in _BYTES.findall(line):
                if what == "gmem":
                    rep.gmem_bytes = int(n)
                elif what == "cmem":
                    rep.cmem[int(bank)] = int(n)
    return rep


def _apply_bytes(f, text):
    for n, what, bank in _BYTES.findall(text):
        n = int(n)
        if what == "smem":
            f.shared_bytes = n
        elif what == "lmem":
            f.local_bytes = n
        elif what == "cmem":
            f.cmem[int(bank)] = n
        elif what == "cumulative stack size":
            f.cumulative_stack = n


def elf_section_sizes(data):
    """{section name: size} of an ELF64 little-endian file (a cubin)."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError("not an ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    str_off = headers[shstrndx][4]

    def name(off):
        end = data.index(b"\0", str_off + off)
        return data[str_off + off:end].decode()

    return {name(h[0]): h[5] for h in headers}


_TARGET = re.compile(r"^\s*\.target\s+sm_\d+([af]?)\b", re.M)


def arch_suffix(ptx):
    """'a' (or 'f') when the PTX targets an architecture-specific sm_XYa (Triton's and NVRTC's
    compute_90a output: wgmma, setmaxnreg): ptxas -arch=sm_90 refuses such PTX, sm_90a takes it."""
    m = _TARGET.search(ptx)
    return m.group(1) if m else ""


def assemble(ptx, cc, lineinfo=True, extra_args=()):
    """Run ptxas on ``ptx`` for compute capability ``cc``; return (cubin bytes, PtxasReport)."""
    check_arch(cc)
    arch = f"sm_{cc[0]}{cc[1]}" + arch_suffix(ptx)
    with tempfile.TemporaryDirectory(prefix="simgpu-ptxas-") as tmp:
        src, out = Path(tmp) / "kernel.ptx", Path(tmp) / "kernel.cubin"
        src.write_text(ptx)
        args = [f"-arch={arch}", "-v", *(["-lineinfo"] if lineinfo else []), *extra_args,
                src, "-o", out]
        proc = run_tool("ptxas", args)
        cubin = out.read_bytes()
    rep = parse_ptxas_log(proc.stdout + proc.stderr, arch, tool_version("ptxas"))
    sizes = elf_section_sizes(cubin)
    for name, f in rep.functions.items():
        f.param_bank_bytes = sizes.get(f".nv.constant0.{name}")
        shared = sizes.get(f".nv.shared.{name}")
        if shared is not None and not f.shared_bytes:
            f.shared_bytes = shared
    return cubin, rep
