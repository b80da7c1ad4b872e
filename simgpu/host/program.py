"""Running a whole program (``simgpu run prog.py`` / ``-m module``) on the modelled GPU."""
from __future__ import annotations

import os
import runpy
import sys

from .. import patches
from ..tracebacks import as_user_error, is_user_error, user_traceback
from ..runtime.compile_errors import program_compile_error, values_for_types
from ..runtime.program import KernelProgram
from ..sanitize import collecting, parse_tools
from .install import install, uninstall


def run_program(path=None, module=None, argv=(), gpu=None, report_dir=None, out=None, check=None,
                lineinfo=True):
    """Run a Python file or module as __main__ with simgpu installed; print the session's
    summary at the end (and write each launch's report to `report_dir`).  Returns the exit
    status the program asked for (0 if it just ended; 1 if it raised an exception, whose
    traceback is printed last, from the program's own frames on, as ``python prog.py`` would).  check: sanitize every launch (True or
    tool names, docs/sanitizer.md); the findings' summary is printed at the end, and a
    program that ended well exits 1 if there were errors.  lineinfo (on by default): kernels
    compile with numba's ``lineinfo=True``, so the reports' per-line tables and the
    sanitizer's findings name the program's source lines (docs/host.md: what it costs)."""
    if check:
        with collecting(parse_tools(check)) as col:
            try:
                status = run_program(path, module, argv, gpu, report_dir, out, lineinfo=lineinfo)
            finally:
                (out or sys.stdout).write(col.summary() + "\n")
        return status or (1 if col.report.errors else 0)
    out = out or sys.stdout
    session = install(gpu)
    restore = _program_kernels(lineinfo)
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path or module, *argv]
    status, failed = 0, None
    try:
        if module:
            sys.path.insert(0, os.getcwd())
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
            runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if not isinstance(e.code, (int, type(None))):
            print(e.code, file=sys.stderr)
    except Exception as e:      # noqa: BLE001 - the program's error, printed as Python would
        failed, status = e, 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        restore()
        uninstall()
        if failed is None or session.launches:
            out.write(session.summary() + "\n")
        if report_dir:
            written = session.write_reports(report_dir)
            out.write(f"simgpu: wrote {len(written)} file(s) to {report_dir}\n")
    if failed is not None:      # last, as `python prog.py` ends: the program's frames and the error
        out.flush()
        sys.stderr.write(user_traceback(failed))
    return status


def _program_kernels(lineinfo=True):
    """Kernels compiled from now on get numba's ``lineinfo=True`` where `lineinfo` (a line
    table in the PTX: the same code, measured in docs/host.md; ``debug=True`` kernels keep
    theirs), so the reports and the sanitizer's findings in a whole program name source lines,
    not PTX lines; and a kernel numba refuses fails with simgpu's reading of the mistake first
    (runtime/compile_errors.py).  Returns the function that undoes it (before uninstall(),
    which restores numba's own class)."""
    disp = sys.modules["numba.cuda.dispatcher"]
    base = disp._Kernel

    class ProgramKernel(base):
        def __init__(self, py_func, argtypes, *args, **kwargs):
            if lineinfo and not kwargs.get("debug"):
                kwargs["lineinfo"] = True
            try:
                super().__init__(py_func, argtypes, *args, **kwargs)
            except Exception as e:
                err = program_compile_error(e, KernelProgram(py_func), values_for_types(argtypes))
                if err is None or not is_user_error(err):
                    raise
                raise as_user_error(err)    # simgpu's reading first; numba's compiler frames left out

    ProgramKernel.__name__ = ProgramKernel.__qualname__ = base.__name__
    ProgramKernel.__module__ = base.__module__
    return patches.push("numba.cuda.dispatcher:_Kernel", ProgramKernel)
