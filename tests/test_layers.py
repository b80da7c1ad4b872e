"""The package's layers hold in the code, not only on paper (docs/design.md).

Imports of simgpu modules sit at the top of each module, where the import contract in
setup.cfg (run by `lint-imports` in CI) can see them; a function-local import hides a cycle.
Third-party packages that are optional or slow to import may be imported inside functions,
and only those in the allow-list below.
"""
import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "simgpu")

# optional or heavy third-party packages a function may import when it is called
LOCAL_THIRD_PARTY_OK = {"matplotlib", "numba", "numba_cuda", "hypothesis", "IPython", "cuda"}


def _local_imports():
    for dirpath, _, files in os.walk(PKG):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            tree = ast.parse(open(path, encoding="utf-8").read(), path)
            for node in ast.walk(tree):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Import):
                        mods = [a.name for a in sub.names]
                    elif isinstance(sub, ast.ImportFrom):
                        mods = ["." * sub.level + (sub.module or "")]
                    else:
                        continue
                    for m in mods:
                        yield os.path.relpath(path, ROOT), sub.lineno, m


def test_no_function_local_imports_of_simgpu_modules():
    """No function or class body imports a simgpu module (relative or absolute)."""
    bad = sorted({(p, ln, m) for p, ln, m in _local_imports() if m.startswith(".") or m.split(".")[0] == "simgpu"})
    assert bad == [], "move these imports to the top of their module:\n" + "\n".join(f"{p}:{ln}: {m}" for p, ln, m in bad)


def test_function_local_third_party_imports_are_allow_listed():
    """A function-local import of another package is one of the optional/heavy ones."""
    stdlib_or_listed = LOCAL_THIRD_PARTY_OK
    bad = sorted({(p, ln, m) for p, ln, m in _local_imports()
                  if not m.startswith(".") and m.split(".")[0] != "simgpu"
                  and m.split(".")[0] not in stdlib_or_listed})
    assert bad == [], "import these at module level, or add the package to LOCAL_THIRD_PARTY_OK:\n" + \
        "\n".join(f"{p}:{ln}: {m}" for p, ln, m in bad)


def test_the_import_contract_holds():
    """import-linter's layers contract in setup.cfg is kept (CI also runs lint-imports)."""
    importlinter = pytest.importorskip("importlinter")
    from importlinter.cli import lint_imports
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        assert lint_imports(config_filename=os.path.join(ROOT, "setup.cfg")) == 0
    finally:
        os.chdir(cwd)
