"""First contact is fast (issue 23, item 5): `import simgpu` and `simgpu --help` load neither
numba(-cuda), simpy nor matplotlib; the demo says what it does before it loads them; a report
carries the kernel's first-launch compile time.  (How fast: benchmarks/bench_import.py.)"""
import os
import subprocess
import sys

import numpy as np

from simgpu import cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAVY = ("numba", "numba.cuda", "simpy", "matplotlib", "llvmlite")


def _loaded_after(statement):
    code = f"import sys\n{statement}\nprint('loaded:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                       check=True)
    last = p.stdout.strip().splitlines()[-1].removeprefix("loaded:")
    return last.split(",") if last else []


def test_import_simgpu_loads_no_heavy_package():
    assert _loaded_after("import simgpu") == []


def test_the_command_line_loads_no_heavy_package_before_it_needs_one():
    assert _loaded_after("import simgpu.cli; simgpu.cli.build_parser()") == []
    assert _loaded_after("import simgpu.cli; simgpu.cli.main(['gpus'])") == []


def test_names_resolve_on_first_use():
    import simgpu
    assert simgpu.jit is simgpu.runtime.jit and simgpu.Report is simgpu.runtime.Report
    assert simgpu.plot.roofline is not None and simgpu.gpus.__name__ == "simgpu.hardware.catalog"
    assert set(simgpu.__all__) <= set(dir(simgpu))
    try:
        simgpu.no_such_name
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("simgpu.no_such_name should raise AttributeError")


def test_demo_speaks_before_it_loads(monkeypatch, capsys):
    said = []

    def launches():
        said.append(capsys.readouterr().out)       # what was printed before the heavy import
        return []
    monkeypatch.setattr(cli, "demo_launches", launches)
    monkeypatch.setattr(cli, "engine_cached", lambda: True)        # no second process here
    assert cli.main(["demo"]) == 0
    assert said and said[0].startswith("simgpu demo: five classic kernels")
    assert "loaded in" in capsys.readouterr().out


def test_report_carries_the_compile_time():
    import simgpu
    from simgpu.kernels import vadd
    a = np.arange(64, dtype=np.float32)
    out = np.zeros_like(a)
    rep = simgpu.launch(vadd, 1, 64, (a, a, out), timing=False)
    assert rep.extras["compile_seconds"] >= 0.0
    assert np.array_equal(out, 2 * a)
