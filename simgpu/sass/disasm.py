"""SASS of a cubin, each instruction tied to the PTX line it came from.

``disassemble(cubin, numbered)`` runs ``nvdisasm -g -c`` on a cubin that ptxas built with
``-lineinfo`` from ``ptxlines.number_ptx_lines`` PTX; the ``//## File "...", line N`` comments
then name the *PTX* line of each SASS instruction (nvdisasm prints the comment only when the
line changes, so an instruction without one inherits the previous line; the line is reset at
each function start).

Code that ptxas places out of line - the ``$__internal_*`` subroutines such as
``$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath`` that a PTX ``div.rn.f32`` calls on
its slow path - has no line of its own.  Such subroutine SASS is kept separately
(``KernelSass.subroutines``) and attributed to the PTX lines whose SASS calls it
(``KernelSass.calls``).
"""
from __future__ import annotations

import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .opclasses import base_opcode, pipe_of
from .ptxlines import SYNTHETIC_FILE, NumberedPtx, SourceLoc
from .toolchain import run_tool

_SECTION = re.compile(r"^//-+ \.text\.(\S+)\s+-+")
_TYPE_FUNC = re.compile(r"^\s*\.type\s+([^,\s]+),@function")
_LABEL = re.compile(r"^([^\s/][^\s]*):\s*$")
_LINE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
_INSTR = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s+(@!?U?P[T\d]+\s+)?([A-Z][A-Z0-9_.]*(?:x[0-9]+)*(?:\.[A-Z0-9_.]+)?)\s*(.*?)\s*;")
_CALL_TARGET = re.compile(r"`\(([^)]+)\)")


@dataclass
class SassInstr:
    """One SASS instruction."""
    offset: int             # byte offset in its .text section
    opcode: str             # with modifiers, e.g. "ISETP.GE.U32.AND", "LDG.E.128"
    operands: str           # as nvdisasm prints them
    predicate: str = ""     # "@P0", "@!P1" or ""
    ptx_line: int | None = None  # line in the original PTX (None: no line-table entry)
    function: str = ""      # the function symbol the instruction belongs to
    label: str = ""         # the branch label(s) naming this instruction (".L_x_1"; several: ",")

    @property
    def base(self):
        """Mnemonic without modifiers: "ISETP"."""
        return base_opcode(self.opcode)

    @property
    def pipe(self):
        """Execution pipe/class (see opclasses.PIPES; S2R by its special register)."""
        return pipe_of(self.opcode, operands=self.operands)

    def __str__(self):
        pred = f"{self.predicate} " if self.predicate else ""
        return f"/*{self.offset:04x}*/ {pred}{self.opcode} {self.operands}".rstrip()


@dataclass
class KernelSass:
    """The SASS of one kernel (or non-inlined device function) and its map to PTX and source."""
    name: str
    instructions: list = field(default_factory=list)   # the function's own SassInstr, in order
    subroutines: dict = field(default_factory=dict)    # out-of-line subroutine -> [SassInstr]
    calls: dict = field(default_factory=dict)          # subroutine -> PTX lines that call it
    padding: int = 0   # trailing never-executed instructions dropped (BRA-to-self after EXIT, NOPs)
    source: dict = field(default_factory=dict)         # PTX line -> SourceLoc | None

    @property
    def sass_per_ptx_line(self):
        """PTX line -> opcodes of the function's own SASS from it (subroutines excluded)."""
        out = {}
        for ins in self.instructions:
            if ins.ptx_line is not None:
                out.setdefault(ins.ptx_line, []).append(ins.opcode)
        return out

    def subroutines_of_ptx_line(self, line):
        """Names of out-of-line subroutines that SASS from PTX ``line`` calls."""
        return [name for name, lines in self.calls.items() if line in lines]

    def sass_for_ptx_line(self, line, include_subroutines=True):
        """SassInstr from PTX ``line``: inline ones, then (optionally) the called subroutines'."""
        out = [i for i in self.instructions if i.ptx_line == line]
        if include_subroutines:
            for name in self.subroutines_of_ptx_line(line):
                out += self.subroutines[name]
        return out

    def source_of(self, ins):
        """User SourceLoc of a SASS instruction (via its PTX line), or None."""
        return self.source.get(ins.ptx_line)

    def to_dict(self):
        d = asdict(self)
        d["source"] = {str(k): (v.to_list() if v else None) for k, v in self.source.items()}
        return d

    @classmethod
    def from_dict(cls, d):
        return cls(
            name=d["name"],
            instructions=[SassInstr(**i) for i in d["instructions"]],
            subroutines={k: [SassInstr(**i) for i in v] for k, v in d["subroutines"].items()},
            calls={k: list(v) for k, v in d["calls"].items()}, padding=d["padding"],
            source={int(k): (SourceLoc.from_list(v) if v else None) for k, v in d["source"].items()})


