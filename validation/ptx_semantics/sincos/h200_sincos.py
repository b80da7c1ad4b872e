"""sinf/cosf of large float32 arguments on the H200 (numba-cuda: libdevice __nv_sinf/__nv_cosf,
the Payne-Hanek slow path above |x| >= 105615), for tests/test_ptx_carry.py."""
import json, os, sys, datetime, platform
import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import _common  # noqa: E402,F401  (np.row_stack for numba on numpy 2.5; validation/'s one copy)
import math
from numba import cuda
import numba

def inputs():
    rng = np.random.default_rng(20261202)
    mag = np.exp(rng.uniform(np.log(1e5), np.log(3.4e38), 3000)).astype(np.float32)
    sign = np.where(rng.random(3000) < 0.5, -1, 1).astype(np.float32)
    special = np.array([105614.0, 105615.0, 105616.0, 1e5, 1e6, 1e7, 1e10, 1e20, 1e30, 3.4028235e38,
                        -3.4028235e38, 2.0**24, 2.0**63, 2.0**100, 2.0**127, 8388608.0, 16777216.0,
                        0.0, -0.0, 1e-40, 1.0, 3.1415927, 1.5707964, np.inf, -np.inf, np.nan], np.float32)
    near = (np.arange(1, 400, dtype=np.float64) * np.pi / 2 * 1e4).astype(np.float32)
    return np.concatenate([mag * sign, special, near]).astype(np.float32)

@cuda.jit
def sincos(x, s, c):
    i = cuda.grid(1)
    if i < x.size:
        s[i] = math.sin(x[i])
        c[i] = math.cos(x[i])

x = inputs()
s = np.zeros_like(x); c = np.zeros_like(x)
sincos[(x.size + 127) // 128, 128](x, s, c)
out = os.environ.get("OUT", ".")
np.savez(os.path.join(out, "h200_sincos_f32.npz"), x=x, sin=s, cos=c)
meta = {"card": cuda.get_current_device().name.decode() if isinstance(cuda.get_current_device().name, bytes) else str(cuda.get_current_device().name),
        "date": datetime.date.today().isoformat(), "numba": numba.__version__,
        "numba_cuda": __import__("numba_cuda").__version__ if hasattr(__import__("numba_cuda"), "__version__") else "?",
        "python": platform.python_version(), "n": int(x.size)}
try:
    import subprocess
    meta["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
except Exception as e:
    meta["driver"] = str(e)
json.dump(meta, open(os.path.join(out, "h200_sincos_f32.json"), "w"), indent=1)
print(meta, "nan-free outputs:", int(np.isfinite(s).sum()))
