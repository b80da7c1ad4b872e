"""SASS opcode -> the execution pipe Nsight Compute names for it (Volta..Hopper, tuned for sm_90).

Pipe names are those of the ``smsp__inst_executed_pipe_<name>`` metrics and of the
"Pipelines" section of the Nsight Compute Kernel Profiling Guide
(https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html#pipelines):

* ``fma``      FP32 FADD/FMUL/FFMA (on sm_86+ and sm_90 the logical union of fmaheavy+fmalite)
* ``fmaheavy`` integer multiply IMAD/IMUL and integer dot products IDP (guide: "FMAHeavy ...
               also performs integer multiplication operations (IMUL, IMAD) ... integer dot
               products"); IMAD.MOV/IMAD.IADD/IMAD.SHL are IMADs, so they issue here too;
               VIADD (measured: ncu counts every VIADD of validation/microbench/opcodes.py's
               `viadd` bench and of the holdout in fmaheavy, none in alu)
* ``alu``      bit manipulation, logic, integer add/compare/shift, FP compare/min/max/select,
               fast FP32->FP16 conversion (F2FP) (guide: "most bit manipulation and logic
               instructions ... integer instructions, excluding IMAD and IMUL")
* ``xu``       transcendentals (MUFU), int<->float conversions, and the quarter-rate bit ops
               (POPC/FLO/BREV: 16 results/clk/SM in the CUDA C Programming Guide's arithmetic
               throughput table, the XU rate); FCHK, the fp32 division's range check (the
               holdout's layernorm on the H100: its 2 FCHK a warp are in ncu's XU count, not
               the ALU's; no bench)
* ``lsu``      loads/stores/atomics to global, local, shared (and generic) memory, S2R, SHFL
               (guide: "also issues special register reads (S2R), shuffles")
* ``adu``      indirect branches (BRX/JMX), constant loads (LDC) and block barriers (BAR)
               (guide: "address divergence handling for branches/jumps ... constant loads and
               block-level barrier instructions"); measured (H100, ncu 2025.3, the holdout's
               per-pipe counts, validation/ncu_bottleneck/pipe_counts.py): every S2UR
               (SR_CTAID.X, SR_CgaCtaId) and the S2R that read a CTA-uniform register
               (SR_CTAID.*, SR_CgaCtaId); S2R of SR_TID.* stays on the LSU. ``pipe_of`` needs
               the operands for S2R (``SassInstr.pipe`` passes them)
* ``cbu``      calls, exits and warp convergence barriers (BSSY/BSYNC/WARPSYNC); not BRA
* ``uniform``  the uniform datapath: U* instructions (UIADD3, ULOP3, ...), R2UR, VOTEU
* ``none``     counted in no ``sm__inst_executed_pipe_*`` metric: BRA, ULDC and UMOV (measured
               on an H100 with ncu 2025.3: the opcode benches' BRA, ULDC and UMOV and the
               holdout's are in no pipe's count; validation/ncu_bottleneck/pipe_counts.py,
               docs/timing.md "Bottleneck agreement"), NOP, DEPBAR, ...
* ``fp64``     DADD/DMUL/DFMA/DSETP   ``fp16``  HADD2/HMUL2/HFMA2 (sm_80 and sm_90; on sm_86/89
               the guide says FP16 runs on the fma pipe)
* ``tensor``   HMMA/IMMA/DMMA/BMMA and Hopper's warpgroup HGMMA/IGMMA/QGMMA/BGMMA
* ``tex``      texture and surface instructions

Opcode names are those of the CUDA Binary Utilities "Instruction Set Reference"
(https://docs.nvidia.com/cuda/cuda-binary-utilities/index.html#instruction-set-ref), Hopper table.
Entries in ``UNCERTAIN`` are inferred (from throughput tables or compiler behaviour) rather than
stated by NVIDIA.  An opcode not in the table maps to ``"unknown"``; ``unknown_opcodes`` lists
them - nothing here raises.
"""
from __future__ import annotations

