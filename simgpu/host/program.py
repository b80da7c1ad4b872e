"""Running a whole program (``simgpu run prog.py`` / ``-m module``) on the modelled GPU."""
from __future__ import annotations

import os
import runpy
import sys

from .. import patches
from ..sanitize import collecting, parse_tools
from .install import install, uninstall


def run_program(path=None, module=None, argv=(), gpu=None, report_dir=None, out=None, check=None,
                lineinfo=False):
    """Run a Python file or module as __main__ with simgpu installed; print the session's
    summary at the end (and write each launch's report to `report_dir`).  Returns the exit
    status the program asked for (0 if it just ended).  check: sanitize every launch (True or
    tool names, docs/sanitizer.md); the findings' summary is printed at the end, and a
    program that ended well exits 1 if there were errors; kernels compile with line info then
    (lineinfo=True), so findings name the source lines."""
    if check:
        with collecting(parse_tools(check)) as col:
            try:
                status = run_program(path, module, argv, gpu, report_dir, out, lineinfo=True)
            finally:
                (out or sys.stdout).write(col.summary() + "\n")
        return status or (1 if col.report.errors else 0)
    out = out or sys.stdout
    session = install(gpu)
    restore = _force_lineinfo() if lineinfo else None
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path or module, *argv]
    status = 0
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
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        if restore is not None:
            restore()
        uninstall()
        out.write(session.summary() + "\n")
        if report_dir:
            written = session.write_reports(report_dir)
            out.write(f"simgpu: wrote {len(written)} file(s) to {report_dir}\n")
    return status


def _force_lineinfo():
    """Kernels compiled from now on get numba's ``lineinfo=True`` (a line table in the PTX:
    numba documents that code generation is unaffected; ``debug=True`` kernels keep theirs),
    so the sanitizer's findings in a whole program name source lines, not PTX lines.  Returns
    the function that undoes it (before uninstall(), which restores numba's own class)."""
    base = sys.modules["numba.cuda.dispatcher"]._Kernel

    class LineInfoKernel(base):
        def __init__(self, *args, **kwargs):
            if not kwargs.get("debug"):
                kwargs["lineinfo"] = True
            super().__init__(*args, **kwargs)

    LineInfoKernel.__name__ = LineInfoKernel.__qualname__ = base.__name__
    LineInfoKernel.__module__ = base.__module__
    return patches.push("numba.cuda.dispatcher:_Kernel", LineInfoKernel)
