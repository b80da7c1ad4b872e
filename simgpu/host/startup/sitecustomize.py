"""simgpu's startup hook for child Python processes (see simgpu/host/install.py, "children").

``simgpu.install()`` puts this folder first on ``PYTHONPATH`` and sets ``SIMGPU_INSTALL`` (the
GPU and the memory/sass options as JSON), so a Python process the program starts -- a
``subprocess.run([sys.executable, ...])``, a ``multiprocessing`` spawn -- imports this module at
startup (Python's ``site`` imports the first ``sitecustomize`` on ``sys.path``).  It imports
nothing heavy: it puts a finder first on ``sys.meta_path`` that waits for ``numba.cuda`` to be
imported and, once numba.cuda's own ``__init__`` has run, calls
``simgpu.host.install.install_from_env()``; a child that never imports numba.cuda pays nothing.
Another ``sitecustomize`` further along ``sys.path`` (the environment's own) is run afterwards.
(simgpu's modules are loaded with importlib here, when the hook fires: this file is not part of
simgpu's import graph, it runs before any of simgpu is imported.)
"""
import importlib
import importlib.abc
import importlib.machinery
import os
import sys

ENV = "SIMGPU_INSTALL"
HERE = os.path.dirname(os.path.abspath(__file__))


class InstallAfterNumbaCuda(importlib.abc.MetaPathFinder):
    """Finds numba.cuda with the other finders, and installs simgpu once it has loaded."""

    def find_spec(self, name, path=None, target=None):
        if name != "numba.cuda":
            return None
        spec = None
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader, hook = spec.loader, self
        exec_module = loader.exec_module

        def exec_then_install(module):
            exec_module(module)
            if hook in sys.meta_path:
                sys.meta_path.remove(hook)
            importlib.import_module("simgpu.host.install").install_from_env()

        loader.exec_module = exec_then_install
        return spec


def _chain_next_sitecustomize():
    rest = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.origin and os.path.dirname(os.path.abspath(spec.origin)) != HERE:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


if os.environ.get(ENV) and "numba.cuda" not in sys.modules:
    sys.meta_path.insert(0, InstallAfterNumbaCuda())
_chain_next_sitecustomize()
