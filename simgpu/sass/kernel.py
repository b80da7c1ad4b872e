"""Python kernel -> PTX -> ptxas facts + SASS mapped to PTX and source lines, with caching.

``compile_kernel(py_func, args_or_types, gpu="H200")`` is the entry point: it types the
arguments as numba.cuda would at launch, compiles to PTX with numba-cuda (cached under a key
made of the function's fingerprint, the argument types, the compute capability and the
numba/NVVM versions), then ``analyze_ptx`` runs ptxas and nvdisasm on it (cached under the
PTX text, compute capability and ptxas/nvdisasm versions).  A second call with the same
inputs runs neither numba nor any tool.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import cache
from .disasm import KernelSass, disassemble
from .fingerprint import function_fingerprint
from .opclasses import pipe_histogram, unknown_opcodes
from .ptxas import FunctionResources, PtxasReport, assemble
from .ptxlines import SourceLoc, number_ptx_lines
from . import nvjitlink
from .toolchain import (cc_for_gpu, check_arch, compile_ptx_linked, dispatcher_options, frontend_versions,
                        lto_for, numba_types_for_args, py_function, selected_toolchain, tool_version)


@dataclass
class PtxFacts:
    """What ptxas and nvdisasm say about one PTX module on one architecture."""
    ptxas: PtxasReport
    kernels: dict                      # entry/function name -> KernelSass
    ptx_source: dict                   # PTX line -> SourceLoc | None, every instruction line
    from_cache: bool = False

    def to_dict(self):
        return {"ptxas": self.ptxas.to_dict(),
                "kernels": {k: v.to_dict() for k, v in self.kernels.items()},
                "ptx_source": {str(k): (v.to_list() if v else None)
                               for k, v in self.ptx_source.items()}}

    @classmethod
    def from_dict(cls, d, from_cache=False):
        return cls(ptxas=PtxasReport.from_dict(d["ptxas"]),
                   kernels={k: KernelSass.from_dict(v) for k, v in d["kernels"].items()},
                   ptx_source={int(k): (SourceLoc.from_list(v) if v else None)
                               for k, v in d["ptx_source"].items()},
                   from_cache=from_cache)


def analyze_ptx(ptx, cc, use_cache=True):
    """PtxFacts for PTX text ``ptx`` compiled for compute capability ``cc`` (e.g. (9, 0))."""
    cc = tuple(cc)
    key = cache.make_key("facts", ptx, cc, tool_version("ptxas"), tool_version("nvdisasm"))
    if use_cache and (hit := cache.load("facts", key)) is not None:
        return PtxFacts.from_dict(hit, from_cache=True)
    numbered = number_ptx_lines(ptx)
    cubin, report = assemble(numbered.text, cc, lineinfo=True)
    facts = PtxFacts(ptxas=report, kernels=disassemble(cubin, numbered),
                     ptx_source=dict(numbered.source))
    if use_cache:
        cache.store("facts", key, facts.to_dict())
    return facts


@dataclass
class CompiledKernel:
    """Everything learnt by compiling one kernel for one GPU and argument types."""
    name: str                 # the Python function's name
    entry: str                # mangled PTX/SASS entry name
    cc: tuple
    argtypes: list            # numba type names, e.g. ["float32", "array(float32, 1d, C)"]
    ptx: str
    facts: PtxFacts
    versions: dict = field(default_factory=dict)
    ptx_from_cache: bool = False

    @property
    def arch(self):
        """The architecture ptxas assembled for: sm_90, or sm_90a for sm_90a PTX (wgmma)."""
        return self.facts.ptxas.arch if self.facts is not None else f"sm_{self.cc[0]}{self.cc[1]}"

    @property
    def resources(self) -> FunctionResources:
        """ptxas' registers / stack / spills / shared memory of the entry."""
        return self.facts.ptxas.functions[self.entry]

    @property
    def sass(self) -> KernelSass:
        return self.facts.kernels[self.entry]

    @property
    def ptx_source(self):
        """PTX line -> user SourceLoc (None: code with no user line) for every instruction."""
        return self.facts.ptx_source

    @property
    def from_cache(self):
        return self.ptx_from_cache and self.facts.from_cache

    def ptx_line(self, n):
        """Text of PTX line ``n`` (1-based)."""
        return self.ptx.splitlines()[n - 1].strip()

    def sass_by_source_line(self, include_subroutines=True):
        """(file, line) -> SASS opcodes generated for that user line (None key: no line)."""
        out = {}
        for ins in self.sass.instructions:
            loc = self.ptx_source.get(ins.ptx_line)
            out.setdefault((loc.file, loc.line) if loc else None, []).append(ins.opcode)
        if include_subroutines:
            for name, lines in self.sass.calls.items():
                for ln in lines:
                    loc = self.ptx_source.get(ln)
                    key = (loc.file, loc.line) if loc else None
                    out.setdefault(key, []).extend(i.opcode for i in self.sass.subroutines[name])
        return out

    def pipe_histogram(self, include_subroutines=False):
        """{pipe: static instruction count} of the kernel's SASS."""
        ops = [i.opcode for i in self.sass.instructions]
        if include_subroutines:
            ops += [i.opcode for v in self.sass.subroutines.values() for i in v]
        return pipe_histogram(ops, self.cc)

    def unknown_opcodes(self):
        """SASS mnemonics of this kernel that opclasses does not classify."""
        ops = [i.opcode for i in self.sass.instructions]
        ops += [i.opcode for v in self.sass.subroutines.values() for i in v]
        return unknown_opcodes(ops)


