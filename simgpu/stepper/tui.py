"""`simgpu step FILE.py::kernel`: the warp stepper in a terminal.

    simgpu step examples/lesson_divergence.py::by_parity --grid 1 --block 64 --warp 0
    simgpu step examples/lesson_divergence.py::by_parity --block 64 --script "s s n b 14 c p v q"
    simgpu step examples/lesson_divergence.py::by_parity --block 64 --executor ir    (simgpu's IR)

--executor ptx (the default where numba-cuda and ptxas are installed) steps the compiled code:
PTX instructions with their SASS; `p %r5` prints a register, `p i` a variable as a side-by-side
run on simgpu's IR computes it (the PTX has no variable names).  --executor ir steps simgpu's IR.

The file defines the kernel function; its arguments come from `--args "expr"` (evaluated with
the file's globals and numpy as `np`), else from a function in the file named
`args_<kernel>()`, else `make_args()`, returning a tuple (as for `simgpu run`).  Commands (typed at the prompt or given to --script):

    s            one step: a line (line mode) or one instruction (instruction mode)
    m            switch mode: line <-> instruction  mode line|inst  set it
    n            run the next source line           x     as written vs as compiled, line by line
    c            continue to a breakpoint or end    b N   breakpoint on line N (d N removes it)
    p NAME       print a variable in every lane     w NAME  show NAME in every state
    u / back     go back one step (of the mode)     g K   go to step K (0: the start)
    l            show the state again               h     help          q   quit
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from ..errors import SimGPUError
from ..runtime.loader import build_args, load_target, parse_dims
from .compiled import step
from .plot import warp_lanes
from .record import StepError
from .text import Style, format_state, var_rows  # noqa: F401  (format_state: the text face, re-exported)

HELP = __doc__[__doc__.index("    s "):].rstrip()
ARG_CMDS = {"b": "b", "break": "b", "d": "d", "delete": "d", "p": "p", "print": "p",
            "g": "g", "goto": "g", "w": "w", "watch": "w"}
CMDS = {"s": "s", "step": "s", "n": "n", "next": "n", "c": "c", "continue": "c", "u": "u",
        "back": "u", "l": "l", "list": "l", "h": "h", "help": "h", "?": "h", "q": "q", "quit": "q",
        "m": "m", "mode": "m", "x": "x", "compare": "x"}
MODE_ARGS = {"line": "line", "l": "line", "inst": "inst", "i": "inst", "instruction": "inst"}


def parse_commands(text):
    """'s s n b 14 c' -> [('s', None), ('s', None), ('n', None), ('b', '14'), ('c', None)]."""
    toks, out, i = text.split(), [], 0
    while i < len(toks):
        t = toks[i]
        if CMDS.get(t) == "m" and i + 1 < len(toks) and toks[i + 1] in MODE_ARGS:
            out.append(("m", MODE_ARGS[toks[i + 1]]))
            i += 2
        elif t in ARG_CMDS:
            arg = toks[i + 1] if i + 1 < len(toks) else None
            out.append((ARG_CMDS[t], arg))
            i += 2
        else:
            out.append((CMDS.get(t, t), None))
            i += 1
    return out


def _number(cmd, arg):
    if arg is None or not arg.lstrip("-").isdigit():
        raise StepError(f"'{cmd}' needs a number, e.g. '{cmd} 14'; got {arg!r}")
    return int(arg)


def _need_name(cmd, arg):
    if not arg:
        raise StepError(f"'{cmd}' needs a variable name, e.g. '{cmd} i'")


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

    # -- commands: one method each, dispatched by COMMANDS -----------------------------------
    def cmd_quit(self, arg):
        return False

    def cmd_help(self, arg):
        self.write(HELP)

    def cmd_step(self, arg):
        self.st.step()
        self.write(self.render())

    def cmd_next(self, arg):
        self.st.next_line()
        self.write(self.render())

    def cmd_continue(self, arg):
        st = self.st
        if st.done:
            raise StepError(st._end_message())
        st.run(breakpoints=self.breakpoints)
        if st.done and st.state.line not in self.breakpoints:
            self.write("(no breakpoint reached; the warp ran to its end)")
        self.write(self.render())

    def cmd_back(self, arg):
        self.st.back()
        self.write(self.render())

    def cmd_list(self, arg):
        self.write(self.render())

    def cmd_goto(self, arg):
        self.st.goto(_number("g", arg))
        self.write(self.render())

    def cmd_break(self, arg):
        st, n = self.st, _number("b", arg)
        st.check_line(n)
        self.breakpoints.add(n)
        note = "" if st.reached(n) else " (this warp never executes it)"
        self.write(f"breakpoint at line {n}: {st.fn.source_lines.get((st.fn.loc.file, n), '').strip()}{note}")

    def cmd_delete(self, arg):
        n = _number("d", arg)
        if n not in self.breakpoints:
            raise StepError(f"no breakpoint on line {n} (breakpoints: {sorted(self.breakpoints)})")
        self.breakpoints.discard(n)
        self.write(f"breakpoint on line {n} removed")

    def cmd_watch(self, arg):
        st = self.st
        _need_name("w", arg)
        if not st.has_variable(arg):
            st.value(arg)           # raises: no such variable, with the list
        if arg not in self.show + self.extra:
            (self.show if self.show else self.extra).append(arg)
        self.write(f"watching {arg}")

    def cmd_print(self, arg):
        st = self.st
        _need_name("p", arg)
        v = st.value(arg)
        if v.ndim == 1 and len(v) == 32 and arg not in st._arrays:
            self.write("\n".join(var_rows(arg, v, st.assigned(arg))))
        else:
            self.write(f"{arg} = {np.array2string(v, threshold=256, precision=4)}")

    def cmd_mode(self, arg):
        st = self.st
        st.set_mode(arg or ("inst" if st.mode == "line" else "line"))
        self.write("line stepping: a step is one visit of a source line (the lanes that run it)"
                   if st.mode == "line" else "instruction stepping: a step is one instruction")

    def cmd_compare(self, arg):
        self.write(str(self.st.compare()))

    COMMANDS = {"m": cmd_mode, "x": cmd_compare,
                "q": cmd_quit, "h": cmd_help, "s": cmd_step, "n": cmd_next, "c": cmd_continue,
                "u": cmd_back, "l": cmd_list, "g": cmd_goto, "b": cmd_break, "d": cmd_delete,
                "w": cmd_watch, "p": cmd_print}

    def do(self, cmd, arg):
        """Run one command; returns False to quit.  Bad input prints a message."""
        try:
            run = self.COMMANDS.get(cmd)
            if run is None:
                raise StepError(f"unknown command {cmd!r}; commands:\n{HELP}")
            return run(self, arg) is not False
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


# -- loading FILE.py::kernel (the convention of `simgpu run`: simgpu.runtime.loader) -----------------
def dims(text, what):
    try:
        return parse_dims(text)
    except SimGPUError as e:
        raise StepError(f"--{what}: {e}") from None


def load(target, args_expr=None):
    """'path/file.py::kernel' -> (kernel function, args tuple)."""
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
    p.add_argument("--executor", choices=("auto", "ptx", "ir"), default="auto",
                   help="step the compiled code (ptx: PTX instructions, SASS, registers; variables "
                        "from a side-by-side IR run) or simgpu's IR (ir); auto: the machine's default")
    p.add_argument("--mode", choices=("line", "inst"), default=None,
                   help="a step is one visit of a source line (line; the compiled path's default) "
                        "or one instruction (inst; the IR path's default); `m` switches")
    p.add_argument("--side-by-side", action="store_true",
                   help="print the warp as written (simgpu's IR) and as compiled (PTX) line by line, "
                        "with both SIMT efficiencies and the lines the compiler if-converted")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.add_argument("--html", default=None, help="also write a self-contained replay page here")
    p.add_argument("--plot", default=None, help="also write the lanes x time picture here (PNG)")
    return p


def main(argv=None):
    a = build_parser().parse_args(argv)
    try:
        kernel, args = load(a.target, a.args)
        st = step(kernel, dims(a.grid, "grid"), dims(a.block, "block"), args,
                  block_idx=dims(a.block_idx, "block-idx"), warp=a.warp, gpu=a.gpu,
                  executor="ptx" if a.side_by_side and a.executor == "auto" else a.executor, mode=a.mode)
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
        warp_lanes(st, path=a.plot)
        print(f"wrote {a.plot}")
    if a.side_by_side:
        try:
            print(st.compare())
        except SimGPUError as e:
            print(f"simgpu step: error: {e}", file=sys.stderr)
            return 2
        if a.script is None:
            return 0
    if a.script is not None:
        ses.script(a.script)
    elif sys.stdin.isatty():
        ses.interactive()
    elif not (a.html or a.plot):
        ses.script(sys.stdin.read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
