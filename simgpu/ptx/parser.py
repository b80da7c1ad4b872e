"""PTX text -> syntax records: a tokenizer and a recursive-descent parser.

The grammar covered is what NVVM (numba-cuda) emits, plus the common hand-written forms:

    module      := { directive }
    directive   := .version N.M | .target ids | .address_size N | .file N "name" {, ...}
                 | { linkage } .entry NAME ( params ) { perf } ( body | ; )
                 | { linkage } .func [ ( params ) ] NAME [ ( params ) ] { .noreturn } ( body | ; )
                 | { linkage } vardecl
    vardecl     := space { .align N | .v2/.v4 | .ptr... } type NAME [ <N> ] { [ [N] ] } [ = init ] ;
    body        := { { statement } }        statement := LABEL : | body | decl | .loc ... | instr
    instr       := [ @[!]%p ] opcode{.mod} [ operand {, operand} ] ;
    operand     := reg[|reg] | reg.x | [!]reg | imm | -imm | [ addr ] | { ops } | ( ops ) | NAME
    addr        := (reg | NAME) [ (+|-) imm ] | imm

Each instruction becomes an :class:`Instr` (opcode, modifiers, types, operands, guard, source
location from the last ``.loc``, and the PTX line number).  Operands are small tuples:
('reg', name) ('sreg', name, comp) ('imm', int) ('fimm', float, bits, width) ('sym', name)
('addr', base, offset) where base is ('reg', n) / ('sym', n) / None, ('vec', [ops]),
('list', [ops]) for call argument lists, ('pair', op, op) for ``%r|%p``, ('not', op) for ``!%p``.
"""
from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

from simgpu.errors import SimGPUError
from simgpu.ptx import contract, sass_order

TYPES = frozenset("""b8 b16 b32 b64 b128 u8 u16 u32 u64 s8 s16 s32 s64 f16 f16x2 bf16 bf16x2
                     f32 f64 pred""".split())
SPACES = frozenset("reg sreg const global local param shared tex".split())
LINKAGE = frozenset("visible extern weak common".split())
SPECIAL_REGS = frozenset("""%tid %ntid %ctaid %nctaid %laneid %warpid %nwarpid %smid %nsmid %gridid
    %lanemask_eq %lanemask_le %lanemask_lt %lanemask_ge %lanemask_gt %clock %clock64 %clock_hi
    %globaltimer %globaltimer_lo %globaltimer_hi %dynamic_smem_size %total_smem_size
    %aggr_smem_size %cluster_ctarank %cluster_nctarank""".split())


class PTXSyntaxError(SimGPUError):
    """The PTX text does not follow the grammar."""


@dataclass
class Instr:
    opcode: str
    mods: tuple
    types: tuple
    operands: list
    guard: tuple | None = None          # (reg name, negated)
    loc: tuple | None = None            # (file index, line) from .loc
    line: int = 0                       # PTX line number
    text: str = ""                      # the instruction as written (for messages)


@dataclass
class Var:
    name: str
    space: str
    type: str
    size: int                           # bytes (0 for an unsized extern array)
    align: int
    init: list | None = None
    extern: bool = False
    line: int = 0


@dataclass
class Function:
    name: str
    kind: str                           # 'entry' or 'func'
    params: list = field(default_factory=list)      # [Var] (space 'param')
    rets: list = field(default_factory=list)        # [Var]
    body: list | None = None            # statements: Instr | ('label', name) | ('var', Var)
    regs: dict = field(default_factory=dict)        # name -> type
    vars: list = field(default_factory=list)        # function-scope .local/.shared/.param vars
    line: int = 0


@dataclass
class Module:
    version: str = ""
    target: tuple = ()
    address_size: int = 64
    files: dict = field(default_factory=dict)
    vars: list = field(default_factory=list)
    functions: dict = field(default_factory=dict)

    def source(self, loc):
        """'file:line' for an instruction's (file index, line), or None."""
        if not loc or loc[1] == 0:
            return None
        return f"{self.files.get(loc[0], '?')}:{loc[1]}"

    def entry(self, name: str) -> str:
        """The full name of kernel ``name`` (itself, or the one mangled entry containing it)."""
        if name in self.functions:
            return name
        cands = [n for n, f in self.functions.items() if f.kind == "entry" and name in n]
        if len(cands) == 1:
            return cands[0]
        entries = [n for n, f in self.functions.items() if f.kind == "entry"]
        raise SimGPUError(f"kernel {name!r} is not (uniquely) in the PTX; kernels: {entries}")


