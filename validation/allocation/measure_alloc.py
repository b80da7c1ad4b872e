"""Measure how the CUDA driver places consecutive device allocations (issue 25 item 1).

For each size: 6 consecutive allocations through numba.cuda (its memalloc is cuMemAlloc_v2,
no pool); prints the device pointers, their spacing and cuMemGetAddressRange's (base, size).
Then kernels read/write past an allocation's end (numba does not bounds-check) to see what the
card does: a read 8 bytes past a 1000-element float64 array, 24 KB past a 1 MB one, and a write
just past the end read back.  Runs on the device machine; output in the file passed as argv[1].
"""
import ctypes
import datetime
import json
import subprocess
import sys

import os

import numpy as np
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from _common import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
import numba  # noqa: E402
from numba import cuda

out = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "numba": numba.__version__,
       "numpy": np.__version__}
try:
    out["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                        "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
except Exception as e:
    out["nvidia_smi"] = repr(e)
ctx = cuda.current_context()
drv = cuda.cudadrv.driver.driver
for key, f in [("driver_version", lambda: drv.get_version()), ("runtime_version", lambda: cuda.runtime.get_version()),
               ("device", lambda: cuda.get_current_device().name)]:
    try:
        out[key] = str(f())
    except Exception as e:
        out[key] = repr(e)
libcuda = ctypes.CDLL("libcuda.so.1")


def addr_range(p):
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    rc = libcuda.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(p))
    return (int(base.value), int(size.value)) if rc == 0 else ("rc", rc)


keep = []


def ptr_of(m):
    v = getattr(m, "device_pointer_value", None)
    if v is None:
        p = m.device_pointer
        v = getattr(p, "value", None)
        v = int(p) if v is None else v
    return int(v)


sizes = [1, 8, 100, 255, 256, 257, 500, 511, 512, 513, 1000, 1024, 4096, 4097, 65536, 100000,
         2 ** 17, 2 ** 18, 2 ** 19, 2 ** 20 - 1, 2 ** 20, 2 ** 20 + 1, 2 ** 21 - 1, 2 ** 21,
         2 ** 21 + 1, 3 * 2 ** 20, 2 ** 22 + 1, 8000000, 10 ** 8]
rows = []
for n in sizes:
    ptrs = []
    for _ in range(6):
        m = ctx.memalloc(n)
        keep.append(m)
        ptrs.append(ptr_of(m))
    rng = [addr_range(p) for p in ptrs]
    rows.append({"size": n, "ptrs": [hex(p) for p in ptrs],
                 "deltas": [ptrs[i + 1] - ptrs[i] for i in range(5)],
                 "align_lowbits": [(p & -p).bit_length() - 1 for p in ptrs],
                 "addr_range": [(hex(b), s) if isinstance(b, int) else (b, s) for b, s in rng]})
    print(n, rows[-1]["deltas"], rows[-1]["addr_range"][0], flush=True)
out["allocations"] = rows

# interleaved sizes: does a small allocation follow a big one in the same page?
inter = []
for n in [100, 3 * 2 ** 20, 100, 1000, 2 ** 21 + 1, 8, 513]:
    m = ctx.memalloc(n)
    keep.append(m)
    inter.append((n, hex(ptr_of(m)), addr_range(ptr_of(m))[1]))
out["interleaved"] = inter
print("interleaved", inter, flush=True)


@cuda.jit
def read_at(a, idx, res):
    res[0] = a[idx]


@cuda.jit
def write_then_read(a, idx, res):
    a[idx] = 42.5
    cuda.threadfence()
    res[0] = a[idx]


tests = []
try:
    a = cuda.to_device(np.arange(1000, dtype=np.float64))      # 8000 B
    res = cuda.to_device(np.zeros(1))
    write_then_read[1, 1](a, 1001, res)
    cuda.synchronize()
    tests.append({"write_past_end_bytes": 16, "readback": float(res.copy_to_host()[0])})
except Exception as e:
    tests.append({"write_past_end_bytes": 16, "error": repr(e)})
print(tests[-1], flush=True)
for n_elems, extra_bytes in [(1000, 8), (1000, 2000), (12500, 24 * 1024), (131072, 24 * 1024),
                             (131072, 1 << 20)]:
    a = cuda.to_device(np.arange(n_elems, dtype=np.float64))
    res = cuda.to_device(np.zeros(1))
    idx = n_elems - 1 + extra_bytes // 8
    try:
        read_at[1, 1](a, idx, res)
        cuda.synchronize()
        v = res.copy_to_host()[0]
        tests.append({"n_bytes": n_elems * 8, "read_past_end_bytes": extra_bytes, "ok": True,
                      "value": repr(v), "bits": hex(np.float64(v).view(np.uint64))})
    except Exception as e:
        tests.append({"n_bytes": n_elems * 8, "read_past_end_bytes": extra_bytes, "ok": False, "error": repr(e)})
        break
    print(tests[-1], flush=True)
out["kernel_tests"] = tests
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=1)
print(json.dumps({k: v for k, v in out.items() if k != "allocations"}, indent=1))
