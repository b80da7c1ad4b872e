"""On the GPU machine: exercise simgpu.validate end to end (numba.cuda run, CUDA-event timing,
Nsight Compute counters) on a few classic kernels, and simgpu.gpus.from_device().

    python3 validation/device_validate.py OUTDIR
Writes OUTDIR/validate_api_h200.json (the Comparisons) and prints the tables.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import numpy as np  # noqa: E402

import simgpu  # noqa: E402  (patches np.row_stack before numba.cuda loads)
from simgpu import kernels as K  # noqa: E402


def main(out):
    rng = np.random.default_rng(0)
    n = 1 << 24
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    m = 1024
    A, B = rng.random((m, m), dtype=np.float32), rng.random((m, m), dtype=np.float32)
    t = rng.random((4096, 4096), dtype=np.float32)
    cases = [
        ("saxpy", K.saxpy, n // 256, 256, (np.float32(2), x, y, np.zeros(n, np.float32))),
        ("matmul_tiled", K.matmul_tiled_shape, (m // 16, m // 16), (16, 16), (A, B, np.zeros((m, m), np.float32))),
        ("transpose_tiled", K.transpose_padded_checked, (128, 128), (32, 32), (t, np.zeros_like(t))),
        ("reduce_sum", K.reduce_sum, n // 256, 256, (x, np.zeros(1, np.float32))),
    ]
    results = {"device": None, "from_device": None, "comparisons": []}
    try:
        g = simgpu.gpus.from_device()
        results["from_device"] = str(g)
        print("from_device:", g)
    except Exception as e:  # noqa: BLE001
        results["from_device"] = f"ERROR {e!r}"
    for name, k, grid, block, args in cases:
        cmp = simgpu.validate.against_gpu(k, grid, block, args, gpu="H200", repeat=20, ncu=True)
        print(cmp, flush=True)
        results["comparisons"].append(cmp.to_dict())
    with open(os.path.join(out, "validate_api_h200.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)


if __name__ == "__main__":
    main(sys.argv[1])
