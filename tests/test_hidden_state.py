"""No hidden state (issue 21, item 5).

* ``import simgpu`` changes nothing outside simgpu: numpy, numba, the warnings filters, the
  environment (checked in a fresh interpreter), and compiling through numba-cuda leaves numpy
  as it was even where numpy lacks ``row_stack`` (numpy >= 2.5, simulated here).
* Every numba-cuda patch is in simgpu/patches.py: a missing target is a clear SimGPUError at
  install(), and uninstall() puts every patched attribute back (identity).
* One settings object: the only reader of SIMGPU_* variables, overridable with a context
  manager, and recorded in ``rep.extras["config"]``.
* One SimGPUWarning.
"""
import ast
import importlib
import json
import os
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest

import simgpu
from simgpu import cuda as sim_cuda
from simgpu import patches, settings
from simgpu._compat import load_numba_cuda
from simgpu.errors import SimGPUError

numba_cuda = load_numba_cuda()          # None without numba.cuda (the tests needing it skip)
install_module = importlib.import_module("simgpu.host.install")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "simgpu")


def _child(code, timeout=300):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=timeout, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


# numpy >= 2.5 has no row_stack: take it away (after numba's own CPU registry, which asks for it
# on numpy < 2.5, has loaded), so a fresh interpreter looks like one with a current numpy
_WITHOUT_ROW_STACK = """
import numpy as np, numba, numba.np.arrayobj
if hasattr(np, "row_stack"):
    del np.row_stack
"""

_SNAPSHOT = """
import json, os, sys, types, warnings
def snap():
    import numpy, numba
    return {"numpy": dict(vars(numpy)), "numba": dict(vars(numba)), "filters": list(warnings.filters),
            "environ": dict(os.environ), "meta_path": list(sys.meta_path), "err": numpy.geterr(),
            "showwarning": warnings.showwarning}
def changed(before, after):
    out = []
    for mod in ("numpy", "numba"):
        b, a = before[mod], after[mod]
        out += [f"{mod}.{k} replaced" for k in b if k in a and a[k] is not b[k]]
        out += [f"{mod}.{k} removed" for k in b if k not in a]
        out += [f"{mod}.{k} added" for k in a if k not in b and not isinstance(a[k], types.ModuleType)]
    out += [k for k in ("filters", "environ", "meta_path", "err") if before[k] != after[k]]
    out += ["warnings.showwarning"] if before["showwarning"] is not after["showwarning"] else []
    return out
"""


def test_import_simgpu_changes_nothing_outside_simgpu():
    """A fresh interpreter: numpy's and numba's namespaces (identity of every attribute), the
    warnings filters, numpy's error state, sys.meta_path and os.environ are the same after
    ``import simgpu`` -- also where numpy has no ``row_stack`` (numpy >= 2.5)."""
    code = _WITHOUT_ROW_STACK + _SNAPSHOT + """
before = snap()
import simgpu
print(json.dumps(changed(before, snap())))
"""
    assert _child(code) == []


def test_compiling_through_numba_cuda_lends_row_stack_and_takes_it_back():
    """With a numpy without ``row_stack``, simgpu still compiles through numba-cuda (which asks
    for the name when its array registry loads), and numpy has no ``row_stack`` afterwards."""
    pytest.importorskip("numba_cuda")
    code = _WITHOUT_ROW_STACK + """
import json
import numpy as np
import numba
from numba import cuda
from simgpu.sass import toolchain
def add_one(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1
ptx, name = toolchain.compile_ptx(add_one, (numba.float32[:],), (9, 0))
print(json.dumps([".entry" in ptx, hasattr(np, "row_stack")]))
"""
    assert _child(code) == [True, False]


# -- the patch registry -----------------------------------------------------------------------
MODULES = ("numba.cuda", "numba.cuda.api", "numba.cuda.dispatcher", "numba.cuda.compiler",
           "numba.cuda.cudadrv.driver", "numba.cuda.cudadrv.devicearray", "numba.cuda.cudadrv.devices",
           "numba.cuda.kernels.transpose")


def _numba_namespaces():
    """{owner name: dict of its attributes}: every numba-cuda module simgpu patches, and the
    classes it patches (the test's own list, not the registry's)."""
    install_module._numba_cuda()
    mods = {m: sys.modules[m] for m in MODULES}
    owners = dict(mods)
    owners["Stream"] = mods["numba.cuda.cudadrv.driver"].Stream
    owners["ForAll"] = mods["numba.cuda.dispatcher"].ForAll
    return {name: dict(vars(o)) for name, o in owners.items()}