#: part of the PTX cache's key: 2 since entries of linked PTX (merged before the .extern fix,
#: cached with no fingerprint of the linked files) and of colliding fingerprints were stored
PTX_KEY_VERSION = 2


def compile_kernel(py_func, args_or_types, gpu="H200", cc=None, use_cache=True, lto=None):
    """Compile kernel ``py_func`` (plain function or @cuda.jit dispatcher) for launch arguments
    (arrays/scalars) or numba types ``args_or_types`` on ``gpu`` (or compute capability ``cc``).
    ``lto``: the kernel's own ``lto=`` (``simgpu.jit(lto=...)``); whether the LTO program is
    compiled is decided by ``toolchain.lto_for`` (numba-cuda's rule, ``SIMGPU_LTO``)."""
    cc = tuple(cc) if cc is not None else cc_for_gpu(gpu)
    check_arch(cc)
    argtypes = numba_types_for_args(args_or_types)
    type_names = [str(t) for t in argtypes]
    front = frontend_versions()
    options = dispatcher_options(py_func)       # cuda.jit(fastmath=True, ...): part of the code
    use_lto = lto_for(py_func, lto)
    key = cache.make_key("ptx", PTX_KEY_VERSION, function_fingerprint(py_func), type_names, cc, front,
                         *([options] if options else []), *([("lto", nvjitlink.version())] if use_lto else []))
    hit = cache.load("ptx", key) if use_cache else None
    if hit is not None:
        ptx, entry = hit["ptx"], hit["entry"]
    else:
        ptx, entry, linked = compile_ptx_linked(py_func, argtypes, cc, lineinfo=True, lto=use_lto)
        if use_cache and not linked:        # linked files are not in the fingerprint: not kept
            cache.store("ptx", key, {"ptx": ptx, "entry": entry})
    facts = analyze_ptx(ptx, cc, use_cache=use_cache)
    chosen = selected_toolchain()
    versions = {**front, "ptxas": tool_version("ptxas"), "nvdisasm": tool_version("nvdisasm"),
                "toolchain": chosen["root"] if chosen else None,
                "lto": nvjitlink.version() if use_lto else None}     # the LTO program, linked by this
    return CompiledKernel(name=py_function(py_func).__name__, entry=entry, cc=cc,
                          argtypes=type_names, ptx=ptx, facts=facts, versions=versions,
                          ptx_from_cache=hit is not None)
