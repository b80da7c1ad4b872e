#!/usr/bin/env python3
"""Per-opcode microbenchmarks (issue 22 item 4): issue rate and dependent latency of the SASS
opcodes the validation kernels execute most that had no measurement.

Each bench is a PTX kernel written here (so that ptxas makes the SASS opcode asked for, and
little else): a loop of R unrolled steps over U independent chains of one operation.

* throughput: U = 8 chains, 256 threads x 4 blocks per SM (32 warps per SM); every block's
  thread 0 reads %clock64 after a barrier before and after the loop, with %smid.  Per SM:
  warp-instructions of the opcode / (last end - first start) cycles, median over SMs.
* latency: U = 1 chain, one warp, R = 32 steps per iteration: cycles per step (the loop's own
  ISETP/IADD/BRA issue beside the chain, 3 per 32 steps).

The PTX is assembled on the device by its own ptxas (CUDA 13.0, as its driver) with
``-arch=sm_90``; the SASS of every bench is disassembled there (nvdisasm) and the opcodes of its
loop are counted from it: a rate is per SASS instruction of the named opcode, and a bench whose
loop holds other opcodes too says so (``loop_opcodes``).  Run locally, ``check`` assembles
every bench with the ptxas of $SIMGPU_TOOLCHAIN (or the installed one) and prints each loop.

    python validation/microbench/opcodes.py check [--only REGEX]
    python validation/microbench/opcodes.py run --out DIR [--only REGEX]     (on the GPU machine;
        needs cupy, ptxas and nvdisasm of the card's CUDA)
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

R_THR = 16          # unrolled steps per iteration, throughput kernels
U_THR = 8           # independent chains, throughput kernels
R_LAT = 32          # unrolled steps per iteration, latency kernels

# step templates: {x} the chain register, {a} {b} {c} operand registers of the chain's type
# (loaded from parameters: unknown to ptxas), {t} a scratch register of type `tt`, {p} a predicate.
# name -> (chain type, scratch type, the opcode measured (cost key), PTX of one step)
BENCHES = {
    "imad_wide_u32": ("u64", "u32", "IMAD.WIDE.U32", "cvt.u32.u64 {t}, {x};\n  mad.wide.u32 {x}, {t}, {t}, {x};"),
    "imad_hi_u32": ("u32", None, "IMAD.HI.U32", "mad.hi.u32 {x}, {x}, {a}, {b};"),
    "imad_lo": ("u32", None, "IMAD", "mad.lo.u32 {x}, {x}, {a}, {b};"),
    "iadd3": ("u32", None, "IADD3", "add.u32 {x}, {x}, {a};\n  add.u32 {x}, {x}, {b};"),
    "lea": ("u64", "u32", ("LEA", "SHF.R.S32.HI"), "cvt.u32.u64 {t}, {x};\n  cvt.s64.s32 %w, {t};\n  shl.b64 %w, %w, 2;\n"
            "  add.s64 {x}, {x}, %w;"),
    "lop3_shf": ("u32", None, ("LOP3.LUT", "SHF.L.W.U32.HI"), "xor.b32 {x}, {x}, {a};\n  shf.l.wrap.b32 {x}, {x}, {x}, 5;"),
    "shf": ("u32", None, "SHF.L.W.U32.HI", "shf.l.wrap.b32 {x}, {x}, {a}, {b};"),
    "shf_r_u64": ("u64", "u32", ("SHF.R.U64", "SHF.R.U32.HI"), "shr.u64 {x}, {x}, {t};"),
    "prmt": ("u32", None, "PRMT", "prmt.b32 {x}, {x}, {a}, 0x4321;"),
    "isetp_sel": ("u32", None, ("ISETP.GT.U32.AND", "SEL"), "setp.gt.u32 {p}, {x}, {a};\n  selp.b32 {x}, {b}, {x}, {p};"),
    "imnmx": ("s32", None, "VIMNMX", "min.s32 {x}, {x}, {a};\n  max.s32 {x}, {x}, {b};"),
    "popc": ("u32", None, "POPC", "popc.b32 {x}, {x};\n  add.u32 {x}, {x}, {a};"),
    "flo": ("u32", None, "FLO.U32", "bfind.u32 {x}, {x};\n  add.u32 {x}, {x}, {a};"),
    "brev": ("u32", None, "BREV", "brev.b32 {x}, {x};"),
    "fmnmx": ("f32", None, "FMNMX", "min.f32 {x}, {x}, {a};\n  max.f32 {x}, {x}, {b};"),
    "fsetp_fsel": ("f32", None, ("FSETP.GT.AND", "FSEL"), "setp.gt.f32 {p}, {x}, {a};\n  selp.f32 {x}, {b}, {x}, {p};"),
    "fadd": ("f32", None, "FADD", "add.rn.f32 {x}, {x}, {a};"),
    "fmul": ("f32", None, "FMUL", "mul.rn.f32 {x}, {x}, {a};"),
    "mufu_rcp": ("f32", None, "MUFU.RCP", "rcp.approx.ftz.f32 {x}, {x};\n  add.rn.f32 {x}, {x}, {a};"),
    "mufu_rsq": ("f32", None, "MUFU.RSQ", "rsqrt.approx.ftz.f32 {x}, {x};"),
    "mufu_lg2": ("f32", None, "MUFU.LG2", "lg2.approx.ftz.f32 {x}, {x};"),
    "mufu_ex2": ("f32", None, "MUFU.EX2", "ex2.approx.ftz.f32 {x}, {x};"),
    "mufu_sqrt": ("f32", None, "MUFU.SQRT", "sqrt.approx.ftz.f32 {x}, {x};"),
    "mufu_sin": ("f32", None, "MUFU.SIN", "sin.approx.ftz.f32 {x}, {x};"),
    "mufu_rcp64h": ("f64", None, "MUFU.RCP64H", "rcp.approx.ftz.f64 {x}, {x};"),
    "f2i_i2f": ("f32", "s32", "F2I.TRUNC.NTZ", "cvt.rzi.s32.f32 {t}, {x};\n  cvt.rn.f32.s32 {x}, {t};"),
    "f2i_s64_i2f": ("f32", "s64", ("F2I.S64.TRUNC", "I2F.S64"), "cvt.rzi.s64.f32 {t}, {x};\n  cvt.rn.f32.s64 {x}, {t};"),
    "f2f_f64_f32": ("f32", "f64", ("F2F.F64.F32", "F2F.F32.F64"), "cvt.f64.f32 {t}, {x};\n  cvt.rn.f32.f64 {x}, {t};"),
    "i2f_f64": ("f64", "s32", ("I2F.F64", "F2I.F64.TRUNC"), "cvt.rzi.s32.f64 {t}, {x};\n  cvt.rn.f64.s32 {x}, {t};"),
    "dadd": ("f64", None, "DADD", "add.rn.f64 {x}, {x}, {a};"),
    "dmul": ("f64", None, "DMUL", "mul.rn.f64 {x}, {x}, {a};"),
    "dsetp": ("f64", None, "DSETP.GT.AND", "setp.gt.f64 {p}, {x}, {a};\n  selp.f64 {x}, {b}, {x}, {p};"),
    "hfma2": ("b32", None, "HFMA2", "fma.rn.f16x2 {x}, {x}, {a}, {b};"),
    "shfl_bfly": ("u32", None, "SHFL.BFLY", "shfl.sync.bfly.b32 {x}, {x}, 1, 0x1f, -1;"),
    # session 31: the most-executed opcodes still estimated.  ISETP.EX: the 64-bit compare's
    # second half (ISETP, ISETP.EX and two SELs per step, all ALU); latency: one step is
    # ISETP -> ISETP.EX -> SEL
    "isetp_ex": ("u64", None, "ISETP.EX", "setp.gt.u64 {p}, {x}, {a};\n  selp.b64 {x}, {b}, {x}, {p};",
                 {"match": r"ISETP\..*\.EX", "expect": 1}),
    # VIADD (an add with an immediate) beside a LOP3: ptxas makes ~15/16 of the adds VIADD
    "viadd": ("u32", None, "VIADD", "add.u32 {x}, {x}, 0x{s}{k}37;\n  xor.b32 {x}, {x}, {a};",
              {"match": r"VIADD.*", "expect": 0.85}),
    # a branch around a block that is never entered (x != b always): per step the ALU's add and
    # ISETP, then BSSY, the taken BRA and BSYNC (10 instructions: too long for ptxas to predicate;
    # 4 steps x 8 chains in the throughput kernel, so that the loop's 9 KB stay in the i-cache)
    "bra_bssy": ("u32", None, "BRA", "add.u32 {x}, {x}, {a};\n  setp.ne.u32 {p}, {x}, {b};\n  @{p} bra SK_{s}_{k};\n"
                 + "\n".join(f"  mad.lo.u32 {{x}}, {{x}}, {{a}}, {i};" if i % 2 else f"  xor.b32 {{x}}, {{x}}, {i * 977};"
                             for i in range(10)) + "\nSK_{s}_{k}:",
                 {"match": r"BRA.*", "expect": 1, "thr_steps": 4}),
    # the same with warp-uniform values (ptxas knows the branch cannot diverge)
    "bra_uniform": ("u32", None, "BRA", "add.u32 {x}, {x}, {a};\n  setp.ne.u32 {p}, {x}, {b};\n  @{p} bra SK_{s}_{k};\n"
                    + "\n".join(f"  mad.lo.u32 {{x}}, {{x}}, {{a}}, {i};" if i % 2 else f"  xor.b32 {{x}}, {{x}}, {i * 977};"
                                for i in range(10)) + "\nSK_{s}_{k}:",
                    {"match": r"BRA.*", "expect": 1, "uniform": True, "thr_steps": 4}),
    # UMOV: an f64 immediate for each DMUL goes through a uniform register
    "umov": ("f64", None, "UMOV", "mul.rn.f64 {x}, {x}, {c64};", {"match": r"UMOV.*", "expect": 1}),
    # the uniform datapath: UIADD3 + ULOP3 chains of warp-uniform values
    "uiadd3": ("u32", None, "UIADD3", "add.u32 {x}, {x}, {a};\n  xor.b32 {x}, {x}, {b};",
               {"uniform": True, "match": r"UIADD3.*", "expect": 0.85, "lat_chains": 2}),
    # ULDC with a uniform-register index into a constant array: ULOP3 -> ULDC -> UIADD3 per step
    "uldc": ("u32", "u32", "ULDC", "and.b32 {t}, {x}, 508;\n  cvt.u64.u32 %w, {t};\n  add.u64 %w, %w, %cb;\n"
             "  ld.const.u32 {t}, [%w];\n  add.u32 {x}, {x}, {t};",
             {"uniform": True, "match": r"ULDC.*", "expect": 0.85, "lat_chains": 2, "const_words": 128}),
    # the same per thread: LDC R, c[0x3][R] (LOP3 -> LDC -> IADD per step)
    "ldc": ("u32", "u32", "LDC", "and.b32 {t}, {x}, 508;\n  cvt.u64.u32 %w, {t};\n  add.u64 %w, %w, %cb;\n"
            "  ld.const.u32 {t}, [%w];\n  add.u32 {x}, {x}, {t};",
            {"match": r"LDC", "expect": 1, "const_words": 128}),
    # session 32: the fixed-address and one-address forms the validation kernels run (the uldc /
    # ldc benches above time indexed loads: ~25 addresses a warp for ldc, which the ADU replays).
    # ldc_warp: LDC c[0x3][R] with an index that is the same in a warp (from the warp's index,
    # which ptxas does not know to be uniform): one address per warp instruction
    "ldc_warp": ("u32", "u32", "LDC", "and.b32 {t}, {x}, 508;\n  cvt.u64.u32 %w, {t};\n  add.u64 %w, %w, %cb;\n"
                 "  ld.const.u32 {t}, [%w];\n  add.u32 {x}, {x}, {t};",
                 {"match": r"LDC", "expect": 1, "const_words": 128, "warp_seed": True}),
    # ldc64_imm: chains adding constant words at fixed addresses (c[0x3][imm]), 128 different
    # words per iteration: ptxas loads them in the loop in pairs (LDC.64 R, c[0x3][imm] ->
    # IADD3 R, R, Ra, Rb), the fixed-address form the holdout runs (64 LDC.64 in its SASS).
    # (Written to make ULDC c[0x3][imm] -> UIADD3 on warp-uniform chains; ptxas 13.0.88 puts
    # them on the vector datapath instead, so ULDC's fixed-address form is still unmeasured)
    "ldc64_imm": ("u32", "u32", "LDC.64", "ld.const.u32 {t}, [cbuf+{o}];\n  add.u32 {x}, {x}, {t};",
                  {"uniform": True, "match": r"LDC\.64", "expect": 0.5, "lat_chains": 2, "const_words": 128}),
    # session 33: is the ADU one unit of the SM (0.5 a cycle shared by its 4 SMSPs) or one per
    # SMSP (0.125 each)?  The benches above ran 32 warps on every SMSP, where both read 0.5 per SM.
    # Here one warp per SM (one block of 32 threads: every instruction on one SMSP), 16 chains:
    # an SM-wide ADU lets it reach its issue bound (ldc_warp_1w: LOP3 + LDC + IMAD.IADD a step,
    # <= 0.33 LDC a cycle; ldc64_imm_1w: LDC.64 + IADD3, <= 0.5), a per-SMSP one holds both at
    # 0.125.  imad_lo_1w is the control: one warp reaches the IMAD pipe's 0.5 a cycle per SMSP
    "ldc_warp_1w": ("u32", "u32", "LDC", "and.b32 {t}, {x}, 508;\n  cvt.u64.u32 %w, {t};\n  add.u64 %w, %w, %cb;\n"
                    "  ld.const.u32 {t}, [%w];\n  add.u32 {x}, {x}, {t};",
                    {"match": r"LDC", "expect": 1, "const_words": 128, "warp_seed": True,
                     "thr_chains": 16, "thr_threads": 32, "thr_blocks_per_sm": 1, "thr_steps": 8}),
    "ldc64_imm_1w": ("u32", "u32", "LDC.64", "ld.const.u32 {t}, [cbuf+{o}];\n  add.u32 {x}, {x}, {t};",
                     {"uniform": True, "match": r"LDC\.64", "expect": 0.5, "lat_chains": 2, "const_words": 128,
                      "thr_threads": 32, "thr_blocks_per_sm": 1}),
    # uldc64_imm: ldc64_imm with 16 chains: ptxas 13.0.88 then keeps the chains on the uniform
    # datapath (ULDC.64 c[0x3][imm] -> UIADD3; checked here): ULDC's fixed-address form, the one
    # the kernels run, 32 warps per SM (the model: an issue slot, no pipe; ncu counts none)
    "uldc64_imm": ("u32", "u32", "ULDC.64", "ld.const.u32 {t}, [cbuf+{o}];\n  add.u32 {x}, {x}, {t};",
                   {"uniform": True, "match": r"ULDC(\.64)?", "expect": 0.4, "lat_chains": 16, "const_words": 256,
                    "thr_chains": 16, "thr_steps": 8}),
    "imad_lo_1w": ("u32", None, "IMAD", "mad.lo.u32 {x}, {x}, {a}, {b};",
                   {"thr_chains": 16, "thr_threads": 32, "thr_blocks_per_sm": 1}),
    # fchk: two fp32 divisions (div.rn.f32) per step, x -> b/x -> b/(b/x), so x stays where it
    # started and the slow path never runs: MUFU.RCP, FFMAs, FCHK and a branch around the
    # slow-path CALL each; for FCHK's pipe (the holdout's layernorm puts it on the XU, the table
    # had the ALU) and issue rate.  The loop also holds the slow path's never-run MOV/CALL/
    # IMAD.MOV, which the per-iteration comparison must leave out
    "fchk": ("f32", None, "FCHK", "div.rn.f32 {x}, {b}, {x};\n  div.rn.f32 {x}, {b}, {x};",
             {"match": r"FCHK", "expect": 2, "thr_steps": 4}),
    # controls: measured before on the H200 ([MB] issue_fma_f32 / fma_f32_latency, issue_fma_f64)
    "ffma": ("f32", None, "FFMA", "fma.rn.f32 {x}, {x}, {a}, {b};"),
    "dfma": ("f64", None, "DFMA", "fma.rn.f64 {x}, {x}, {a}, {b};"),
}

_REG = {"u32": ("b32", "r"), "s32": ("b32", "r"), "b32": ("b32", "r"), "u64": ("b64", "rd"),
        "s64": ("b64", "rd"), "f32": ("f32", "f"), "f64": ("f64", "fd")}
_PTY = {"u32": "u32", "s32": "s32", "b32": "b32", "u64": "u64", "s64": "s64", "f32": "f32", "f64": "f64"}


def _init(ty, reg, seed_u32, k):
    """PTX setting chain/operand register `reg` of type `ty` from the per-thread u32 seed."""
    if ty in ("u32", "s32", "b32"):
        return f"mad.lo.u32 {reg}, {seed_u32}, {2 * k + 3}, {0x9E37 * (k + 1)};"
    if ty in ("u64", "s64"):
        return f"mul.wide.u32 {reg}, {seed_u32}, {2 * k + 5};"
    if ty == "f32":
        return f"cvt.rn.f32.u32 {reg}, {seed_u32};\n  mul.f32 {reg}, {reg}, 0f3A800000;\n  add.f32 {reg}, {reg}, 0f3F8{k:01x}0000;"
    if ty == "f64":
        return (f"cvt.rn.f64.u32 {reg}, {seed_u32};\n  mul.f64 {reg}, {reg}, 0d3F50000000000000;\n"
                f"  add.f64 {reg}, {reg}, 0d3FF{k:01x}000000000000;")
    raise ValueError(ty)


def _fold(ty, reg, acc):
    """PTX folding chain register `reg` into the u32 accumulator `acc` (keeps the chain alive)."""
    if ty in ("u32", "s32", "b32"):
        return f"xor.b32 {acc}, {acc}, {reg};"
    if ty in ("u64", "s64"):
        return (f"cvt.u32.u64 %fold32, {reg};\n  xor.b32 {acc}, {acc}, %fold32;\n  shr.u64 %fold64, {reg}, 32;\n"
                f"  cvt.u32.u64 %fold32, %fold64;\n  xor.b32 {acc}, {acc}, %fold32;")
    if ty == "f32":
        return f"mov.b32 %fold32, {reg};\n  xor.b32 {acc}, {acc}, %fold32;"
    if ty == "f64":
        return f"mov.b64 %fold64, {reg};\n  cvt.u32.u64 %fold32, %fold64;\n  xor.b32 {acc}, {acc}, %fold32;"
    raise ValueError(ty)


def _f64_imm(i):
    """A distinct f64 immediate (PTX hex form) near 1.0 for step/chain index i."""
    return "0d%016X" % struct.unpack("<Q", struct.pack("<d", 1.0 + (i + 1) * 2.0 ** -30))[0]


def bench_opts(name):
    """The bench's options (the optional 5th element of its BENCHES entry): "uniform" (chains
    and operands from the parameters only, so warp-uniform: ptxas puts them on the uniform
    datapath), "after" (PTX placed after the loop's exit, once per chain and step: out-of-line
    blocks the steps branch to), "expect" (measured instructions per chain and step, default 1,
    or 2 for a pair; less where ptxas moves some steps to another opcode), "match" (a regex an
    opcode must match to count, instead of `key`), "lat_chains" (independent chains in the
    latency kernel, default 1: with one, ptxas puts a uniform chain on the vector datapath),
    "const_words" (the size of ``cbuf``), "thr_steps" (steps per chain in the throughput
    kernel, default R_THR: fewer keeps a long loop body inside the instruction cache),
    "warp_seed" (chains start from the warp's index, not the thread's: values the same in a
    warp that ptxas does not know to be uniform), "thr_chains" / "thr_threads" /
    "thr_blocks_per_sm" (the throughput kernel's chains, threads a block and blocks per SM,
    default U_THR, 256 and 4: one warp per SM puts all the work on one SMSP)."""
    b = BENCHES[name]
    return b[4] if len(b) > 4 else {}


def make_ptx(name, chains, steps):
    """PTX of bench `name` with `chains` independent chains and `steps` unrolled steps each.
    A step template may also use {s} (the step) and {k} (the chain), e.g. in labels, {c64} (an
    f64 immediate distinct for each step and chain), {o} (a distinct word offset into the
    constant array ``cbuf``, declared when the bench's "const_words" is set; %cb holds its
    address)."""
    ty, tty, _key, step = BENCHES[name][:4]
    opts = bench_opts(name)
    uni = opts.get("uniform", False)
    rty, rp = _REG[ty]
    lines = [".version 8.0", ".target sm_90", ".address_size 64", ""]
    if opts.get("const_words"):       # a constant-bank array the steps read ({o}: a distinct offset)
        lines += [f".const .align 4 .b32 cbuf[{opts['const_words']}] = {{"
                  + ", ".join(str(0x9E3779B1 * (i + 1) & 0x7FFFFFFF) for i in range(opts["const_words"])) + "};", ""]
    lines += [
             f".visible .entry bench_{name}(.param .u64 p_out, .param .u64 p_clk, .param .u32 p_n, .param .u32 p_seed)",
             "{", "  .reg .pred %p<4>;", "  .reg .pred %q<8>;", "  .reg .b32 %r<16>;", "  .reg .b64 %rd<16>;",
             "  .reg .b32 %fold32;", "  .reg .b64 %fold64;", "  .reg .b64 %w;", "  .reg .b64 %cb;",
             f"  .reg .{rty} %x<{chains}>;", f"  .reg .{rty} %a<2>;"]
    if tty:
        trty, _ = _REG[tty]
        lines.append(f"  .reg .{trty} %t<{chains}>;")
    lines += ["  ld.param.u64 %rd0, [p_out];", "  ld.param.u64 %rd1, [p_clk];", "  ld.param.u32 %r0, [p_n];",
              "  ld.param.u32 %r1, [p_seed];", "  mov.u32 %r2, %tid.x;", "  mov.u32 %r3, %ctaid.x;",
              "  mov.u32 %r4, %ntid.x;", "  mad.lo.u32 %r5, %r3, %r4, %r2;", "  add.u32 %r6, %r1, %r5;"]
    seed = "%r1" if uni else "%r6"
    if opts.get("warp_seed"):          # the warp's index (+ the seed): the same in a warp
        lines += ["  shr.u32 %r10, %r5, 5;", "  add.u32 %r11, %r1, %r10;"]
        seed = "%r11"
    for k in range(chains):
        lines.append("  " + _init(ty, f"%x{k}", seed, k))
        if tty:
            if tty in ("u32", "s32"):
                lines.append(f"  and.b32 %t{k}, %r6, {7 + k};" if ty == "u64" else f"  mov.u32 %t{k}, %r6;")
            elif tty in ("s64",):
                lines.append(f"  cvt.u64.u32 %t{k}, %r6;")
            elif tty == "f64":
                lines.append(f"  cvt.rn.f64.u32 %t{k}, %r6;")
    if ty in ("f32", "f64"):
        lines.append("  " + _init(ty, "%a0", "%r1", 11))
        lines.append("  " + _init(ty, "%a1", "%r1", 12))
    elif uni:   # integer operands from the parameters: unknown to ptxas, and warp-uniform
        w = "u64" if rty == "b64" else "u32"
        lines += [f"  ld.param.{w} %a0, [{'p_out' if w == 'u64' else 'p_n'}];",
                  f"  ld.param.{w} %a1, [{'p_clk' if w == 'u64' else 'p_seed'}];"]
    else:       # integer operands from memory (ptxas cannot fold them into the chain)
        w = "u64" if rty == "b64" else "u32"
        lines += [f"  ld.global.{w} %a0, [%rd0];", f"  ld.global.{w} %a1, [%rd0+8];"]
    if opts.get("const_words"):
        lines.append("  mov.u64 %cb, cbuf;")
    lines += ["  bar.sync 0;", "  mov.u64 %rd2, %clock64;", "  mov.u32 %r7, 0;", "LOOP:"]
    for s in range(steps):
        for k in range(chains):
            body = step.format(x=f"%x{k}", a=f"%a{s % 2}", b=f"%a{(s + 1) % 2}", t=f"%t{k}", p=f"%q{k % 8}",
                               s=s, k=k, c64=_f64_imm(s * chains + k), o=4 * (s * chains + k))
            lines.append("  " + body)
    lines += ["  add.u32 %r7, %r7, 1;", "  setp.lt.u32 %p1, %r7, %r0;", "  @%p1 bra LOOP;",
              "  bar.sync 0;", "  mov.u64 %rd3, %clock64;", "  mov.u32 %r8, 0;"]
    for k in range(chains):
        lines.append("  " + _fold(ty, f"%x{k}", "%r8"))
    lines += ["  mul.wide.u32 %rd4, %r5, 4;", "  add.u64 %rd5, %rd0, %rd4;", "  st.global.u32 [%rd5], %r8;",
              "  setp.ne.u32 %p2, %r2, 0;", "  @%p2 bra DONE;", "  mov.u32 %r9, %smid;",
              "  mul.wide.u32 %rd6, %r3, 24;", "  add.u64 %rd7, %rd1, %rd6;", "  st.global.u64 [%rd7], %rd2;",
              "  st.global.u64 [%rd7+8], %rd3;", "  cvt.u64.u32 %rd8, %r9;", "  st.global.u64 [%rd7+16], %rd8;",
              "DONE:", "  ret;"]
    if opts.get("after"):
        for s in range(steps):
            for k in range(chains):
                lines.append(opts["after"].format(x=f"%x{k}", a=f"%a{s % 2}", b=f"%a{(s + 1) % 2}",
                                                  t=f"%t{k}", p=f"%q{k % 8}", s=s, k=k))
    lines += ["}", ""]
    return "\n".join(lines)


_INS = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\b")
_LABEL = re.compile(r"^\s*(\.L_x_\d+):")
_BRA = re.compile(r"\bBRA\b.*`\((\.L_x_\d+)\)")


def loop_opcodes(sass_text):
    """{opcode with modifiers: count} of the (first backward-branching) loop in nvdisasm's text."""
    seq, labels = [], {}
    for line in sass_text.splitlines():
        m = _LABEL.match(line)
        if m:
            labels[m.group(1)] = len(seq)
            continue
        m = _INS.match(line)
        if m:
            seq.append((m.group(2), line))
    for i, (op, line) in enumerate(seq):
        b = _BRA.search(line) if op == "BRA" else None
        if b and b.group(1) in labels and labels[b.group(1)] <= i:
            return dict(collections.Counter(o for o, _ in seq[labels[b.group(1)]:i + 1]))
    return {}


