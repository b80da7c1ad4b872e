"""numba-cuda's compile errors as a learner should read them.

A kernel numba-cuda refuses (a list literal, ``try``, ``cuda.shared.array(n)`` with ``n`` an
argument ...) fails deep in numba's compiler: 100 lines of numba's frames, then its message,
which names the construct in numba's terms.  simgpu runs its own frontend on the same kernel
and arguments (:func:`learner_error`): its reading says what was written, at which line, and
what to write instead.  What the user sees (:func:`readable_compile_error`):

* simgpu's reading first (``file:line:col: what ... hint: ...``);
* then numba's message, trimmed to the part that names the user's line: its first line, the
  signature it could not match, the "During: ... at FILE (LINE)" and 'File "FILE", line N'
  lines of the user's file with their source excerpt (not the candidate lists);
* no ANSI colour codes unless stderr is a terminal (numba colours its messages when colorama
  is installed);
* numba's traceback left out (the entry point's frame and the caller's stay:
  ``tracebacks.user_facing``); the error keeps numba's type, so ``except numba...TypingError``
  still catches it.

``SIMGPU_NUMBA_ERRORS=full`` in the environment gives numba's error as numba raises it: its
whole text, its traceback, simgpu's reading as a note at the end.
"""
from __future__ import annotations

import inspect
import os
import re
import sys

import numpy as np

from .. import settings
from ..errors import DSLError, LaunchError
from ..tracebacks import mark_user_error
from .binding import bind_args

FULL_ENV = settings.variable("numba_errors")
READING = "simgpu's reading of this mistake: "
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_UNDEFINED = re.compile(r"name '(\w+)' is not defined")
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')
_EXCERPT = re.compile(r'^File "[^"]+", line \d+:$')
_DURING_AT = re.compile(r"^During: .* at (.+) \((\d+)\)\s*$")


def full_numba_errors():
    """``SIMGPU_NUMBA_ERRORS=full`` (settings' ``numba_errors``): numba's compile errors
    unchanged (text and traceback)."""
    return settings.current().numba_errors == "full"


