"""Line stepping: a warp's record as visits of source lines (the stepper's default mode on
the compiled path).

A *visit* is one pass of the warp over one source line: the steps from the line's first
instruction to the last one before the warp moves to another line, with the mask of the
lanes that run the line (the lanes of its own instructions, OR-ed).  On the compiled path
some instructions are not the user's line even when the PTX ``.loc`` names one; they are
passed over (they neither end a visit nor start one, and their masks do not count):

* instructions with no ``.loc`` (``no_loc``: shown under the previous line) or whose
  ``.loc`` is another file (library code);
* instructions on the kernel's ``def`` line after its prologue (argument set-up the
  compiler sank to where it is used);
* a short run of branch-free instructions on an *earlier* line between two pieces of the
  same line, touching no global/shared memory (the stack pointer set up for libdevice's
  ``sin`` slow path, a hoisted address): library or set-up code inside a line, which must
  not split the line into partial visits.

The prologue (the ``def`` line's instructions before the body) is the visit ``entry`` and
``ret``/``exit`` is the visit ``exit``: each in its own place, so neither belongs to the
last source line.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

ENTRY, BODY, EXIT = "entry", "body", "exit"
_GLUE_MAX = 4                       # at most this many instructions in an interloping run
_BRANCHY = ("bra", "exit", "bar", "if", "loop", "return", "break", "continue")


@dataclass
class Visit:
    """One visit of a source line by the warp."""
    index: int
    file: str
    line: int
    start: int                # index of its first step
    end: int                  # index after its last step (passed-over steps inside included)
    mask: int                 # lanes that run the line on this visit
    place: str = BODY         # 'entry' (prologue) | 'body' | 'exit' (ret and epilogue)
    n_own: int = 0            # its own instructions (passed-over ones not counted)

    @property
    def n_active(self):
        return bin(self.mask).count("1")

    @property
    def key(self):
        return (self.file, self.line, self.place)


def _real(path):
    return os.path.realpath(path) if path and not path.startswith("<") else path


def _glue_run(steps, a, b):
    """Whether steps[a:b] may be passed over inside another line's visit."""
    if b - a > _GLUE_MAX:
        return False
    for s in steps[a:b]:
        if s.kind in _BRANCHY:
            return False
        m = s.memory
        if m is not None and m.space not in ("local", "param"):
            return False
    return True


def visits(steps, kernel_file=None, def_line=None, compiled=False):
    """The visits of `steps` (see the module doc).  On simgpu's IR (`compiled=False`) a visit
    is a maximal run of steps on one line; on the compiled code, prologue, epilogue and
    passed-over instructions are treated as above."""
    if not compiled:
        out = []
        for i, s in enumerate(steps):
            if out and (out[-1].file, out[-1].line) == (s.file, s.line):
                out[-1].end, out[-1].mask, out[-1].n_own = i + 1, out[-1].mask | s.mask, out[-1].n_own + 1
            else:
                out.append(Visit(len(out), s.file, s.line, i, i + 1, s.mask, BODY, 1))
        return out
    kf = _real(kernel_file)
    # 1. what each step is: (file, line, place) of its own line, or None (passed over)
    keys, body_seen = [], False
    for s in steps:
        place = getattr(s, "place", BODY)
        if place == EXIT or s.kind == "exit":
            keys.append((s.file, s.line, EXIT))
        elif not body_seen and s.line == def_line and _real(s.file) == kf:
            keys.append((s.file, s.line, ENTRY))
        elif getattr(s, "no_loc", False) or _real(s.file) != kf or s.line == def_line:
            keys.append(None)
        else:
            body_seen = True
            keys.append((s.file, s.line, BODY))
    # 2. runs of one key, passed-over steps joining the run they are in (or the next one)
    runs = []                       # [key, start, end, own step indices]
    for i, k in enumerate(keys):
        if k is None:
            if runs:
                runs[-1][2] = i + 1
            continue
        if runs and runs[-1][0] == k and k[2] != EXIT:
            runs[-1][2] = i + 1
            runs[-1][3].append(i)
        else:
            runs.append([k, runs[-1][2] if runs else i, i + 1, [i]])
    if runs and runs[0][1] > 0:
        runs[0][1] = 0
    # 3. a short branch-free run on an earlier line between two runs of one line: passed over
    k = 1
    while k + 1 < len(runs):
        a, m, b = runs[k - 1], runs[k], runs[k + 1]
        if a[0] == b[0] and a[0][2] == BODY and m[0][2] == BODY and m[0][1] < a[0][1] \
                and _glue_run(steps, m[1], m[2]):
            runs[k - 1:k + 2] = [[a[0], a[1], b[2], a[3] + b[3]]]
        else:
            k += 1
    out = []
    for j, (key, a, b, own) in enumerate(runs):
        mask = 0
        for i in own:
            mask |= steps[i].mask
        out.append(Visit(j, key[0], key[1], own[0], b, mask, key[2], len(own)))
    return out


def visit_index(vs, n_steps):
    """step index -> index of the visit it belongs to (passed-over steps: the visit around them;
    steps before the first visit's first instruction: that visit)."""
    out = [0] * n_steps
    for v in vs:
        lo = 0 if v.index == 0 else v.start
        for i in range(lo, min(v.end, n_steps)):
            out[i] = v.index
    for i in range(1, n_steps):     # a step between visits (not covered above) keeps the previous
        if vs and out[i] < out[i - 1]:
            out[i] = out[i - 1]
    return out
