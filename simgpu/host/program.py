"""Running a whole program (``simgpu run prog.py`` / ``-m module``) on the modelled GPU."""
from __future__ import annotations

import os
import runpy
import sys

from ..sanitize import collecting, parse_tools
from .install import install, uninstall


def run_program(path=None, module=None, argv=(), gpu=None, report_dir=None, out=None, check=None):
    """Run a Python file or module as __main__ with simgpu installed; print the session's
    summary at the end (and write each launch's report to `report_dir`).  Returns the exit
    status the program asked for (0 if it just ended).  check: sanitize every launch (True or
    tool names, docs/sanitizer.md); the findings' summary is printed at the end, and a
    program that ended well exits 1 if there were errors."""
    if check:
        with collecting(parse_tools(check)) as col:
            try:
                status = run_program(path, module, argv, gpu, report_dir, out)
            finally:
                (out or sys.stdout).write(col.summary() + "\n")
        return status or (1 if col.report.errors else 0)
    out = out or sys.stdout
    session = install(gpu)
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
        uninstall()
        out.write(session.summary() + "\n")
        if report_dir:
            written = session.write_reports(report_dir)
            out.write(f"simgpu: wrote {len(written)} file(s) to {report_dir}\n")
    return status
