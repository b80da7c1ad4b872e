"""What numba's ``lineinfo=True`` costs the kernels of a whole program (`simgpu run`
compiles every kernel with it, so the reports name source lines; docs/host.md).

    python benchmarks/bench_lineinfo.py [--repeat 5]

For each kernel of examples/numba_program.py, compiled for the H200 (sm_90) with and without
line info: the NVVM compile time (numba-cuda's ``compile_ptx`` through simgpu.sass, median of --repeat, the two
settings interleaved), whether the PTX differs beyond its debug directives (``.loc``,
``.file`` and the ``.debug_*`` sections), and what ptxas makes of each (without ``-lineinfo``,
as the driver loads it): registers, and whether the SASS (the cubin's code sections) is the
same.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import struct
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))

from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()

import numba_program  # noqa: E402
from simgpu.sass.ptxas import assemble  # noqa: E402
from simgpu.sass.toolchain import compile_ptx  # noqa: E402

CC = (9, 0)
_DEBUG = re.compile(r"^\s*(\.loc|\.file)\b.*$", re.M)
_DEBUG_SECTION = re.compile(r"^\s*\.section\s+\.debug_\w+\s*\{.*?^\s*\}", re.M | re.S)
_MANGLED = re.compile(r"_ZN\w+")        # numba's names carry the compile options (ABI tags)
_SMEM = re.compile(r"_cudapy_smem_\d+")  # numba numbers shared arrays per compile


def kernels():
    """(name, python function, argument types) of the example program's kernels."""
    from numba.cuda import types
    from numba.cuda.random import xoroshiro128p_type
    f32 = types.float32[::1]
    return [("block_sums", numba_program.block_sums.py_func, (f32, f32)),
            ("scale", numba_program.scale.py_func, (types.float32, f32)),
            ("uniforms", numba_program.uniforms.py_func, (xoroshiro128p_type[::1], f32))]


def code_only(ptx):
    """The PTX without its line table and debug sections (what code generation made), with
    numba's mangled names (which encode the compile options) and its numbered shared arrays'
    names replaced by placeholders."""
    ptx = _SMEM.sub("SMEM", _MANGLED.sub("NAME", _DEBUG.sub("", _DEBUG_SECTION.sub("", ptx))))
    return "\n".join(ln for ln in ptx.splitlines() if ln.strip())


def text_sections(cubin):
    """The bytes of the cubin's ``.text.*`` sections (the SASS), by section name."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + k * shentsize) for k in range(shnum)]
    strtab = heads[shstrndx][4]
    out = {}
    for h in heads:
        name = cubin[strtab + h[0]:cubin.index(b"\0", strtab + h[0])].decode()
        if name.startswith(".text."):
            out[name] = cubin[h[4]:h[4] + h[5]]
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args(argv)
    print(f"numba-cuda compile_ptx for sm_{CC[0]}{CC[1]}, median of {a.repeat}; ptxas without -lineinfo")
    print(f"{'kernel':12s} {'compile off':>12s} {'compile on':>11s} {'PTX lines':>14s} "
          f"{'same code':>9s} {'regs off/on':>11s} {'same SASS':>9s}")
    for name, fn, sig in kernels():
        times, ptx = {False: [], True: []}, {}
        for _ in range(a.repeat):
            for li in (False, True):
                t0 = time.perf_counter()
                ptx[li], _ = compile_ptx(fn, sig, CC, lineinfo=li)
                times[li].append(time.perf_counter() - t0)
        built = {li: assemble(ptx[li], CC, lineinfo=False) for li in ptx}
        regs = [next(iter(built[li][1].functions.values())).registers for li in (False, True)]
        sass = [sorted(text_sections(built[li][0]).values()) for li in (False, True)]
        print(f"{name:12s} {statistics.median(times[False]) * 1e3:9.0f} ms {statistics.median(times[True]) * 1e3:8.0f} ms "
              f"{len(ptx[False].splitlines()):6d} -> {len(ptx[True].splitlines()):<5d} "
              f"{str(code_only(ptx[False]) == code_only(ptx[True])):>9s} {regs[0]:>5} / {regs[1]:<4} "
              f"{str(sass[0] == sass[1]):>9s}")


if __name__ == "__main__":
    main()
