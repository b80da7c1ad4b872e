"""The launches `simgpu demo` runs: five classic kernels from the library on the modelled GPU,
and what makes the first demo on a machine quick: the memory model's numba code compiled in a
second process (simgpu.memory.warm) while numba-cuda compiles the five kernels here."""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..hardware import get_gpu
from ..runtime.executor import get_executor
from ..runtime.program import as_program
from ..runtime.ptx_path import cc_for
from .elementwise import saxpy
from .matmul import TILE, matmul_coalesced, matmul_tiled_shape
from .reduction import TPB, reduce_sum
from .transpose import transpose_padded_checked


def demo_launches(scale=1):
    """(title, kernel, grid, block, args, check) for `simgpu demo`."""
    rng = np.random.default_rng(0)
    n = 1 << 20
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    m = 256
    A, B = rng.random((m, m), dtype=np.float32), rng.random((m, m), dtype=np.float32)
    C1, C2 = np.zeros((m, m), np.float32), np.zeros((m, m), np.float32)
    r = np.zeros(1, np.float32)
    t_in = rng.random((1024, 1024), dtype=np.float32)
    t_out = np.zeros_like(t_in)
    g = (m + TILE - 1) // TILE
    return [
        ("saxpy: 1M elements, 12 MB moved (the Timing section names its bottleneck)", saxpy, n // TPB, TPB,
         (np.float32(2), x, y, out),
         lambda: np.allclose(out, 2 * x + y)),
        ("naive matmul 256x256 (coalesced B)", matmul_coalesced, (g, g), (TILE, TILE), (A, B, C1),
         lambda: np.allclose(C1, A @ B, rtol=1e-4)),
        ("tiled matmul 256x256, 16x16 shared tiles", matmul_tiled_shape, (g, g), (TILE, TILE), (A, B, C2),
         lambda: np.allclose(C2, A @ B, rtol=1e-4)),
        ("tree reduction of 1M floats", reduce_sum, n // TPB, TPB, (x, r),
         lambda: np.isclose(r[0], x.sum(dtype=np.float64), rtol=1e-4)),
        ("padded shared-memory transpose 1024x1024", transpose_padded_checked, (32, 32), (32, 32), (t_in, t_out),
         lambda: np.array_equal(t_out, t_in.T)),
    ]


def start_engine_compile():
    """``python -m simgpu.memory.warm`` in a process of its own (numba compiles the memory
    model's engine into its cache, or finds it there), or None where it cannot start."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    try:
        return subprocess.Popen([sys.executable, "-m", "simgpu.memory.warm"], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return None


def finish_engine_compile(proc, timeout=300):
    """Wait for start_engine_compile's process (a launch that began before it ended would
    compile the engine a second time); False if it failed (the launch compiles it then)."""
    if proc is None:
        return False
    try:
        return proc.wait(timeout=timeout) == 0
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return False


def compile_kernels(launches, gpu=None):
    """Compile each launch's kernel for its arguments (numba-cuda, ptxas, nvdisasm: simgpu's
    disk cache, which the launch's own compile then reads), in threads: numba-cuda compiles one
    at a time (its lock), while ptxas and nvdisasm, separate processes, run beside it.  Nothing
    where the default executor is not the compiled path.  Returns how many it compiled."""
    ex = get_executor("auto")
    compile_program = getattr(ex, "compile_program", None)
    if ex.name != "ptx" or compile_program is None or not launches:
        return 0
    cc = cc_for(get_gpu(gpu))
    with ThreadPoolExecutor(max_workers=len(launches)) as pool:
        done = [pool.submit(compile_program, as_program(kernel), list(args), cc)
                for _, kernel, _, _, args, _ in launches]
        for f in done:
            f.result()
    return len(launches)
