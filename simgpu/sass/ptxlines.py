"""Giving every PTX instruction its own line in the debug line table.

numba's PTX carries ``.loc <file> <line> <col>`` directives that point at the user's Python
lines, so ptxas' line table (and ``nvdisasm -g``) can only say which *Python* line a SASS
instruction came from.  To learn which *PTX instruction* it came from, ``number_ptx_lines``
rewrites the PTX: it declares one more file, ``.file <K> "simgpu-ptx-lines.ptx"`` (K = the next
free file number; nvdisasm drops every instruction if the numbering has gaps), removes the
original ``.loc`` directives and puts ``.loc <K> <n> 0`` before each instruction, where ``n`` is
that instruction's line number (1-based) in the *original* PTX text.  The original ``.loc`` that
was in force at each instruction is kept in a side table: PTX line -> ``SourceLoc`` (user file,
line, column, and the call site when NVVM inlined the code).

Only ``.loc`` directives change, so the generated SASS is the same (a test checks this).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

SYNTHETIC_FILE = "simgpu-ptx-lines.ptx"

_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:.*?inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")
_LABEL = re.compile(r"^[\w$.%]+:$")
_FUNC_HEADER = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\b")


@dataclass(frozen=True)
class SourceLoc:
    """A line of the user's source, as the PTX ``.loc`` stated it."""
    file: str
    line: int
    col: int = 0
    inlined_at: tuple | None = None  # (file, line) of the call site NVVM inlined this code into

    def __str__(self):
        return f"{self.file}:{self.line}"

    def to_list(self):
        return [self.file, self.line, self.col, list(self.inlined_at) if self.inlined_at else None]

    @classmethod
    def from_list(cls, v):
        return cls(v[0], v[1], v[2], tuple(v[3]) if v[3] else None)


@dataclass
class NumberedPtx:
    """The rewritten PTX and what it knows about the original's lines."""
    text: str                      # PTX to give ptxas (-lineinfo)
    file_id: int                   # the .file number of SYNTHETIC_FILE
    instruction_lines: list = field(default_factory=list)   # original PTX lines holding an instruction
    source: dict = field(default_factory=dict)   # PTX line -> SourceLoc | None (no user line)
    function_of_line: dict = field(default_factory=dict)    # PTX line -> name of .entry/.func


def _strip_comment(s):
    i = s.find("//")
    return (s[:i] if i >= 0 else s).strip()


def number_ptx_lines(ptx):
    """Rewrite ``ptx`` so each instruction's debug line is its own PTX line number."""
    lines = ptx.splitlines()
    files = {int(m.group(1)): m.group(2) for m in map(_FILE.match, lines) if m}
    file_id = max(files, default=0) + 1
    out = NumberedPtx(text="", file_id=file_id)
    new, depth, continuing, loc, func, pending_func = [], 0, False, None, None, None
    file_decl_done = False
    for n, raw in enumerate(lines, start=1):
        s = _strip_comment(raw)
        if depth == 0:
            if m := _FUNC_HEADER.match(raw):
                pending_func = re.search(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([\w$.]+)", raw)
                pending_func = pending_func.group(1) if pending_func else None
            if s.startswith("{"):
                depth, func, loc = 1, pending_func, None
            new.append(raw)
            if not file_decl_done and (s.startswith(".address_size") or s.startswith(".target")):
                if s.startswith(".address_size") or ".address_size" not in ptx:
                    new.append(f'.file {file_id} "{SYNTHETIC_FILE}"')
                    file_decl_done = True
            continue
        if re.match(r"\.loc\s", s):  # (not .local)
            loc = _parse_loc(s, files)
            new.append("")
            continue
        if continuing or _is_instruction(s):
            if not continuing:
                new.append(f"\t.loc\t{file_id} {n} 0")
                out.instruction_lines.append(n)
                out.source[n] = loc
                out.function_of_line[n] = func
            continuing = not (s.endswith(";") or s.endswith("}"))
        depth += s.count("{") - s.count("}")
        new.append(raw)
    if not file_decl_done:
        raise ValueError("PTX without .target/.address_size: not a PTX module")
    out.text = "\n".join(new) + "\n"
    return out


def _is_instruction(s):
    """Whether a stripped PTX line inside a function starts an instruction: not a directive,
    label or brace; an inline-asm scope's last line ``selp.u16 %rs1, 1, 0, p;}`` is one, and so
    is a one-line scope ``{ .reg .b32 t; mov.b32 t, 1; }`` (as a whole).  The braces an
    instruction line opens or closes are counted by the caller."""
    if not s or s.startswith("}"):
        return False
    if s.startswith("{"):
        return s.endswith("}") and ";" in s
    return not (s.startswith(".") or _LABEL.match(s))


def _parse_loc(s, files):
    m = _LOC.match(s)
    if not m:
        return None
    fid, line, col = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if line == 0:  # NVVM's "no source line" (compiler-generated code such as the final ret)
        return None
    inl = None
    if m.group(4):
        inl = (files.get(int(m.group(4)), f"<file {m.group(4)}>"), int(m.group(5)))
    return SourceLoc(files.get(fid, f"<file {fid}>"), line, col, inl)
