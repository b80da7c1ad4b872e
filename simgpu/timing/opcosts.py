"""Per-opcode issue rates and latencies of Hopper's SM, measured (issue 22 item 4).

Every entry comes from ``validation/microbench/opcodes.py`` run on an H100 SXM (the same
Hopper SM as the H200: per-SM opcode rates and latencies transfer; memory does not), data in
``validation/data/h100_opcodes.json`` (2026-12-07, driver 580.159.04, the card's ptxas 13.0.88,
SM cycles from %clock64).  A bench loops over one opcode; its rate is warp-instructions per SM
cycle over 32 warps x 8 independent chains, its latency the cycles per step of one dependent
chain.  Where a bench's loop holds a second opcode (a chain needs one to go on: F2I with
I2FP, MUFU.RCP with FADD, POPC with IADD3), the second one's own latency is subtracted.

``cost_key(opcode)`` names the entry an opcode with its modifiers falls under (modifiers that
do not change the cost dropped: comparison and rounding modes, .U32, .HI of SHF...).
``measured(opcode, cc)`` gives the entry (or None: the opcode is a documented estimate, its
pipe's rate and latency from the GPU spec, see docs/timing.md's opcode table).  Only compute
capability 9.x uses the table.

``units`` is how many issue intervals of its pipe (``params.TimingParams.interval``) one
instruction holds the pipe: the pipe's measured rate over the opcode's, 1 for nearly all.
``latency`` None: the bench bounds it but does not isolate it (the pipe's latency is used).

The second run (2026-12-07 16:51 UTC, the same card; ``validation/ncu_bottleneck/device_call.sh``)
measured the most-executed opcodes that were estimates: ISETP.EX, VIADD, BRA/BSSY/BSYNC, UMOV,
UIADD3 (with ULOP3), ULDC and LDC, and ran the benches under ncu for each pipe's instruction
count.  ULDC and (until the third run) LDC were not in the table: their benches time *indexed* constant loads
(``ULDC UR, c[0x3][UR]`` in a dependent chain; ``LDC R, c[0x3][R]`` with ~25 different
addresses a warp, which the ADU replays), while every ULDC/LDC the validation kernels run reads
a fixed address (``c[0x0][imm]``); the card ran those at up to 0.31 ULDC per SM cycle in a kernel
they did not bound, 5.6x the bench's 0.055 (docs/timing.md).  The third run (19:04 UTC,
``validation/data/opcodes/h100_opcodes3.json``) timed LDC with one address a warp and LDC.64 at
a fixed address: both at the ADU's 0.5 a cycle per SM, the LDC entry below (ULDC's fixed-address
form has no bench: ptxas 13.0.88 put the bench's chain on the vector datapath).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OpCost:
    pipe: str            # the simulator's pipe (ptx_trace.sim_pipe's names)
    issue_per_sm: float  # warp-instructions per SM cycle, measured
    latency: float       # cycles from issue to a dependent instruction's issue (None: not isolated)
    units: float         # pipe intervals one instruction occupies
    bench: str           # the microbenchmark (validation/microbench/opcodes.py) it comes from


def _e(pipe, rate, lat, units, bench):
    return OpCost(pipe, rate, lat, units, bench)


#: cost key -> measured cost on cc 9.x (H100, validation/data/h100_opcodes.json)
TABLE = {
    # FMA pipe: 3.905 warp-inst/clk/SM (128 lanes); 4.2-4.3 cycles
    "FFMA": _e("fp32", 3.905, 4.26, 1, "ffma"),
    "FADD": _e("fp32", 3.905, 4.23, 1, "fadd"),
    "FMUL": _e("fp32", 3.905, 4.23, 1, "fmul"),
    # HFMA2: ptxas spreads a chain over HFMA2 and HFMA2.MMA (half each): 3.75/clk/SM together;
    # 8.18 cycles per dependent step
    "HFMA2": _e("fp32", 3.751, 8.18, 1, "hfma2"),
    "HFMA2.MMA": _e("fp32", 3.751, 8.18, 1, "hfma2"),
    # FMA-heavy (IMAD) pipe: IMAD 1.998/clk/SM (64 lanes), 4.24 cycles; IMAD.HI 0.922 (half
    # rate: 2 intervals), 9.46 cycles per step (its loop also moves a register); IMAD.WIDE(.U32):
    # 0.735/clk/SM in a loop whose IADD3/IADD3.X kept the ALU 92 % busy, so no more than IMAD.HI's
    # half rate is taken; 12.28 cycles per step less the IADD3.X that carries the chain (4.27)
    "IMAD": _e("imad", 1.998, 4.24, 1, "imad_lo"),
    "IMAD.HI": _e("imad", 0.922, 9.46, 2, "imad_hi_u32"),
    "IMAD.WIDE": _e("imad", 0.735, 8.0, 2, "imad_wide_u32"),
    # ALU pipe: 1.98-1.99/clk/SM (64 lanes) for each; latency 4.1-4.3 cycles (a pair's step / 2)
    "IADD3": _e("int", 1.977, 4.27, 1, "iadd3"),
    "SHF": _e("int", 1.977, 4.27, 1, "shf"),
    "PRMT": _e("int", 1.977, 4.27, 1, "prmt"),
    "LOP3": _e("int", 1.990, 4.0, 1, "lop3_shf"),
    "LEA": _e("int", 1.994, 4.2, 1, "lea"),
    "ISETP": _e("int", 1.990, 4.13, 1, "isetp_sel"),
    "SEL": _e("int", 1.990, 4.13, 1, "isetp_sel"),
    "VIMNMX": _e("int", 1.990, 4.13, 1, "imnmx"),
    "FMNMX": _e("int", 1.992, 4.13, 1, "fmnmx"),
    "FSETP": _e("int", 1.992, 4.13, 1, "fsetp_fsel"),
    "FSEL": _e("int", 1.992, 4.13, 1, "fsetp_fsel"),
    # I2FP (int -> float on sm_90) is on the ALU, not the XU: F2I + I2FP pairs run at the XU's
    # 0.49 F2I/clk/SM; 23.16 cycles per pair less F2I's ~19
    "I2FP": _e("int", 1.99, 4.2, 1, "f2i_i2f"),
    # XU: 0.47-0.50/clk/SM (16 lanes) for every MUFU, conversion and POPC/FLO/BREV
    "MUFU.EX2": _e("sfu", 0.500, 17.01, 1, "mufu_ex2"),
    "MUFU.LG2": _e("sfu", 0.500, 17.01, 1, "mufu_lg2"),
    "MUFU.RSQ": _e("sfu", 0.500, 17.01, 1, "mufu_rsq"),
    "MUFU.SQRT": _e("sfu", 0.500, 17.01, 1, "mufu_sqrt"),
    "MUFU.RCP": _e("sfu", 0.499, 18.93, 1, "mufu_rcp"),        # 23.16 - FADD 4.23
    "MUFU.SIN": _e("sfu", 0.499, 18.65, 1, "mufu_sin"),        # 22.88 - FMUL.RZ 4.23
    "MUFU.RCP64H": _e("sfu", 0.500, 17.44, 1, "mufu_rcp64h"),
    "POPC": _e("sfu", 0.480, 18.9, 1, "popc"),                 # 23.17 - IADD3 4.27
    "FLO": _e("sfu", 0.482, 18.9, 1, "flo"),
    "BREV": _e("sfu", 0.500, 17.01, 1, "brev"),
    "F2I": _e("conv", 0.490, 18.9, 1, "f2i_i2f"),              # F2I.TRUNC.NTZ: 23.16 - I2FP 4.2
    "F2I.S64": _e("conv", 0.471, 18.0, 1, "f2i_s64_i2f"),      # pairs: 36.0 cycles per two
    "I2F.S64": _e("conv", 0.471, 18.0, 1, "f2i_s64_i2f"),
    "F2F.F64.F32": _e("conv", 0.471, 18.0, 1, "f2f_f64_f32"),
    "F2F.F32.F64": _e("conv", 0.471, 18.0, 1, "f2f_f64_f32"),
    "I2F.F64": _e("conv", 0.471, 18.0, 1, "i2f_f64"),
    "F2I.F64": _e("conv", 0.471, 18.0, 1, "i2f_f64"),
    # FP64 pipe: DADD/DMUL 1.998/clk/SM (64 lanes), 8.1 cycles; DFMA 1.776 here (3 64-bit
    # operands; the H200's issue_fma_f64 loop reached 1.96), 8.1; DSETP 0.944 with two FSELs per
    # step keeping the ALU 94 % busy (its own rate not reached), 14.16 per step less FSEL's 4.13
    "DADD": _e("fp64", 1.998, 8.10, 1, "dadd"),
    "DMUL": _e("fp64", 1.998, 8.10, 1, "dmul"),
    "DFMA": _e("fp64", 1.776, 8.10, 1, "dfma"),
    "DSETP": _e("fp64", 0.944, 10.0, 1, "dsetp"),
    # shuffles: 1.0/clk/SM (32 lanes), 24.0 cycles
    "SHFL": _e("shfl", 1.000, 24.0, 1, "shfl_bfly"),
    # -- second run (16:51 UTC): the most-executed estimated opcodes --------------------------
    # ISETP.EX (the 64-bit compare's second half): ISETP + ISETP.EX + 2 SEL per step, all ALU
    # (ncu: 513 ALU instructions per 128 ISETP.EX), 0.499 ISETP.EX/clk/SM = the ALU's 2.0 over
    # four: one interval.  Step ISETP -> ISETP.EX -> SEL 12.33 cycles less ISETP + SEL 8.27
    "ISETP.EX": _e("int", 0.499, 4.06, 1, "isetp_ex"),
    # VIADD issues on the FMA-heavy (IMAD) pipe (ncu: 120 of 120 in fmaheavy), 1.739/clk/SM
    # beside 137 ALU instructions per 120 (the ALU at 99 %: the IMAD pipe's 2.0 not reached);
    # VIADD -> LOP3 step 10.02 cycles: (32 x 10.02 - 32 LOP3 x 4.0 - 3 IADD3 x 4.27) / 29
    "VIADD": _e("imad", 1.739, 6.2, 1, "viadd"),
    # the uniform datapath: 7 UIADD3 + ULOP3 chains and one vector chain per warp, 32 warps/SM:
    # UIADD3 0.936/clk/SM and ULOP3 the same, the uniform pipe 1.87/clk/SM (0.47 per SMSP: the
    # 2-cycle interval of params.py); issue at 54 %.  Latency not isolated: the latency kernel's
    # step (10.16) is its vector chain's (VIADD -> LOP3, 10.02), the uniform step no longer
    "UIADD3": _e("uniform", 0.936, None, 1, "uiadd3"),
    "ULOP3": _e("uniform", 0.936, None, 1, "uiadd3"),
    # UMOV: no pipe (ncu counts it in none), an issue slot: 131 UMOV + 128 DMUL per iteration
    # issued at 3.98 per SM cycle (the issue limit), 1.99 UMOV/clk/SM; its latency hides under
    # the DMUL chain it feeds (8.19 cycles a step against DMUL's 8.10)
    "UMOV": _e("none", 1.990, None, 1, "umov"),
    # BRA: no pipe (ncu counts no BRA in cbu or adu), taken, on warp-uniform values: 0.776
    # BRA/clk/SM with the ALU at 60 % and issue at 59 %: bounded by the taken branches, not a
    # pipe.  Latency: the step IADD3 -> ISETP -> @P0 BRA (taken) -> next step is 28.19 cycles,
    # less 4.25 + 4.13: 19.8 cycles from the predicate to the warp's next issue.  (The model
    # has no such stall: a branch writes no register; docs/design.md lists the difference.)
    "BRA": _e("branch", 0.776, 19.8, 1, "bra_uniform"),
    # BSSY / BSYNC around the taken BRA (ncu: both in cbu, 64 per 32 steps): 0.491 steps/clk/SM
    # (0.952 CBU instructions); the step 41.11 cycles, 12.9 more than without them (not split)
    "BSSY": _e("branch", 0.491, None, 1, "bra_bssy"),
    "BSYNC": _e("branch", 0.491, None, 1, "bra_bssy"),
    # -- third run (19:04 UTC, validation/data/opcodes/h100_opcodes3.json): the fixed-address LDC
    # LDC with one address a warp (`ldc_warp`: LOP3 -> LDC c[0x3][R] -> IMAD.IADD, 32 warps/SM x 8
    # chains) 0.499 LDC/clk/SM, and LDC.64 c[0x3][imm] (`ldc64_imm`) 0.492: both the ADU's 0.5 a
    # cycle (GPU.adu_per_sm_cycle), one ncu ADU count each.  Latency: the step 38.33 cycles less
    # LOP3 4.0 and IMAD.IADD 4.24 (ldc64_imm's loads leave the chain: no latency of LDC.64 alone)
    "LDC": _e("adu", 0.499, 30.1, 1, "ldc_warp"),
}

#: base opcode -> modifiers kept in its cost key (the others do not change the cost)
_KEEP = {
    "IMAD": ("HI", "WIDE"),
    "ISETP": ("EX",),                   # the 64-bit compare's second half (isetp_ex)
    "HFMA2": ("MMA",),
    "MUFU": None,                       # the function: all kept (EX2, RSQ, ...)
    "F2F": ("F64", "F32", "F16", "BF16"),
    "F2I": ("S64", "U64", "F64"),
    "I2F": ("S64", "U64", "F64", "F16"),
    "LDG": ("64", "128", "U8", "S8", "U16", "S16", "CONSTANT"),
    "STG": ("64", "128", "U8", "U16"),
    "LDS": ("64", "128", "U8", "S8", "U16", "S16"),
    "STS": ("64", "128", "U8", "U16"),
    "LDL": ("64", "128"), "STL": ("64", "128"),
    "ATOMG": None, "ATOMS": None, "ATOM": None, "RED": None, "REDG": None,
}


def cost_key(opcode):
    """The table's key for a SASS opcode with its modifiers: "IMAD.WIDE.U32" -> "IMAD.WIDE",
    "MUFU.EX2" -> "MUFU.EX2", "F2I.S64.TRUNC" -> "F2I.S64", "ISETP.GE.U32.AND" -> "ISETP"."""
    parts = opcode.upper().split(".")
    base, mods = parts[0], parts[1:]
    keep = _KEEP.get(base, ())
    if keep is None:
        kept = [m for m in mods if m not in ("E", "STRONG", "GPU", "SYS", "SM", "FTZ")]
    else:
        kept = [m for m in mods if m in keep]
    if base == "F2F" and len(kept) > 2:
        kept = kept[:2]
    return ".".join([base, *kept])


def measured(opcode, cc=(9, 0)):
    """The measured OpCost of ``opcode`` on compute capability ``cc``, or None (an estimate)."""
    if tuple(cc)[0] != 9:
        return None
    return TABLE.get(cost_key(opcode))


__all__ = ["OpCost", "TABLE", "cost_key", "measured"]
