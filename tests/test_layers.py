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
LOCAL_THIRD_PARTY_OK = {"matplotlib", "numba", "numba_cuda", "hypothesis", "IPython", "cuda",
                        "triton"}  # triton: optional (the Triton front door), and slow to import


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


# ---- no reaching into another package's privates ------------------------------------------
def _modules():
    for dirpath, _, files in os.walk(PKG):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                mod = rel[:-len(".__init__")] if rel.endswith(".__init__") else rel
                yield path, mod, ast.parse(open(path, encoding="utf-8").read(), path)


def _package(mod):
    """simgpu.ptx.runner -> 'ptx'; simgpu.events -> 'events'."""
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else ""


def _is_module(mod):
    base = os.path.join(ROOT, *mod.split("."))
    return os.path.exists(base + ".py") or os.path.isdir(base)


def test_no_private_name_is_imported_across_packages():
    """`from simgpu.ptx.runner import _find_entry` in runtime/ is how a seam hides: what another
    package needs is public (or is a constructor argument)."""
    bad = []
    for path, mod, tree in _modules():
        is_pkg = path.endswith("__init__.py")
        for n in ast.walk(tree):
            if not isinstance(n, ast.ImportFrom):
                continue
            if n.level:
                base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                base = base[:len(base) - (n.level - 1)]
                target = ".".join(base + ([n.module] if n.module else []))
            else:
                target = n.module or ""
            if not target.startswith("simgpu") or _package(target) == _package(mod):
                continue
            for a in n.names:
                if a.name.startswith("_") and not a.name.startswith("__") and \
                        not _is_module(f"{target}.{a.name}"):
                    bad.append(f"{os.path.relpath(path, ROOT)}:{n.lineno} imports {target}.{a.name}")
    assert not bad, "\n".join(bad)


def test_no_private_attribute_is_written_on_another_packages_object():
    """`mask._any = True` outside simgpu/events.py, where Mask lives: an object's private state
    is written by its own package (constructor arguments, methods), never from outside.  A
    private attribute belongs to the packages whose code assigns it on ``self``."""
    owners, writes = {}, []
    for path, mod, tree in _modules():
        for n in ast.walk(tree):
            targets = n.targets if isinstance(n, ast.Assign) else \
                [n.target] if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if not isinstance(e, ast.Attribute) or not e.attr.startswith("_") or \
                            e.attr.startswith("__"):
                        continue
                    if isinstance(e.value, ast.Name) and e.value.id in ("self", "cls"):
                        owners.setdefault(e.attr, set()).add(_package(mod))
                    else:
                        writes.append((os.path.relpath(path, ROOT), n.lineno, e.attr, _package(mod),
                                       ast.unparse(e)))
    bad = [f"{p}:{line} writes {text} (owned by {sorted(owners[a])})"
           for p, line, a, pkg, text in writes if a in owners and pkg not in owners[a]]
    assert not bad, "\n".join(bad)