_TABLE = {
    "fma": "FFMA FFMA32I FADD FADD32I FMUL FMUL32I FSWZADD",
    "fmaheavy": "IMAD IMAD32I IMUL IMUL32I IDP IDP4A IMADSP VIADD",
    "alu": ("IADD3 IADD IADD32I IABS IMNMX VIMNMX VIMNMX3 VIADDMNMX ISETP ISCADD ISCADD32I LEA "
            "LOP LOP3 LOP32I SHF SHL SHR SGXT BMSK PRMT SEL FSEL FSET FSETP FMNMX PLOP3 "
            "PSETP P2R R2P MOV MOV32I CS2R F2FP I2FP F2IP I2IP VABSDIFF VABSDIFF4 VOTE "
            "LEPC ELECT"),
    "xu": "MUFU F2F F2I I2F I2I FRND POPC FLO BREV FCHK",
    "lsu": ("LD LDG LDL LDS LDSM ST STG STL STS STSM ATOM ATOMG ATOMS RED REDG REDAS ATOMAS "
            "LDGSTS LDGDEPBAR MEMBAR FENCE ERRBAR CCTL CCTLL CCTLT MATCH SHFL S2R QSPC "
            "ARRIVES SYNCS REDUX"),
    "adu": "LDC BAR BRX JMX S2UR",
    "cbu": ("BRXU JMP JMXU CALL RET EXIT BREAK BSSY BSYNC WARPSYNC KILL BPT YIELD NANOSLEEP "
            "BMOV RTT PREEXIT"),
    "uniform": ("UIADD3 UIMAD UISETP ULOP ULOP3 ULOP32I USHF USHL USHR ULEA USEL "
                "UPRMT UFLO UPOPC UBREV UBMSK USGXT UP2UR UPLOP3 UPSETP UR2UP R2UR VOTEU "
                "UCLEA UBLKCP UBLKRED UBLKPF UTMALDG UTMASTG UTMAPF UTMACCTL UTMACMDFLUSH "
                "UTMAREDG USETMAXREG UVIADD UVIMNMX"),
    "fp64": "DADD DMUL DFMA DSETP DMNMX",
    "fp16": "HADD2 HMUL2 HFMA2 HSET2 HSETP2 HMNMX2",
    "tensor": "HMMA IMMA DMMA BMMA HGMMA IGMMA QGMMA BGMMA WARPGROUP",
    "tex": "TEX TLD TLD4 TMML TXD TXQ SUST SULD SUATOM SURED SUQUERY",
    "none": "NOP DEPBAR B2R PMTRIG SETCTAID SETLMEMBASE GETLMEMBASE BRA ULDC UMOV",
}

#: base mnemonic -> pipe
PIPES = {op: pipe for pipe, ops in _TABLE.items() for op in ops.split()}

#: entries inferred rather than read in NVIDIA documentation
UNCERTAIN = frozenset(
    "VIMNMX VIMNMX3 VIADDMNMX FCHK CS2R I2FP F2IP I2IP VOTE ELECT LEPC POPC FLO BREV "
    "SYNCS ARRIVES REDUX MATCH R2UR S2UR UBLKCP UTMALDG UTMASTG UTMAPF HSET2 HSETP2 HMNMX2 "
    "WARPGROUP DEPBAR FSWZADD HFMA2".split())  # HFMA2.MMA: ptxas' register-zeroing idiom

_FP16_ON_FMA = {(8, 6), (8, 7), (8, 9)}  # GA10x/AD10x: "the FMA pipeline handles FP16"

# S2R of these special registers issues on the ADU (measured, module doc); other S2Rs on the LSU
_S2R_ADU = ("SR_CTAID", "SR_CGACTAID")


def base_opcode(opcode):
    """Mnemonic without modifiers: "IMAD.WIDE.U32" -> "IMAD", "LDG.E.128" -> "LDG"."""
    return opcode.split(".", 1)[0]


def pipe_of(opcode, cc=(9, 0), operands=None):
    """Pipe of a SASS opcode (with or without modifiers) on compute capability ``cc``;
    "unknown" when the opcode is not in the table.  ``operands`` (the instruction's operand
    text): an S2R of a CTA-uniform special register is on the ADU (without operands: the LSU)."""
    full = opcode.upper()
    base = base_opcode(full)
    pipe = PIPES.get(base, "unknown")
    if base == "S2R" and operands and any(sr in operands.upper() for sr in _S2R_ADU):
        return "adu"
    if pipe == "fp16" and tuple(cc) in _FP16_ON_FMA:
        return "fma"
    return pipe


def unknown_opcodes(opcodes):
    """Sorted base mnemonics among ``opcodes`` that the table does not know."""
    return sorted({base_opcode(o.upper()) for o in opcodes} - PIPES.keys())


def pipe_histogram(opcodes, cc=(9, 0)):
    """{pipe: count} over a sequence of SASS opcodes."""
    out = {}
    for o in opcodes:
        p = pipe_of(o, cc)
        out[p] = out.get(p, 0) + 1
    return out