def _differences(before, after):
    out = []
    for owner, b in before.items():
        a = after[owner]
        out += [f"{owner}.{k} is not the original" for k in b if k in a and a[k] is not b[k]]
        out += [f"{owner}.{k} removed" for k in b if k not in a]
        out += [f"{owner}.{k} added" for k in a if k not in b and not isinstance(a[k], types.ModuleType)
                and k != "__warningregistry__"]            # (Python's record of warnings given)
    return out


def add_one(a):
    i = numba_cuda.grid(1)
    if i < a.size:
        a[i] += 1


def test_uninstall_puts_every_patched_attribute_back():
    """Compile through simgpu's PTX runner, install, run a numba.cuda kernel, uninstall: every
    attribute of the patched numba-cuda modules and classes is the same object as before."""
    pytest.importorskip("numba_cuda")
    from simgpu.ptx.runner import compile_numba
    before = _numba_namespaces()
    compile_numba(add_one, (np.zeros(8, np.float32),))        # pins the cc only while compiling
    simgpu.install(children=False)
    try:
        cuda = numba_cuda
        assert _differences(before, _numba_namespaces()) != []      # install() did change them
        d = cuda.to_device(np.zeros(32, np.float32))
        cuda.jit(add_one)[1, 32](d)
        assert d.copy_to_host().sum() == 32
    finally:
        simgpu.uninstall()
    assert _differences(before, _numba_namespaces()) == []
    assert patches.swapped_names() == []


def test_every_registered_target_exists_in_this_numba_cuda():
    pytest.importorskip("numba_cuda")
    install_module._numba_cuda()
    assert patches.missing() == []
    assert all(p.written_against for p in patches.PATCHES.values())


def test_a_missing_target_fails_install_clearly_and_changes_nothing(monkeypatch):
    """A registry entry whose target this numba-cuda lacks (a rename, say) stops install()
    with a SimGPUError naming the target and the installed numba-cuda version, before any
    attribute is changed."""
    pytest.importorskip("numba_cuda")
    gone = patches.Patch("numba.cuda.dispatcher", "_RenamedKernel", "a name numba-cuda renamed")
    monkeypatch.setitem(patches.PATCHES, gone.name, gone)
    before = _numba_namespaces()
    with pytest.raises(SimGPUError) as err:
        simgpu.install(children=False)
    msg = str(err.value)
    assert "numba.cuda.dispatcher:_RenamedKernel" in msg
    assert patches.numba_cuda_version() in msg and "written against" in msg
    assert not simgpu.host.is_installed()
    assert _differences(before, _numba_namespaces()) == []


def test_swapped_puts_back_what_it_found():
    pytest.importorskip("numba_cuda")
    install_module._numba_cuda()
    disp = sys.modules["numba.cuda.dispatcher"]
    real = disp.get_current_device
    with patches.swapped("numba.cuda.dispatcher:get_current_device", lambda: None):
        assert disp.get_current_device is not real
    assert disp.get_current_device is real
    with pytest.raises(SimGPUError, match="not in simgpu's patch registry"):
        patches.swap("numba.cuda:no_such_patch", None)


def test_no_module_but_patches_writes_numba_attributes():
    """simgpu writes attributes of numba-cuda's modules only through simgpu/patches.py: no
    other module assigns to an attribute of a name bound to a numba module or class."""
    bad = []
    for path in _modules():
        if path.endswith(os.path.join("simgpu", "patches.py")):
            continue
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        numba_names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                numba_names |= {(a.asname or a.name).split(".")[0] for a in node.names
                                if a.name.startswith("numba") and a.asname}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("numba"):
                numba_names |= {a.asname or a.name for a in node.names}
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript):
                v = node.value                               # x = sys.modules["numba..."]
                if isinstance(v.slice, ast.Constant) and str(v.slice.value).startswith("numba"):
                    numba_names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for t in targets:
                if isinstance(t, ast.Attribute):
                    root = t.value
                    while isinstance(root, ast.Attribute):
                        root = root.value
                    if isinstance(root, ast.Name) and root.id in numba_names | {"numba"}:
                        bad.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}")
                    if isinstance(root, ast.Subscript) and isinstance(root.slice, ast.Constant) \
                            and str(root.slice.value).startswith("numba"):
                        bad.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}")
    assert bad == [], "patch numba-cuda through simgpu/patches.py:\n" + "\n".join(bad)