def assemble(ptx, ptxas, nvdisasm, workdir, name):
    p = os.path.join(workdir, f"{name}.ptx")
    c = os.path.join(workdir, f"{name}.cubin")
    with open(p, "w") as fh:
        fh.write(ptx)
    subprocess.run([ptxas, "-arch=sm_90", "-O3", p, "-o", c], check=True, capture_output=True, text=True)
    sass = subprocess.run([nvdisasm, "-c", c], check=True, capture_output=True, text=True).stdout
    return c, sass


def count_of(key, ops, name=None):
    """Executions per loop iteration of the measured opcode(s) `key` (a name with the modifiers
    listed, counting longer ones too: "HFMA2" counts HFMA2.MMA; or a tuple of them), or of the
    opcodes matching bench `name`'s "match" regex."""
    pat = bench_opts(name).get("match") if name else None
    if pat:
        return sum(n for op, n in ops.items() if re.fullmatch(pat, op))
    keys = key if isinstance(key, tuple) else (key,)
    return sum(n for op, n in ops.items() if any(op == k or op.startswith(k + ".") for k in keys))


def expected(name):
    """Measured instructions per chain and step that bench `name` is written to make."""
    return bench_opts(name).get("expect", 2 if isinstance(BENCHES[name][2], tuple) else 1)


