"""`simgpu step FILE.py::kernel`: the warp stepper in a terminal.

    simgpu step examples/lesson_divergence.py::by_parity --grid 1 --block 64 --warp 0
    simgpu step examples/lesson_divergence.py::by_parity --block 64 --script "s s n b 14 c p v q"

The file defines the kernel function; its arguments come from `--args "expr"` (evaluated in
the file's namespace), else from a function in the file named `args_<kernel>()`, else
`make_args()`, returning a tuple.  Commands (typed at the prompt or given to --script):

    s            step one warp-instruction          n     run the next source line
    c            continue to a breakpoint or end    b N   breakpoint on line N (d N removes it)
    p NAME       print a variable in every lane     w NAME  show NAME in every state
    u / back     go back one step                   g K   go to step K (0: the start)
    l            show the state again               h     help          q   quit
"""
from __future__ import annotations

import argparse
import importlib.util
import os
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


def fmt_values(v, per_row=16):
    v = np.asarray(v)
    if v.dtype == bool:
        cells = ["T" if x else "F" for x in v]
    elif v.dtype.kind == "f":
        cells = [f"{x:.4g}" for x in v]
    else:
        cells = [str(int(x)) for x in v]
    w = max(len(c) for c in cells)
    rows = []
    for k in range(0, len(cells), per_row):
        rows.append(f"[{k:>2}-{min(k + per_row, len(cells)) - 1:>2}] " +
                    " ".join(c.rjust(w) for c in cells[k:k + per_row]))
    return rows


def format_state(s, st=None, show=None, breakpoints=(), style=Style(False), context=25):
    """The state as text: header, source, lanes, stack, memory, variables."""
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
    out.append("  memory    " + (str(s.memory) if s.memory is not None else "-"))
    if s.memory is not None and s.memory.space == "shared":
        out.append("  banks     " + " ".join("." if b < 0 else str(int(b)) for b in s.memory.banks))
    names = list(show) if show else list(s.values)
    if st is not None and s.step > 0:
        dst = st.steps[s.step - 1].dst
        if dst and "%" in dst and dst not in names:
            try:
                out.extend(_var_rows(f"{dst} (result)", st.value(dst)))
            except StepError:
                pass
    for n in names:
        if n in s.values:
            out.extend(_var_rows(n, s.values[n]))
        elif n in s.arrays:
            out.append(f"  {n} = {np.array2string(s.arrays[n], threshold=64, precision=4)}")
        else:
            out.append(f"  {n}: (no value yet)")
    if s.done:
        out.append(style("  the warp has finished", "1"))
    if s.error is not None:
        out.append(style(f"  the launch stopped with an error: {s.error}", "31"))
    return "\n".join(out)


def _var_rows(name, v):
    rows = fmt_values(v)
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
        self.breakpoints = set()

    def render(self):
        return format_state(self.st.state, self.st, self.show, self.breakpoints, self.style)

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
                v = st.value(arg)
                if cmd == "w" and arg not in self.show:
                    self.show.append(arg)
                if v.ndim == 1 and len(v) == 32:
                    self.write("\n".join(_var_rows(arg, v)))
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


# -- loading FILE.py::kernel ------------------------------------------------------------------
def dims(text, what):
    try:
        v = tuple(int(p) for p in text.replace("x", ",").split(",") if p.strip())
    except ValueError:
        raise StepError(f"--{what} takes numbers like 4 or 2,2 or 2,2,1, not {text!r}") from None
    if not 1 <= len(v) <= 3:
        raise StepError(f"--{what} takes 1 to 3 numbers, not {text!r}")
    return v


def load(target, args_expr=None):
    """'path/file.py::kernel' -> (kernel function, args tuple)."""
    path, sep, name = target.partition("::")
    if not sep or not name:
        raise StepError(f"give the kernel as FILE.py::KERNEL, not {target!r}")
    if not os.path.isfile(path):
        raise StepError(f"no such file: {path}")
    path = os.path.abspath(path)
    mod_name = "_simgpu_step_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(os.path.dirname(path))
    if not hasattr(mod, name):
        funcs = sorted(k for k, v in vars(mod).items() if callable(v) and not k.startswith("_")
                       and getattr(v, "__module__", None) in (mod_name, None))
        raise StepError(f"{path} defines no kernel {name!r} (it defines: {', '.join(funcs)})")
    kernel = getattr(mod, name)
    if args_expr is not None:
        args = eval(args_expr, vars(mod))      # the teacher's own expression, in their file's namespace
    elif hasattr(mod, f"args_{name}"):
        args = getattr(mod, f"args_{name}")()
    elif hasattr(mod, "make_args"):
        args = mod.make_args()
    else:
        raise StepError(f"no arguments for {name}: pass --args \"(x, out)\" or define "
                        f"args_{name}() or make_args() in {os.path.basename(path)} returning a tuple")
    return kernel, args if isinstance(args, tuple) else (args,)


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
