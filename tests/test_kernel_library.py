"""One kernel library: the validation suite's kernels (validation/kernels/*.py) are copies of
simgpu.kernels' and may not drift from them.

The suite runs on a GPU machine without simgpu installed, so it keeps its own copies; this test
holds every suite kernel to the library's source text (the name the `cuda` module is imported
under is normalised) and to the values of the module constants the kernel reads."""
import ast
import glob
import importlib
import os
import re

import pytest

import simgpu.kernels

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITE = os.path.join(ROOT, "validation", "kernels")
LIBRARY = os.path.dirname(simgpu.kernels.__file__)


def _cuda_names(tree):
    """The names a module binds the cuda module to (numba's or simgpu's stand-in)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module in ("numba", None, "simgpu"):
            names |= {a.asname or a.name for a in node.names if a.name == "cuda"}
        elif isinstance(node, ast.Import):
            names |= {a.asname for a in node.names if a.name == "numba.cuda" and a.asname}
    return names


def _kernels(path):
    """{name: (normalised source, names of module-level constants it reads)} of the module's
    public top-level functions."""
    src = open(path, encoding="utf-8").read()
    tree = ast.parse(src)
    consts = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
              if isinstance(t, ast.Name)}
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            text = ast.get_source_segment(src, node)
            for alias in _cuda_names(tree) - {"cuda"}:
                text = re.sub(rf"\b{alias}\.", "cuda.", text)
            reads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in consts}
            out[node.name] = (text, reads)
    return out


def _library():
    lib = {}
    for path in sorted(glob.glob(os.path.join(LIBRARY, "*.py"))):
        mod = os.path.splitext(os.path.basename(path))[0]
        for name, (text, reads) in _kernels(path).items():
            assert name not in lib, f"{name} is defined twice in simgpu/kernels ({lib[name][0]} and {mod})"
            lib[name] = (mod, text, reads)
    return lib


SUITE_KERNELS = [(os.path.basename(p), name, k) for p in sorted(glob.glob(os.path.join(SUITE, "*.py")))
                 for name, k in _kernels(p).items()]


def test_the_suite_has_kernels():
    assert len(SUITE_KERNELS) >= 30


@pytest.mark.parametrize("module,name,kernel", SUITE_KERNELS, ids=[f"{m}::{n}" for m, n, _ in SUITE_KERNELS])
def test_every_suite_kernel_is_the_librarys(module, name, kernel):
    """The suite's copy has the library's source, line for line."""
    lib = _library()
    assert name in lib, f"validation/kernels/{module}::{name} is not in simgpu/kernels/: add it there"
    text, _ = kernel
    assert text == lib[name][1], f"validation/kernels/{module}::{name} differs from simgpu/kernels/{lib[name][0]}.py"


@pytest.mark.parametrize("module,name,kernel", SUITE_KERNELS, ids=[f"{m}::{n}" for m, n, _ in SUITE_KERNELS])
def test_the_constants_a_suite_kernel_reads_have_the_librarys_values(module, name, kernel, monkeypatch):
    """TILE, BLOCK, NBINS, ...: the same values in both modules (the suite at full size)."""
    monkeypatch.delenv("VALIDATION_TINY", raising=False)
    _, reads = kernel
    lib_mod, _, lib_reads = _library()[name]
    assert reads == lib_reads
    if not reads:
        return
    spec = importlib.util.spec_from_file_location(f"suite_{module[:-3]}", os.path.join(SUITE, module))
    suite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suite)
    lib = importlib.import_module(f"simgpu.kernels.{lib_mod}")
    assert {c: getattr(suite, c) for c in reads} == {c: getattr(lib, c) for c in reads}