def _tool(name):
    tc = os.environ.get("SIMGPU_TOOLCHAIN")
    for cand in (os.environ.get(name.upper()), tc and os.path.join(tc, "nvidia", "cu13", "bin", name),
                 f"/usr/local/cuda/bin/{name}", shutil.which(name)):
        if cand and os.path.exists(cand):
            return cand
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from simgpu.sass.toolchain import find_tool
    return find_tool(name)


def check(only=None):
    ptxas, nvdisasm = _tool("ptxas"), _tool("nvdisasm")
    print("ptxas:", ptxas)
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for name, bench in BENCHES.items():
            key = bench[2]
            if only and not re.search(only, name):
                continue
            for mode, (u, r) in (("thr", (bench_opts(name).get("thr_chains", U_THR), bench_opts(name).get("thr_steps", R_THR))),
                                 ("lat", (bench_opts(name).get("lat_chains", 1), R_LAT))):
                _, sass = assemble(make_ptx(name, u, r), ptxas, nvdisasm, d, f"{name}_{mode}")
                ops = loop_opcodes(sass)
                n = count_of(key, ops, name)
                want = (u if mode == "thr" else 1) * r * expected(name)    # latency: one chain of it at least
                ok = n >= want
                bad += not ok
                print(f"{name:16s} {mode}  {str(key):18.18s} {n:4d} per iteration (want >= {want:.0f})  "
                      f"{'' if ok else 'MISSING '}{dict(sorted(ops.items()))}")
    return bad