# -- settings ---------------------------------------------------------------------------------
def test_settings_read_the_environment_once():
    env = {"SIMGPU_EXECUTOR": " IR ", "SIMGPU_PTX_KERNEL_CACHE": "0", "SIMGPU_PTX_BLOCKS": "0",
           "SIMGPU_PTX_JIT": "0", "SIMGPU_PTX_JIT_LANES": "64", "SIMGPU_CACHE_DIR": "/tmp/c",
           "SIMGPU_NO_CACHE": "1", "SIMGPU_PTXAS": "/opt/ptxas", "SIMGPU_NVDISASM": "/opt/nvdisasm",
           "SIMGPU_TOOLCHAIN": "/opt/tc13", "SIMGPU_INSTALL": "{}", "SIMGPU_TRACEBACK": "Full", "SIMGPU_NUMBA_ERRORS": "full ",
           "SIMGPU_RACE_CHECK": "0", "SIMGPU_SLOW_LAUNCH_SECONDS": "30", "SIMGPU_DEVICES": "2",
           "SIMGPU_PTX_SASS_NAN": "0", "SIMGPU_LTO": "Off"}
    s = settings.from_environment(env)
    assert s == settings.Settings(executor="ir", ptx_kernel_cache=False, ptx_blocks=False, ptx_jit=False,
                                  ptx_jit_lanes=64, cache_dir="/tmp/c",
                                  disk_cache=False, ptxas="/opt/ptxas", nvdisasm="/opt/nvdisasm",
                                  toolchain="/opt/tc13", install="{}", traceback="full", numba_errors="full",
                                  race_check=False, slow_launch_seconds=30.0, devices=2,
                                  ptx_sass_nan=False, lto="off")
    assert settings.from_environment({}) == settings.Settings()
    assert sorted(settings.variable(f) for f in settings.FIELDS) == sorted(env)
    with pytest.raises(SimGPUError, match="SIMGPU_EXECUTOR"):
        settings.from_environment({"SIMGPU_EXECUTOR": "gpu"})
    with pytest.raises(SimGPUError, match="SIMGPU_PTX_JIT_LANES"):
        settings.from_environment({"SIMGPU_PTX_JIT_LANES": "many"})
    with pytest.raises(SimGPUError, match="SIMGPU_DEVICES"):
        settings.from_environment({"SIMGPU_DEVICES": "0"})


def test_settings_are_read_once_until_reload(monkeypatch):
    first = settings.current()
    monkeypatch.setenv("SIMGPU_CACHE_DIR", "/somewhere/else")
    assert settings.current() is first
    settings.reload()
    try:
        assert settings.current().cache_dir == "/somewhere/else"
    finally:
        monkeypatch.undo()
        settings.reload()
    assert settings.current() == first


def test_override_nests_and_is_undone():
    base = settings.current()
    with settings.override(executor="ir", disk_cache=False) as s:
        assert s.executor == "ir" and settings.current().disk_cache is False
        with settings.override(executor="ptx"):
            assert settings.current().executor == "ptx" and settings.current().disk_cache is False
        assert settings.current().executor == "ir"
    assert settings.current() == base
    with pytest.raises(SimGPUError, match="unknown setting"):
        with settings.override(exectuor="ir"):
            pass
    with pytest.raises(SimGPUError, match="executor"):
        with settings.override(executor="gpu"):
            pass


def scale(x, out):
    i = sim_cuda.grid(1)
    if i < x.size:
        out[i] = 2 * x[i]


def test_the_config_record_shows_what_was_in_force():
    """rep.extras["config"] holds every setting for the launch; the executor setting, which
    changes which semantics run, is there with the executor that ran."""
    x = np.arange(32, dtype=np.float32)
    out = np.zeros_like(x)
    with settings.override(executor="ir", ptx_kernel_cache=False):
        rep = simgpu.launch(scale, 1, 32, (x, out), timing=False)
    np.testing.assert_array_equal(out, 2 * x)
    config = rep.extras["config"]
    assert config["executor"] == "ir" and config["executor_ran"] == "ir"
    assert config["ptx_kernel_cache"] is False
    assert set(settings.FIELDS) <= set(config)
    json.dumps(config)                                   # a plain record
    rep = simgpu.launch(scale, 1, 32, (x, out), timing=False, executor="ir")
    assert rep.extras["config"]["executor"] == settings.current().executor