def parse_nvdisasm(text, line_file=SYNTHETIC_FILE):
    """{section name: [SassInstr]} from ``nvdisasm -g -c`` text.  ``ptx_line`` is set from
    ``//## File`` comments naming ``line_file``; comments naming other files leave it None."""
    sections, cur, func, pending, line, labels = {}, None, "", None, None, []
    for raw in text.splitlines():
        if m := _SECTION.match(raw):
            cur = sections.setdefault(m.group(1), [])
            func, pending, line, labels = m.group(1), None, None, []
        elif m := _TYPE_FUNC.match(raw):
            pending = m.group(1)
        elif (m := _LABEL.match(raw)) and m.group(1) == pending:
            func, pending, line = pending, None, None
        elif m := _LABEL.match(raw):
            labels.append(m.group(1))
        elif m := _LINE.match(raw):
            line = int(m.group(2)) if m.group(1).endswith(line_file) else None
        elif (m := _INSTR.match(raw)) and cur is not None:
            cur.append(SassInstr(offset=int(m.group(1), 16), opcode=m.group(3),
                                 operands=m.group(4), predicate=(m.group(2) or "").strip(),
                                 ptx_line=line, function=func, label=",".join(labels)))
            labels = []
    return sections


def _strip_padding(instrs):
    """``instrs`` without the section's tail that never runs: the NOPs aligning the section and
    the unconditional ``BRA`` to itself that ptxas puts after the final EXIT/RET."""
    end = len(instrs)
    while end and instrs[end - 1].opcode == "NOP":
        end -= 1
    if (end >= 2 and instrs[end - 1].base == "BRA" and not instrs[end - 1].predicate
            and instrs[end - 2].base in ("EXIT", "RET") and not instrs[end - 2].predicate):
        end -= 1
    return instrs[:end]


def build_kernel_sass(name, instrs, numbered: NumberedPtx):
    """KernelSass for section ``name``: split own code from out-of-line subroutines."""
    ks = KernelSass(name=name)
    code = _strip_padding(instrs)
    ks.padding = len(instrs) - len(code)
    for ins in code:
        if ins.function == name:
            ks.instructions.append(ins)
        else:
            ins.ptx_line = None  # subroutines have no line of their own (inherited display only)
            ks.subroutines.setdefault(ins.function, []).append(ins)
    for ins in ks.instructions:
        if ins.base == "CALL" and (m := _CALL_TARGET.search(ins.operands)):
            target = m.group(1)
            if ins.ptx_line is not None:
                lines = ks.calls.setdefault(target, [])
                if ins.ptx_line not in lines:
                    lines.append(ins.ptx_line)
    lines = {i.ptx_line for i in ks.instructions if i.ptx_line is not None}
    lines |= {ln for v in ks.calls.values() for ln in v}
    ks.source = {ln: numbered.source.get(ln) for ln in sorted(lines)}
    return ks


def disassemble(cubin, numbered: NumberedPtx):
    """{kernel/function name: KernelSass} for every .text section of ``cubin``."""
    with tempfile.TemporaryDirectory(prefix="simgpu-nvdisasm-") as tmp:
        path = Path(tmp) / "kernel.cubin"
        path.write_bytes(cubin)
        text = run_tool("nvdisasm", ["-g", "-c", path]).stdout
    sections = parse_nvdisasm(text)
    if not sections:
        raise ValueError("nvdisasm printed no code sections (is the line table malformed?)")
    return {name: build_kernel_sass(name, instrs, numbered) for name, instrs in sections.items()}
