"""`simgpu step FILE.py::kernel`: the warp stepper in a terminal.

    simgpu step examples/lesson_divergence.py::by_parity --grid 1 --block 64 --warp 0
    simgpu step examples/lesson_divergence.py::by_parity --block 64 --script "s s n b 14 c p v q"

The file defines the kernel function; its arguments come from `--args "expr"` (evaluated with
the file's globals and numpy as `np`), else from a function in the file named
`args_<kernel>()`, else `make_args()`, returning a tuple (as for `simgpu run`).  Commands (typed at the prompt or given to --script):

    s            step one warp-instruction          n     run the next source line
    c            continue to a breakpoint or end    b N   breakpoint on line N (d N removes it)
    p NAME       print a variable in every lane     w NAME  show NAME in every state
    u / back     go back one step                   g K   go to step K (0: the start)
    l            show the state again               h     help          q   quit
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from .errors import SimGPUError
from .step import StepError, mask_bools

HELP = __doc__[__doc__.index("    s "):].rstrip()
ARG_CMDS = {"b": "b", "break": "b", "d": "d", "delete": "d", "p": "p", "print": "p",
            "g": "g", "goto": "g", "w": "w", "watch": "w"}
CMDS = {"s": "s", "step": "s", "n": "n", "next": "n", "c": "c", "continue": "c", "u": "u",
        "back": "u", "l": "l", "list": "l", "h": "h", "help": "h", "?": "h", "q": "q", "quit": "q"}


class Style:
    def __init__(self, color):
        self.color = color

    def __call__(self, text, code):
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text


# -- formatting ---------------------------------------------------------------------------------
def lane_strip(mask, valid, style=Style(False)):
    on, off = ("█", "·") if style.color else ("#", ".")
    out = []
    for a, v in zip(mask_bools(mask), mask_bools(valid)):
        out.append(style(on, "32") if a else (style(off, "90") if v else " "))
    return "".join(out)


def fmt_values(v, per_row=16, assigned=None):
    """Rows of per-lane values; '-' for lanes that never assigned the variable."""
    v = np.asarray(v)
    if v.dtype == bool:
        cells = ["T" if x else "F" for x in v]
    elif v.dtype.kind == "f":
        cells = [f"{x:.4g}" for x in v]
    else:
        cells = [str(int(x)) for x in v]
    if assigned is not None:
        cells = [c if (assigned >> k) & 1 else "-" for k, c in enumerate(cells)]
    if len(set(cells)) == 1 and len(cells) > 1:
        return [f"{cells[0]} in every lane"]
    w = max(len(c) for c in cells)
    rows = []
    for k in range(0, len(cells), per_row):
        rows.append(f"[{k:>2}-{min(k + per_row, len(cells)) - 1:>2}] " +
                    " ".join(c.rjust(w) for c in cells[k:k + per_row]))
    return rows


def format_state(s, st=None, show=None, breakpoints=(), style=Style(False), context=25, memory=None):
    """The state as text: header, source, lanes, stack, memory, variables.  `memory`: the
    requests to list (default: those of the step just executed)."""
    out = []
    where = "start (nothing executed yet)" if s.step == 0 else f"step {s.step} of {s.n_steps}"
    head = ""
    if st is not None:
        b = st.block_idx
        head = f"{st.kernel_name}  block ({b[0]}, {b[1]}, {b[2]})  warp {st.warp}  "
    out.append(style(f"{head}{where}", "1") +
               f"   SIMT efficiency so far {100 * s.simt_efficiency:.1f} %  "
               f"({s.inst_executed} warp instructions)")
    if st is not None:
        out.extend(_source(st, s, breakpoints, style, context))
    else:
        out.append(f"  line {s.line}: {s.source.strip()}")
    mark = "next to run" if s.step == 0 else "executed"
    if s.instruction:
        out.append(f"  {mark:<9} {s.instruction}")
    on = "█" if style.color else "#"
    out.append(f"  lanes     {lane_strip(s.active_mask, s.valid_mask, style)}  "
               f"{s.n_active}/32 active  ({on} active, {'·' if style.color else '.'} idle)")
    out.append("            0       8       16      24    31")
    if s.kind == "if" and s.taken is not None:
        nt = bin(s.taken).count("1")
        out.append(f"  branch    {nt} lane(s) take the if-side {s.taken:#010x}, "
                   f"{s.n_active - nt} the else-side")
    out.append("  stack     " + ("(empty: all lanes run the kernel's top level)" if not s.stack else
                                 str(s.stack[-1])))
    for e in reversed(s.stack[:-1]):
        out.append("            " + str(e))
    mems = memory if memory is not None else ([s.memory] if s.memory is not None else [])
    if not mems:
        out.append("  memory    -")
    for k, m in enumerate(mems[:4]):
        out.append(("  memory    " if k == 0 else "            ") + str(m))
        if m.space == "shared":
            out.append("    banks   " + " ".join("." if b < 0 else str(int(b)) for b in m.banks))
    if len(mems) > 4:
        out.append(f"            ... and {len(mems) - 4} more requests")
    names = list(show) if show else list(s.values)
    if st is not None and s.step > 0:
        dst = st.steps[s.step - 1].dst
        if dst and "%" in dst and dst not in names:
            try:
                out.extend(_var_rows(f"{dst} (result; - = idle lane)", st.value(dst), s.active_mask))
            except StepError:
                pass
    for n in names:
        if n in s.values:
            out.extend(_var_rows(n, s.values[n], s.assigned.get(n)))
        elif n in s.arrays:
            out.append(f"  {n} = {np.array2string(s.arrays[n], threshold=64, precision=4)}")
        else:
            try:
                v = st.value(n, s.step) if st is not None else None
            except StepError:
                v = None
            if v is None:
                out.append(f"  {n}: (no value yet)")
            elif v.ndim == 1 and len(v) == 32:
                out.extend(_var_rows(n, v, st.assigned(n, s.step)))
            else:
                out.append(f"  {n} = {np.array2string(v, threshold=64, precision=4)}")
    if s.done:
        out.append(style("  the warp has finished", "1"))
    if s.error is not None:
        out.append(style(f"  the launch stopped with an error: {s.error}", "31"))
    return "\n".join(out)


def _var_rows(name, v, assigned=None):
    rows = fmt_values(v, assigned=assigned)
    if len(name) > 8:
        return [f"  {name}"] + [f"  {'':<8}{r}" for r in rows]
    return [f"  {name:<8}{rows[0]}"] + [f"  {'':<8}{r}" for r in rows[1:]]


def _source(st, s, breakpoints, style, context):
    lines = sorted((ln, t) for (f, ln), t in st.fn.source_lines.items() if f == s.file)
    if len(lines) > context:
        lines = [(ln, t) for ln, t in lines if abs(ln - s.line) <= context // 2]
    out, last = [], None
    for ln, text in lines:
        if last is not None and ln > last + 1:
            out.append("        ...")
        last = ln
        cur = ln == s.line
        gutter = ("->" if s.step == 0 else "=>") if cur else "  "
        bp = "*" if ln in breakpoints else " "
        row = f"  {gutter}{bp}{ln:>4} | {text}"
        out.append(style(row, "1;33") if cur else row)
    return out


# -- the command loop --------------------------------------------------------------------------
def parse_commands(text):
    """'s s n b 14 c' -> [('s', None), ('s', None), ('n', None), ('b', '14'), ('c', None)]."""
    toks, out, i = text.split(), [], 0
    while i < len(toks):
        t = toks[i]
        if t in ARG_CMDS:
            arg = toks[i + 1] if i + 1 < len(toks) else None
            out.append((ARG_CMDS[t], arg))
            i += 2
        else:
            out.append((CMDS.get(t, t), None))
            i += 1
    return out


class Session:
    def __init__(self, st, show=(), style=Style(False), write=print):
        self.st, self.show, self.style, self.write = st, list(show), style, write
        self.extra = []                 # names added by `w` when all variables are shown
        self.breakpoints = set()
        self.since = st.pos

    def render(self):
        """The state; its memory lists the requests the last command made on the current line."""
        st = self.st
        lo = st.pos - 1
        if st.pos > self.since:
            while lo - 1 >= self.since and (st.steps[lo - 1].file, st.steps[lo - 1].line) == \
                    (st.steps[st.pos - 1].file, st.steps[st.pos - 1].line):
                lo -= 1
        steps = st.steps[max(lo, 0):st.pos] if st.pos else []
        self.since = st.pos
        mems = [x.memory for x in steps if x.memory is not None]
        state = st.state
        names = (self.show or list(state.values)) + [n for n in self.extra if n not in state.values]
        return format_state(state, st, names, self.breakpoints, self.style, memory=mems)

    def do(self, cmd, arg):
        """Run one command; returns False to quit.  Bad input prints a message."""
        st = self.st
        try:
            if cmd == "q":
                return False
            if cmd == "h":
                self.write(HELP)
            elif cmd == "s":
                st.step()
                self.write(self.render())
            elif cmd == "n":
                st.next_line()
                self.write(self.render())
            elif cmd == "c":
                if st.done:
                    raise StepError(st._end_message())
                st.run(breakpoints=self.breakpoints)
                if st.done and st.state.line not in self.breakpoints:
                    self.write("(no breakpoint reached; the warp ran to its end)")
                self.write(self.render())
            elif cmd == "u":
                st.back()
                self.write(self.render())
            elif cmd == "l":
                self.write(self.render())
            elif cmd in ("b", "d", "g"):
                if arg is None or not arg.lstrip("-").isdigit():
                    raise StepError(f"'{cmd}' needs a number, e.g. '{cmd} 14'; got {arg!r}")
                n = int(arg)
                if cmd == "g":
                    st.goto(n)
                    self.write(self.render())
                elif cmd == "b":
                    st.check_line(n)
                    self.breakpoints.add(n)
                    note = "" if st.reached(n) else " (this warp never executes it)"
                    self.write(f"breakpoint at line {n}: {st.fn.source_lines.get((st.fn.loc.file, n), '').strip()}{note}")
                else:
                    if n not in self.breakpoints:
                        raise StepError(f"no breakpoint on line {n} (breakpoints: {sorted(self.breakpoints)})")
                    self.breakpoints.discard(n)
                    self.write(f"breakpoint on line {n} removed")
            elif cmd in ("p", "w"):
                if not arg:
                    raise StepError(f"'{cmd}' needs a variable name, e.g. '{cmd} i'")
                if cmd == "w":
                    if not st.has_variable(arg):
                        st.value(arg)           # raises: no such variable, with the list
                    if arg not in self.show + self.extra:
                        (self.show if self.show else self.extra).append(arg)
                    self.write(f"watching {arg}")
                    return True
                v = st.value(arg)
                if v.ndim == 1 and len(v) == 32 and arg not in st._arrays:
                    self.write("\n".join(_var_rows(arg, v, st.assigned(arg))))
                else:
                    self.write(f"{arg} = {np.array2string(v, threshold=256, precision=4)}")
            else:
                raise StepError(f"unknown command {cmd!r}; commands:\n{HELP}")
        except (SimGPUError, ValueError) as e:
            self.write(f"error: {e}")
        return True

    def script(self, text):
        self.write(self.render())
        for cmd, arg in parse_commands(text):
            self.write(f"\n> {cmd}{' ' + arg if arg else ''}")
            if not self.do(cmd, arg):
                break

    def interactive(self, read=input):
        self.write(self.render())
        self.write("type h for help")
        last = "s"
        while True:
            try:
                line = read("(simgpu step) ").strip()
            except (EOFError, KeyboardInterrupt):
                self.write("")
                return
            line = line or last
            last = line
            for cmd, arg in parse_commands(line):
                if not self.do(cmd, arg):
                    return


# -- loading FILE.py::kernel (the convention of `simgpu run`: simgpu.loader) -----------------
def dims(text, what):
    from .loader import parse_dims
    try:
        return parse_dims(text)
    except SimGPUError as e:
        raise StepError(f"--{what}: {e}") from None


def load(target, args_expr=None):
    """'path/file.py::kernel' -> (kernel function, args tuple)."""
    from .loader import build_args, load_target
    mod, kernel = load_target(target)
    return kernel, build_args(mod, target.rsplit("::", 1)[1], args_expr)


def build_parser():
    p = argparse.ArgumentParser(prog="simgpu step", description="Step one warp through a kernel, "
                                "one instruction or line at a time.",
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=HELP)
    p.add_argument("target", help="FILE.py::KERNEL")
    p.add_argument("--grid", default="1", help="grid: 4 or 2,2 (default 1)")
    p.add_argument("--block", default="32", help="block: 64 or 16,16 (default 32)")
    p.add_argument("--block-idx", default="0", help="which block: 0 or 1,0 (default 0)")
    p.add_argument("--warp", type=int, default=0, help="which warp of the block (default 0)")
    p.add_argument("--args", default=None, help="Python expression giving the arguments tuple")
    p.add_argument("--show", default="", help="variables to show, comma-separated (default: all)")
    p.add_argument("--script", default=None, help='commands to run without a prompt, e.g. "s s n b 14 c"')
    p.add_argument("--gpu", default=None, help="GPU preset (default H200)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.add_argument("--html", default=None, help="also write a self-contained replay page here")
    p.add_argument("--plot", default=None, help="also write the lanes x time picture here (PNG)")
    return p


def main(argv=None):
    a = build_parser().parse_args(argv)
    from .step import step
    try:
        kernel, args = load(a.target, a.args)
        st = step(kernel, dims(a.grid, "grid"), dims(a.block, "block"), args,
                  block_idx=dims(a.block_idx, "block-idx"), warp=a.warp, gpu=a.gpu)
        show = [v.strip() for v in a.show.split(",") if v.strip()]
        for v in show:
            if v not in st.variables and v not in st._arrays and v not in st._hist:
                st.value(v)                       # raises with the list of variables
    except (SimGPUError, ValueError, SyntaxError) as e:
        print(f"simgpu step: error: {e}", file=sys.stderr)
        return 2
    color = a.color == "always" or (a.color == "auto" and sys.stdout.isatty())
    ses = Session(st, show, Style(color))
    if a.html:
        st.to_html(a.html, show or None)
        print(f"wrote {a.html}")
    if a.plot:
        from .plot_warp import warp_lanes
        warp_lanes(st, path=a.plot)
        print(f"wrote {a.plot}")
    if a.script is not None:
        ses.script(a.script)
    elif sys.stdin.isatty():
        ses.interactive()
    elif not (a.html or a.plot):
        ses.script(sys.stdin.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