def _sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception as exc:  # noqa: BLE001 - provenance only
        return f"unavailable ({exc})"


def run(out, only=None, reps=3):
    import cupy as cp
    ptxas, nvdisasm = _tool("ptxas"), _tool("nvdisasm")
    dev = cp.cuda.Device(0)
    props = cp.cuda.runtime.getDeviceProperties(0)
    sms = props["multiProcessorCount"]
    res = {"provenance": {
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        "sm_count": sms, "clock_khz": props.get("clockRate"),
        "ptxas": subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1],
        "ptxas_path": ptxas, "nvdisasm": nvdisasm,
        "nvidia_smi": _sh("nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,"
                          "clocks.mem,power.limit --format=csv,noheader"),
        "nvidia_smi_cuda": _sh("nvidia-smi | grep -o 'CUDA Version: [0-9.]*'"),
        "cupy": cp.__version__, "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
        "cuda_driver": cp.cuda.runtime.driverGetVersion(),
        "method": __doc__.split("\n\n")[1:3]}, "benches": {}}
    os.makedirs(out, exist_ok=True)
    sass_all = []
    work = tempfile.mkdtemp()
    n_thr, n_lat = 256, 400
    for name, bench in BENCHES.items():
        key = bench[2]
        if only and not re.search(only, name):
            continue
        rec = res["benches"][name] = {"opcode": key, "step_ptx": BENCHES[name][3]}
        o = bench_opts(name)
        for mode, (u, r, blocks, threads, n) in (("thr", (o.get("thr_chains", U_THR), o.get("thr_steps", R_THR),
                                                          o.get("thr_blocks_per_sm", 4) * sms, o.get("thr_threads", 256),
                                                          n_thr)),
                                                 ("lat", (bench_opts(name).get("lat_chains", 1), R_LAT, 1, 32,
                                                          n_lat))):
            try:
                cubin, sass = assemble(make_ptx(name, u, r), ptxas, nvdisasm, work, f"{name}_{mode}")
                sass_all.append(f"// ===== {name} {mode}\n{sass}")
                ops = loop_opcodes(sass)
                per_iter = count_of(key, ops, name)
                mod = cp.RawModule(path=cubin)
                fn = mod.get_function(f"bench_{name}")
                outb = cp.zeros(blocks * threads, dtype=cp.uint32)
                clk = cp.zeros(blocks * 3, dtype=cp.uint64)
                runs = []
                for rep in range(reps + 1):
                    fn((blocks,), (threads,), (outb, clk, cp.uint32(n), cp.uint32(12345 + rep)))
                    dev.synchronize()
                    c = clk.get().reshape(blocks, 3).astype(float)
                    if rep == 0:
                        continue               # warm-up (module load, instruction cache)
                    warps = threads // 32
                    per_sm = collections.defaultdict(list)
                    for s, e, sm in c:
                        per_sm[int(sm)].append((s, e))
                    if mode == "thr":
                        rates = []
                        for sm, se in per_sm.items():
                            cyc = max(e for _, e in se) - min(s for s, _ in se)
                            rates.append(len(se) * warps * n * per_iter / cyc)
                        rates.sort()
                        runs.append({"warp_inst_per_clk_per_sm": rates[len(rates) // 2],
                                     "min": rates[0], "max": rates[-1], "sms": len(rates)})
                    else:
                        s, e, _ = c[0]
                        runs.append({"cycles_per_step": (e - s) / (n * r), "cycles": e - s})
                rec[mode] = {"loop_opcodes": ops, "per_iteration": per_iter, "chains": u, "steps": r,
                             "blocks": blocks, "threads": threads, "iterations": n, "runs": runs}
                if not runs:        # --reps 0: one launch each (under ncu, for its pipe counts)
                    continue
                if mode == "thr":
                    v = sorted(x["warp_inst_per_clk_per_sm"] for x in runs)[len(runs) // 2]
                    rec["issue_per_clk_per_sm"] = v
                    rec["lanes_per_clk_per_sm"] = 32 * v
                else:
                    rec["latency_cycles_per_step"] = sorted(x["cycles_per_step"] for x in runs)[len(runs) // 2]
            except Exception as exc:  # noqa: BLE001 - one bench failing never stops the rest
                rec[mode] = {"error": f"{type(exc).__name__}: {str(exc)[:500]}"}
        print(f"{name:16s} {str(key):18.18s} thr {rec.get('issue_per_clk_per_sm', float('nan')):7.3f} warp-inst/clk/SM  "
              f"lat {rec.get('latency_cycles_per_step', float('nan')):6.2f} cyc/step  "
              f"{rec.get('thr', {}).get('error', '')}{rec.get('lat', {}).get('error', '')}", flush=True)
    with open(os.path.join(out, "opcodes.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    with open(os.path.join(out, "opcodes_sass.txt"), "w") as fh:
        fh.write("\n".join(sass_all))
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("check", "run"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--reps", type=int, default=3, help="timed launches per kernel after a warm-up one (0: the "
                    "warm-up only, e.g. under ncu for the pipe counts)")
    a = ap.parse_args(argv)
    if a.mode == "check":
        return 1 if check(a.only) else 0
    run(a.out or ".", a.only, a.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