_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+) | (?P<nl>\n) | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"[^"\n]*")
  | (?P<fhex>0[fF][0-9a-fA-F]{8}(?![\w$]))
  | (?P<dhex>0[dD][0-9a-fA-F]{16}(?![\w$]))
  | (?P<hex>0[xX][0-9a-fA-F]+[uU]?)
  | (?P<float>\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)
  | (?P<int>\d+[uU]?)
  | (?P<dir>\.[A-Za-z_][\w$]*|\.[1-5]d(?![\w$]))
  | (?P<id>[A-Za-z_$%][\w$]*)
  | (?P<punct>[,;:\[\]\(\)\{\}<>+\-|!@=*])
""", re.VERBOSE | re.DOTALL)


def tokenize(text):
    """List of (kind, value, line) tokens; whitespace and comments dropped."""
    out, pos, line = [], 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise PTXSyntaxError(f"PTX line {line}: unexpected character {text[pos]!r}")
        kind, val = m.lastgroup, m.group()
        if kind == "nl":
            line += 1
        elif kind == "comment":
            line += val.count("\n")
        elif kind != "ws":
            out.append((kind, val, line))
        pos = m.end()
    out.append(("eof", "", line))
    return out


def parse_int(tok):
    kind, val = tok[0], tok[1].rstrip("uU")
    return int(val, 16) if kind == "hex" else int(val)


class Parser:
    """Recursive-descent parser over the token list; one method per grammar rule."""

    def __init__(self, text):
        self.toks = tokenize(text)
        self.i = 0
        self.lines = text.splitlines()
        self.loc = None

    # -- token helpers ---------------------------------------------------------------------
    def peek(self, k=0):
        return self.toks[self.i + k]

    def next(self):
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def at(self, val):
        return self.toks[self.i][1] == val

    def accept(self, val):
        if self.toks[self.i][1] == val:
            self.i += 1
            return True
        return False

    def expect(self, val):
        tok = self.next()
        if tok[1] != val:
            self.error(f"expected {val!r}, found {tok[1]!r}", tok)
        return tok

    def error(self, msg, tok=None):
        tok = tok or self.peek()
        src = self.lines[tok[2] - 1].strip() if 0 < tok[2] <= len(self.lines) else ""
        raise PTXSyntaxError(f"PTX line {tok[2]}: {msg}\n    {src}")

    def name(self):
        tok = self.next()
        if tok[0] != "id":
            self.error(f"expected a name, found {tok[1]!r}", tok)
        return tok[1]

    def loc_directive(self):
        """.loc file line [col] [, function_name label[+off]] [, inlined_at file line col]
        (NVVM writes the long form for code it inlined) -> (file, line)."""
        f, ln = self.integer(), self.integer()
        if self.peek()[0] in ("int", "hex"):
            self.next()
        while self.at(","):
            self.next()
            what = self.next()[1]
            if what == "function_name":
                self.next()                                   # the label of the name string
                if self.at("+"):
                    self.next()
                    self.next()
            elif what == "inlined_at":
                for _ in range(3):
                    if self.peek()[0] in ("int", "hex"):
                        self.next()
        return (f, ln)

    def integer(self):
        neg = self.accept("-")
        tok = self.next()
        if tok[0] not in ("int", "hex"):
            self.error(f"expected an integer, found {tok[1]!r}", tok)
        return -parse_int(tok) if neg else parse_int(tok)

    # -- module level ----------------------------------------------------------------------
    def module(self):
        mod = Module()
        while self.peek()[0] != "eof":
            tok = self.next()
            d = tok[1]
            if d == ".version":
                mod.version = self.next()[1]
            elif d == ".target":
                tgt = [self.name()]
                while self.accept(","):
                    tgt.append(self.name())
                mod.target = tuple(tgt)
            elif d == ".address_size":
                mod.address_size = self.integer()
            elif d == ".file":
                self.file_directive(mod)
            elif d in (".pragma",):
                self.skip_to(";")
            elif d == ".section":                  # DWARF data (e.g. .debug_str for .loc's
                self.skip_section()                # function_name): nothing to execute
            else:
                self.i -= 1
                self.toplevel(mod)
        return mod

    def skip_section(self):
        """.section NAME { ... }: skipped whole, nested braces included."""
        self.next()
        self.expect("{")
        depth = 1
        while depth:
            t = self.next()
            if t[0] == "eof":
                self.error("unterminated .section")
            depth += {"{": 1, "}": -1}.get(t[1], 0)

    def skip_to(self, val):
        while self.next()[1] != val:
            pass

    def file_directive(self, mod):
        idx = self.integer()
        fname = self.next()[1].strip('"')
        while self.accept(","):
            self.next()
        mod.files[idx] = fname

    def toplevel(self, mod):
        linkage = set()
        while self.peek()[1][1:] in LINKAGE and self.peek()[0] == "dir":
            linkage.add(self.next()[1][1:])
        d = self.peek()[1]
        if d in (".entry", ".func"):
            self.next()
            fn = self.function(d[1:])
            old = mod.functions.get(fn.name)
            if old is None or (old.body is None and fn.body is not None):
                mod.functions[fn.name] = fn
        elif d[1:] in SPACES:
            mod.vars.append(self.vardecl(extern="extern" in linkage))
        else:
            self.error(f"unexpected {d!r} at module level")

    def function(self, kind):
        line = self.peek()[2]
        rets = []
        if kind == "func" and self.at("("):
            rets = self.param_list()
        fn = Function(self.name(), kind, rets=rets, line=line)
        self.loc = None
        if self.at("("):
            fn.params = self.param_list()
        while self.peek()[0] == "dir" and self.peek()[1] not in (".loc",):
            self.next()                                    # .maxntid 256,1,1 / .noreturn / ...
            while self.peek()[0] in ("int", "hex") or self.at(","):
                self.next()
        if self.accept(";"):
            return fn
        self.expect("{")
        fn.body = []
        self.body(fn, fn.body)
        return fn

    def param_list(self):
        self.expect("(")
        out = []
        while not self.accept(")"):
            out.append(self.vardecl(terminator=None))
            self.accept(",")
        return out

    def vardecl(self, extern=False, terminator=";"):
        """space {.align N | .ptr | .space} type name [<N>] {[N]} [= init] [;]"""
        line = self.peek()[2]
        space = self.next()[1][1:]
        align, vec, typ = 0, 1, None
        while self.peek()[0] == "dir":
            d = self.next()[1][1:]
            if d == "align":
                align = self.integer()
            elif d in ("v2", "v4", "v8"):
                vec = int(d[1:])
            elif d in TYPES:
                typ = d
            # .ptr, .global (after .ptr) and similar attributes carry no layout
        if typ is None:
            self.error("declaration without a type")
        name = self.name()
        count = None
        if self.accept("<"):
            count = self.integer()
            self.expect(">")
        dims = []
        while self.accept("["):
            dims.append(None if self.at("]") else self.integer())
            self.expect("]")
        init = None
        if self.accept("="):
            init = self.initializer()
        if terminator:
            self.expect(terminator)
        elem = 1 if typ == "pred" else max(1, int(re.sub(r"\D", "", typ.split("x")[0]) or 8) // 8)
        if typ in ("f16x2", "bf16x2"):
            elem = 4
        n = vec
        unsized = False
        for dm in dims:
            if dm is None:
                unsized = True
            else:
                n *= dm
        v = Var(name, space, typ, 0 if unsized else elem * n, align or elem * vec, init,
                extern, line)
        v.count = count
        return v

    def initializer(self):
        if self.accept("{"):
            vals = []
            while not self.accept("}"):
                vals.extend(self.initializer())
                self.accept(",")
            return vals
        op = self.operand()
        return [op]

    # -- function bodies -------------------------------------------------------------------
    def body(self, fn, out):
        self.cur_regs = fn.regs             # names declared with .reg (inline asm: any name)
        while not self.accept("}"):
            tok = self.peek()
            if tok[0] == "eof":
                self.error("unterminated function body")
            if tok[1] == "{":
                self.next()
                self.body(fn, out)                         # a scope: names stay visible
            elif tok[0] == "id" and self.peek(1)[1] == ":" and not tok[1].startswith("%"):
                self.i += 2
                out.append(("label", tok[1]))
            elif tok[1] == ".loc":
                self.next()
                self.loc = self.loc_directive()
            elif tok[1] == ".reg":
                self.regdecl(fn)
            elif tok[1] in (".local", ".shared", ".param", ".const", ".global"):
                var = self.vardecl()
                fn.vars.append(var)
                out.append(("var", var))
            elif tok[1] in (".pragma", ".maxnreg", ".maxntid", ".reqntid", ".minnctapersm",
                            ".callprototype"):      # (an indirect call's prototype: not needed)
                self.skip_to(";")
            else:
                out.append(self.instruction())

    def regdecl(self, fn):
        self.next()
        typ = None
        while self.peek()[0] == "dir":
            d = self.next()[1][1:]
            if d in TYPES:
                typ = d
        while True:
            name = self.name()
            if self.accept("<"):
                n = self.integer()
                self.expect(">")
                for k in range(n):
                    fn.regs[f"{name}{k}"] = typ
            else:
                fn.regs[name] = typ
            if not self.accept(","):
                break
        self.expect(";")

    def instruction(self):
        start = self.peek()
        guard = None
        if self.accept("@"):
            neg = self.accept("!")
            guard = (self.name(), neg)
        tok = self.next()
        if tok[0] != "id":
            self.error(f"expected an instruction, found {tok[1]!r}", tok)
        mods, types = [], []
        while self.peek()[0] == "dir":
            m = self.next()[1][1:]
            if self.at(":") and self.peek(1)[1] == ":" and self.peek(2)[0] == "id":   # .shared::cta
                while self.at(":") and self.peek(1)[1] == ":" and self.peek(2)[0] == "id":
                    self.i += 2                          # .mbarrier::complete_tx::bytes
                    m = f"{m}::{self.next()[1]}"
            elif self.at(":") and self.peek(1)[1] == ":" and self.peek(2)[0] == "int" \
                    and self.peek(3)[1] == "B":                                # .L2::128B
                self.i += 2
                m = f"{m}::{self.next()[1]}{self.next()[1]}"
            m = m[:-len("::cta")] if m == "shared::cta" else m     # the same space (PTX ISA)
            (types if m in TYPES else mods).append(m)
        ops = []
        if not self.at(";"):
            ops.append(self.operand())
            while self.accept(","):
                ops.append(self.operand())
        self.expect(";")
        text = self.lines[start[2] - 1].strip() if start[2] <= len(self.lines) else tok[1]
        return Instr(tok[1], tuple(mods), tuple(types), ops, guard, self.loc, start[2], text)

    def operand(self):
        tok = self.peek()
        v = tok[1]
        if v == "[":
            self.next()
            addr = self.address()
            if self.accept(","):              # [tensorMap, {coordinates}] (cp.async.bulk.tensor)
                self.expect("{")
                coords = self.op_list("}")
                self.expect("]")
                return ("tensor", addr, coords)
            self.expect("]")
            return addr
        if v == "{":
            self.next()
            return ("vec", self.op_list("}"))
        if v == "(":
            self.next()
            return ("list", self.op_list(")"))
        if v == "!":
            self.next()
            return ("not", self.operand())
        if v == "-" or tok[0] in ("int", "hex", "float", "fhex", "dhex"):
            return self.immediate()
        if tok[0] == "id":
            self.next()
            if v in SPECIAL_REGS or v.split(".")[0] in SPECIAL_REGS:
                comp = self.next()[1][1:] if self.peek()[0] == "dir" else None
                return ("sreg", v, comp)
            if v.startswith("%") or v in getattr(self, "cur_regs", ()):
                op = ("reg", v)
                if self.accept("|"):
                    return ("pair", op, self.operand())
                return op
            if v == "_":
                return ("sink",)
            return ("sym", v)
        self.error(f"unexpected operand {v!r}")

    def op_list(self, close):
        ops = []
        while not self.accept(close):
            ops.append(self.operand())
            self.accept(",")
        return ops

    def immediate(self):
        neg = self.accept("-")
        tok = self.next()
        kind, val = tok[0], tok[1]
        if kind == "fhex":
            bits = int(val[2:], 16)
            f = struct.unpack("<f", struct.pack("<I", bits))[0]
            return ("fimm", -f if neg else f, bits ^ (0x80000000 if neg else 0), 32)
        if kind == "dhex":
            bits = int(val[2:], 16)
            f = struct.unpack("<d", struct.pack("<Q", bits))[0]
            return ("fimm", -f if neg else f, bits ^ (1 << 63 if neg else 0), 64)
        if kind == "float":
            f = -float(val) if neg else float(val)
            return ("fimm", f, struct.unpack("<Q", struct.pack("<d", f))[0], 64)
        if kind in ("int", "hex"):
            n = parse_int(tok)
            return ("imm", -n if neg else n)
        self.error(f"expected a number, found {val!r}", tok)

    def address(self):
        """[reg], [reg+imm], [sym], [sym+imm], [imm]."""
        base, off = None, 0
        tok = self.peek()
        if tok[0] == "id":
            self.next()
            base = ("reg", tok[1]) if tok[1].startswith("%") else ("sym", tok[1])
        else:
            off = self.integer()
        while self.peek()[1] in ("+", "-"):
            sign = -1 if self.next()[1] == "-" else 1
            off += sign * self.integer()
        return ("addr", base, off)


def parse(text: str) -> Module:
    """Parse PTX text into a :class:`Module`, with ptxas' floating-point contractions applied
    (mul + add/sub with no rounding modifier -> fma.rn: :mod:`simgpu.ptx.contract`)."""
    module = Parser(text).module()
    contract.contract_module(module, sass_order.kernel_sass(module, text))
    return module


_PARSED: dict[str, Module] = {}


def parse_cached(text: str) -> Module:
    """``parse(text)``, kept for the next launch of the same PTX (a few modules).  Nothing
    downstream changes a Module: Image reads it and keeps its own layout and state."""
    m = _PARSED.get(text)
    if m is None:
        if len(_PARSED) >= 16:
            _PARSED.pop(next(iter(_PARSED)))
        m = _PARSED[text] = parse(text)
    return m