def _modules():
    for dirpath, _, files in os.walk(PKG):
        for f in files:
            if f.endswith(".py"):
                yield os.path.join(dirpath, f)


# sitecustomize runs at every child's startup, before simgpu can be imported, and only checks
# that SIMGPU_INSTALL is set (its value is read through simgpu.settings by install_from_env)
ENV_READERS = {os.path.join("simgpu", "settings.py"), os.path.join("simgpu", "host", "startup", "sitecustomize.py")}


def _simgpu_variable(node, constants):
    """Whether ``node`` names a SIMGPU_* variable: a literal, an f-string starting with one, or a
    module-level name bound to one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.startswith("SIMGPU_")
    if isinstance(node, ast.JoinedStr) and node.values:
        return _simgpu_variable(node.values[0], constants)
    if isinstance(node, ast.BinOp):
        return _simgpu_variable(node.left, constants)
    return isinstance(node, ast.Name) and node.id in constants


def _is_environ(node):
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or \
        (isinstance(node, ast.Name) and node.id == "environ")


def _env_reads(path):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    constants = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                 if isinstance(t, ast.Name) and _simgpu_variable(n.value, set())}
    for node in ast.walk(tree):
        key = None
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "get" and _is_environ(f.value):
                key = node.args[0] if node.args else None
            elif getattr(f, "attr", getattr(f, "id", None)) == "getenv":
                key = node.args[0] if node.args else None
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environ(node.value):
            key = node.slice
        elif isinstance(node, ast.Compare) and any(_is_environ(c) for c in node.comparators):
            key = node.left
        if key is not None and _simgpu_variable(key, constants):
            yield node.lineno


def test_only_settings_reads_simgpu_environment_variables():
    """os.environ["SIMGPU_..."], os.environ.get("SIMGPU_..."), os.getenv("SIMGPU_...") and
    "SIMGPU_..." in os.environ appear in simgpu/settings.py only."""
    bad = [f"{os.path.relpath(p, ROOT)}:{ln}" for p in _modules()
           if os.path.relpath(p, ROOT) not in ENV_READERS for ln in _env_reads(p)]
    assert bad == [], "read SIMGPU_* variables through simgpu.settings:\n" + "\n".join(bad)


def test_the_environment_check_sees_each_form(tmp_path):
    p = tmp_path / "m.py"
    p.write_text('import os\nNAME = "SIMGPU_X"\nos.environ.get("SIMGPU_A")\nos.getenv("SIMGPU_B")\n'
                 'os.environ["SIMGPU_C"]\nos.environ.get(NAME)\nos.environ.get(f"SIMGPU_{n}")\n'
                 '"SIMGPU_D" in os.environ\nos.environ["SIMGPU_E"] = "1"\nos.environ.get("HOME")\n')
    assert list(_env_reads(str(p))) == [3, 4, 5, 6, 7, 8]


# -- one warning class ------------------------------------------------------------------------
def test_one_simgpu_warning():
    lint = importlib.import_module("simgpu.frontend.lint")
    session = importlib.import_module("simgpu.host.session")
    host = importlib.import_module("simgpu.host")
    assert simgpu.SimGPUWarning is simgpu.errors.SimGPUWarning is lint.SimGPUWarning \
        is session.SimGPUWarning is host.SimGPUWarning
    assert issubclass(simgpu.SimGPUWarning, UserWarning)
    defined = [os.path.relpath(p, ROOT) for p in _modules()
               for n in ast.walk(ast.parse(open(p, encoding="utf-8").read()))
               if isinstance(n, ast.ClassDef) and n.name == "SimGPUWarning"]
    assert defined == [os.path.join("simgpu", "errors.py")]
    with warnings.catch_warnings():
        warnings.simplefilter("error", simgpu.SimGPUWarning)       # one filter catches both kinds
        with pytest.raises(simgpu.SimGPUWarning):
            warnings.warn("x", session.SimGPUWarning)
        with pytest.raises(simgpu.SimGPUWarning):
            warnings.warn("y", lint.SimGPUWarning)