def strip_ansi(text, stream=None):
    """`text` without ANSI escape codes, unless `stream` (default sys.stderr) is a terminal."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return text
    return _ANSI.sub("", text)


def trim_numba_text(text, user_file=None):
    """numba's message cut to what a learner needs: the first line, any ``>>>`` signature
    line, and the lines naming the user's file (``During: ... at FILE (N)``,
    ``File "FILE", line N`` with the source excerpt under it).  `user_file`: the kernel's
    file (None: any file that is not numba's own)."""
    lines = _ANSI.sub("", text).splitlines()
    head = next((ln for ln in lines if ln.strip()), "")
    keep, excerpt = [head.strip()], False
    if head.strip().startswith("Failed in ") and head in lines:
        # numba's pipeline wrapper ("Failed in cuda mode pipeline (step: ...)"): the error
        # itself is the next line (e.g. "... of type float64 is not aligned")
        nxt = next((ln for ln in lines[lines.index(head) + 1:] if ln.strip()), "")
        if nxt and not nxt.strip().startswith(("During:", "File ")):
            keep.append(nxt.strip())

    def users(name):
        if user_file is not None:
            return os.path.abspath(name) == os.path.abspath(user_file)
        return "numba" not in name.replace("\\", "/").split("/")

    for ln in lines[lines.index(head) + 1 if head in lines else 0:]:
        s = ln.strip()
        if excerpt:
            if not s or s.startswith("During:") or s.startswith("File "):
                excerpt = False
            else:
                keep.append(ln.rstrip())
                continue
        m, d = _FILE_LINE.search(s), _DURING_AT.match(s)
        if s.startswith(">>>"):
            keep.append(s)
        elif m and users(m.group(1)):
            keep.append(s)
            excerpt = bool(_EXCERPT.match(s))   # numba's 'File "...", line N:' + source below
        elif d and users(d.group(1)):
            keep.append(s)
    out = []
    for ln in keep:                 # each line once (numba repeats its contexts)
        if ln not in out:
            out.append(ln)
    return "\n".join(out)


def numba_compile_error(exc):
    """One of numba's compiler errors (TypingError, LoweringError, NumbaRuntimeError, ...: the
    classes of ``numba.core.errors`` and numba-cuda's ``numba.cuda.core.errors``), not a driver
    error."""
    return type(exc).__module__ in ("numba.core.errors", "numba.cuda.core.errors")


def readable_compile_error(exc, py_func=None):
    """numba's compile error `exc` (with simgpu's notes: the reading, the location) rewritten
    in place for the user (the module docstring): simgpu's reading first, numba's message
    trimmed, no ANSI codes off a terminal, marked a user error (``tracebacks.user_facing`` then
    cuts its traceback).  Returns `exc`; unchanged under ``SIMGPU_NUMBA_ERRORS=full`` or
    when it is not numba's."""
    if full_numba_errors() or not numba_compile_error(exc) or getattr(exc, "_simgpu_readable", False):
        return exc
    notes = list(getattr(exc, "__notes__", ()))
    reading = [n[len(READING):] for n in notes if n.startswith(READING)]
    others = [n for n in notes if not n.startswith(READING)]
    user_file = getattr(getattr(py_func, "__code__", None), "co_filename", None)
    numba_part = trim_numba_text("\n".join([str(exc), *others]), user_file)
    name = type(exc).__name__
    parts = [reading[0]] if reading else []
    parts.append(f"numba-cuda's {name}, trimmed to your line ({FULL_ENV}=full shows all of it):\n"
                 + "\n".join("    " + ln for ln in numba_part.splitlines()))
    exc.args = (strip_ansi("\n".join(parts)),)
    if hasattr(exc, "__notes__"):
        del exc.__notes__
    exc._simgpu_readable = True
    return mark_user_error(exc)


def readable_error(exc):
    """``tracebacks.user_facing``'s translate for simgpu's entry points: numba's compile errors
    made readable (:func:`readable_compile_error`), simgpu's own error that a numba failure
    caused given one line of numba's text as a note; other errors as they are."""
    if numba_compile_error(exc):
        return readable_compile_error(exc)
    cause = exc.__cause__
    if (isinstance(exc, DSLError) and cause is not None and not full_numba_errors()
            and _raised_in_numba(cause) and hasattr(exc, "add_note")):
        first = next((ln for ln in strip_ansi(str(cause)).splitlines() if ln.strip()), "")
        exc.add_note(f"(numba-cuda failed with {type(cause).__name__}: {first.strip()}; "
                     f"{FULL_ENV}=full shows its traceback)")
    return exc


def program_compile_error(exc, program, values):
    """A kernel of a whole program (``simgpu run``) that numba-cuda's dispatcher failed to
    compile: the exception to raise, marked a user error (:func:`readable_compile_error`), or
    None to re-raise `exc` unchanged.  `values`: stand-ins for the arguments
    (:func:`values_for_types`).  numba's own error gets simgpu's reading (else the kernel's
    line) and is made readable; numba's Python failing outside its typing (a TypeError,
    NotImplementedError or AttributeError from its lowering, e.g. for ``try``) becomes simgpu's
    reading itself, numba's error its cause, as on ``simgpu.launch``'s compiled path."""
    numba_own = numba_compile_error(exc)
    if (numba_own and type(exc).__name__ == "ForceLiteralArg") or not hasattr(exc, "add_note"):
        return None             # numba's request to compile again with literal arguments
    if not numba_own and type(exc) not in (TypeError, NotImplementedError, AttributeError):
        return None
    mine = learner_error(program, values)
    if not numba_own:
        if mine is None or full_numba_errors():
            return None
        mine.__cause__ = exc
        return readable_error(mine)
    if mine is not None:
        exc.add_note(f"{READING}{mine}")
    else:
        note_kernel_location(exc, program.py_func)
    if full_numba_errors():
        return None
    return readable_compile_error(exc, program.py_func)


def _raised_in_numba(exc):
    tb, last = exc.__traceback__, None
    while tb is not None:
        last, tb = tb, tb.tb_next
    return last is not None and "numba" in last.tb_frame.f_code.co_filename.replace("\\", "/").split("/")


# -- simgpu's reading (moved from runtime/ptx_path.py) -----------------------------------------
def note_kernel_location(exc, py_func):
    """numba's error, unchanged, with a note naming the user's line where neither numba's
    message nor simgpu.sass' note has one (numba's NameError for an undefined global does
    not): the first kernel line that uses the undefined name, else the kernel's def line."""
    text = str(exc) + "".join(getattr(exc, "__notes__", ()))
    if 'File "' in text or not hasattr(exc, "add_note"):
        return
    try:
        lines, first = inspect.getsourcelines(py_func)
        file = inspect.getsourcefile(py_func) or py_func.__code__.co_filename
    except (OSError, TypeError):
        return
    first = py_func.__code__.co_firstlineno
    n = next((k for k, t in enumerate(lines) if t.lstrip().startswith("def ")), 0)
    m = _UNDEFINED.search(text)
    if m:
        use = re.compile(rf"\b{re.escape(m.group(1))}\b")
        n = next((k for k, t in enumerate(lines) if k > n and use.search(t)), n)
    exc.add_note(f'File "{file}", line {first + n}: {lines[n].strip()}\n'
                 f"    (location added by simgpu.runtime: numba's message above lacks it)")


def _host_values(values):
    if values is None:
        return None
    out = []
    for v in values:
        if isinstance(v, tuple):
            out.append(tuple(_host_values(v)))
        else:
            out.append(getattr(v, "host", v))
    return out


def learner_error(program, values):
    """simgpu's own reading of a kernel numba-cuda refused: the DSLError/TypingError that the
    IR frontend gives for the same kernel and arguments (it says what was written and what
    to write instead), or None where the frontend accepts it or cannot tell."""
    args = _host_values(values)
    if args is None or not hasattr(program, "lower"):
        return None
    try:
        fn = program.lower()
        types_, _ = bind_args(fn, program.name, args)
        program.specialize(types_)
    except DSLError as e:           # TypingError is a DSLError
        return e
    except Exception:               # noqa: BLE001 - the frontend's own limits: no reading
        return None
    return None


def note_learner_reading(exc, program, values):
    """numba's error, unchanged, with simgpu's reading of the mistake as a note at its end
    (where a reader of a traceback looks first; :func:`readable_compile_error` moves it to
    the front)."""
    mine = learner_error(program, values)
    if mine is not None and hasattr(exc, "add_note"):
        exc.add_note(f"{READING}{mine}")


def values_for_types(argtypes):
    """Stand-in argument values of numba types `argtypes` (a zero-filled array of each array
    type, a zero of each scalar type) for :func:`learner_error`, where only the types are
    known (numba's dispatcher compiles from types); None if one has no stand-in."""
    from numba.cuda import types
    from numba.cuda.np.numpy_support import as_dtype
    out = []
    for t in argtypes:
        try:
            if isinstance(t, types.Array):
                out.append(np.zeros((1,) * t.ndim, as_dtype(t.dtype)))
            elif isinstance(t, types.BaseTuple):
                inner = values_for_types(list(t))
                if inner is None:
                    return None
                out.append(tuple(inner))
            elif isinstance(t, (types.Integer, types.Float, types.Boolean, types.Complex)):
                out.append(as_dtype(t).type(0))
            else:
                return None
        except Exception:           # noqa: BLE001 - a type numpy has no dtype for
            return None
    return out


# -- ptxas' and the linker's errors, as the user's -------------------------------------
_UNRESOLVED = re.compile(r"Unresolved extern function '([^']+)'")
_EXTERN_FUNC = re.compile(r"^\s*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?([\w$]+)", re.M)
# extern functions the compiled code may call and simgpu.ptx does not provide: name -> why
# (vprintf, which print() compiles to, is implemented: simgpu/ptx/printf.py)
EXTERN_GAPS: dict[str, str] = {}


def _demangle(name):
    """'_ZL6__hadd6__halfS_' -> '__hadd' (the first Itanium-mangled name; `name` otherwise)."""
    m = re.match(r"_Z[LN]?(\d+)", name)
    return name[m.end():m.end() + int(m.group(1))] if m else name


def unlinked_extern_error(err, kernel):
    """A clear LaunchError for ptxas' 'Unresolved extern function' (numba's cuda.fp16 shims
    and other linked-in C functions: numba links them when it loads the module; the PTX that
    compile_ptx returns does not contain them), or None for any other tool failure."""
    names = _UNRESOLVED.findall(str(err))
    if not names:
        return None
    shown = ", ".join(sorted({_demangle(n) for n in names}))
    fp16 = any("half" in n or "hadd" in n or "hmul" in n for n in names)
    why = ("numba's cuda.fp16 operations (hadd, hmul, ...) call C shims that numba links in when it "
           "loads the module; " if fp16 else "the compiled code calls functions that numba links in "
           "when it loads the module; ")
    return LaunchError(f"executor='ptx': kernel {kernel!r} calls {shown}, which the PTX does not define: "
                       f"{why}simgpu does not link them yet, so ptxas cannot assemble the kernel "
                       f"(ptxas: {names[0]!r} unresolved)")


_TOO_MUCH_SHARED = re.compile(r"uses too much shared data \((0x[0-9a-fA-F]+) bytes, (0x[0-9a-fA-F]+) max\)")


def too_much_shared_error(err, kernel, gpu):
    """ptxas' 'uses too much shared data' as the LaunchError the IR path gives (or None)."""
    m = _TOO_MUCH_SHARED.search(str(err))
    if not m:
        return None
    used, limit = int(m.group(1), 16), int(m.group(2), 16)
    return LaunchError(f"kernel {kernel!r} declares {used:,} B of static shared memory per block; "
                       f"the limit for static shared arrays is {limit:,} B on the {gpu.name} "
                       "(static_shared_mem_per_block_bytes; ptxas refuses it)")


def check_externs(ck, kernel):
    """A clear LaunchError naming the user's line if the compiled code calls an extern
    function that simgpu.ptx does not implement (EXTERN_GAPS; none today)."""
    lines = ck.ptx.splitlines()
    for name in _EXTERN_FUNC.findall(ck.ptx):
        why = EXTERN_GAPS.get(name)
        if why is None:
            continue
        where = ""
        for n, text in enumerate(lines, 1):
            if text.strip().rstrip(",") == name and n > 1 and "call" in lines[n - 2]:
                src = ck.ptx_source.get(n - 1) or ck.ptx_source.get(n)
                if src is not None:
                    where = f" at {src.file}:{src.line}"
                    break
        raise LaunchError(f"executor='ptx': kernel {kernel!r} calls {name}{where}: {why}")
