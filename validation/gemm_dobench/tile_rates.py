"""Per-tile rates of cuBLAS's sm90 (nvjet) kernels: every algorithm cublasLtMatmulAlgoGetHeuristic
offers for two large square-ish bf16 shapes in no sweep (16384 x 16384 x 4096, 12288 x 12288 x 8192),
each timed with triton.testing.do_bench (L2 flushed, median) and named by torch.profiler (kernel
name, grid).  Issue 24, large-N ordering: the model's sm90 rate per tile shape.

    PYTHONUNBUFFERED=1 python3 tile_rates.py $OUT [MxNxK,MxNxK,...] [--warm SECONDS] [--passes N]

Run on an H100 SXM 2026-12-07 with the two default shapes and no warm-up (tile_rates.json; the
first pass at the first shape ran while the card ramped up to its power limit).  Given shapes
(e.g. the kernel-duration study in README.md: how much of a tile's clock penalty at the power
limit a 60 us .. 3 ms kernel shows), it times those instead; --warm runs torch.matmul at the first
shape for that long before any timing, so the card starts every point from the same state.  Run so
on an H100 SXM 2026-12-07 17:26 UTC (five shapes, --warm 3): tile_rates_durations.json.  --passes
(default 2) passes over the algorithms, alternately ascending and descending; the card's UUID and
NVML's temperature (a third number in each read) are recorded since then (the two runs above differ
2x in the 5-stage tiles' penalty at 3-4 ms, and neither says which card it ran on).
"""
import ctypes
import json
import os
import platform
import subprocess
import sys
import time

import torch
import triton
from triton.testing import do_bench

ARGS = [a for a in sys.argv[1:]]
WARM_S = 0.0
if "--warm" in ARGS:
    i = ARGS.index("--warm")
    WARM_S = float(ARGS[i + 1])
    del ARGS[i:i + 2]
PASSES = 2
if "--passes" in ARGS:
    i = ARGS.index("--passes")
    PASSES = int(ARGS[i + 1])
    del ARGS[i:i + 2]
OUT = ARGS[0] if ARGS else "."
T0 = time.time()
R = {"doc": __doc__, "env": {}, "shapes": {}}


def save():
    R["elapsed_s"] = time.time() - T0
    with open(os.path.join(OUT, "tile_rates.json"), "w") as f:
        json.dump(R, f, indent=1)


try:
    import pynvml
    pynvml.nvmlInit()
    NV = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception:
    NV = None


def nvml():
    if NV is None:
        return None
    try:
        read = [pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM),
                round(pynvml.nvmlDeviceGetPowerUsage(NV) / 1000.0, 1)]
    except Exception:
        return None
    try:
        read.append(pynvml.nvmlDeviceGetTemperature(NV, pynvml.NVML_TEMPERATURE_GPU))
    except Exception:
        pass
    return read


e = R["env"]
e["torch"], e["cuda"], e["triton"], e["python"] = torch.__version__, torch.version.cuda, triton.__version__, platform.python_version()
p = torch.cuda.get_device_properties(0)
e["gpu"], e["sm_count"] = p.name, p.multi_processor_count
e["date_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
try:
    e["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,power.limit,ecc.mode.current,uuid",
                                      "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
except Exception as exc:
    e["nvidia_smi"] = repr(exc)
torch.matmul(torch.ones(64, 64, device="cuda", dtype=torch.bfloat16), torch.ones(64, 64, device="cuda", dtype=torch.bfloat16))
lt = None
for nm in ("libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"):
    try:
        lt = ctypes.CDLL(nm)
        e["cublaslt_lib"] = nm
        break
    except OSError:
        pass
if lt is None:
    import glob
    for path in glob.glob(os.path.join(os.path.dirname(torch.__file__), "..", "nvidia", "**", "libcublasLt.so*"), recursive=True):
        lt = ctypes.CDLL(path)
        e["cublaslt_lib"] = path
        break
try:
    lt.cublasLtGetVersion.restype = ctypes.c_size_t
    e["cublaslt_version"] = int(lt.cublasLtGetVersion())
except Exception as exc:
    e["cublaslt_version"] = repr(exc)
print(e, flush=True)
save()


class Algo(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64 * 8)]


class Heur(ctypes.Structure):
    _fields_ = [("algo", Algo), ("workspaceSize", ctypes.c_size_t), ("state", ctypes.c_int),
                ("wavesCount", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


VP = ctypes.c_void_p


def chk(st, what):
    if st != 0:
        raise RuntimeError(f"{what}: cublasStatus {st}")


handle = VP()
chk(lt.cublasLtCreate(ctypes.byref(handle)), "create")
WS = 64 * 2 ** 20
ws = torch.empty(WS, dtype=torch.uint8, device="cuda")
CUDA_R_16BF, CUDA_R_32F, COMPUTE_32F = 14, 0, 68


def layout(rows, cols, ld):
    h = VP()
    chk(lt.cublasLtMatrixLayoutCreate(ctypes.byref(h), CUDA_R_16BF, ctypes.c_uint64(rows), ctypes.c_uint64(cols),
                                      ctypes.c_int64(ld)), "layout")
    return h


def algos_for(m, n, k, want=32):
    """torch's row-major (m x k) @ (k x n) as cuBLAS's column-major C^T (n x m) = B^T (n x k) A^T (k x m)."""
    desc = VP()
    chk(lt.cublasLtMatmulDescCreate(ctypes.byref(desc), COMPUTE_32F, CUDA_R_32F), "desc")
    la, lb, lc = layout(n, k, n), layout(k, m, k), layout(n, m, n)
    pref = VP()
    chk(lt.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "pref")
    wsz = ctypes.c_uint64(WS)
    chk(lt.cublasLtMatmulPreferenceSetAttribute(pref, 1, ctypes.byref(wsz), ctypes.c_size_t(8)), "pref ws")
    res = (Heur * want)()
    cnt = ctypes.c_int(0)
    chk(lt.cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, lc, lc, pref, want, res, ctypes.byref(cnt)), "heuristic")
    return desc, la, lb, lc, [res[i] for i in range(cnt.value) if res[i].state == 0]


def run_one(desc, la, lb, lc, h, a, b, c):
    alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
    stream = VP(torch.cuda.current_stream().cuda_stream)
    st = lt.cublasLtMatmul(handle, desc, ctypes.byref(alpha), VP(b.data_ptr()), la, VP(a.data_ptr()), lb,
                           ctypes.byref(beta), VP(c.data_ptr()), lc, VP(c.data_ptr()), lc,
                           ctypes.byref(h.algo), VP(ws.data_ptr()), ctypes.c_size_t(WS), stream)
    if st != 0:
        raise RuntimeError(f"matmul status {st}")


def names(fn):
    from torch.profiler import profile, ProfilerActivity
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    out = []
    for ev in prof.events():
        if ev.device_type.name == "CUDA" or "CUDA" in str(ev.device_type):
            out.append({"name": ev.name[:200], "dur_us": ev.device_time if hasattr(ev, "device_time") else ev.cuda_time})
    try:
        import json as _j
        tr = os.path.join(OUT, "_trace.json")
        prof.export_chrome_trace(tr)
        ev = _j.load(open(tr))["traceEvents"]
        os.remove(tr)
        out = [{"name": x["name"][:200], "dur_us": x.get("dur"), "grid": x.get("args", {}).get("grid"),
                "block": x.get("args", {}).get("block")} for x in ev if x.get("cat") == "kernel"]
    except Exception as exc:
        out.append({"trace_error": repr(exc)})
    return out


SHAPES = [(16384, 16384, 4096), (12288, 12288, 8192)]
if len(ARGS) > 1:
    SHAPES = [tuple(int(x) for x in sh.split("x")) for sh in ARGS[1].split(",")]
R["shapes_asked"], R["warm_s"], R["passes"] = [list(sh) for sh in SHAPES], WARM_S, PASSES
torch.manual_seed(0)
if WARM_S > 0:
    m, n, k = SHAPES[0]
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    t_end = time.time() + WARM_S
    while time.time() < t_end:
        for _ in range(10):
            torch.matmul(a, b)
        torch.cuda.synchronize()
    R["warm_nvml"] = nvml()
    a = b = None
for (m, n, k) in SHAPES:
    key = f"{m}x{n}x{k}"
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    ref = a @ b
    desc, la, lb, lc, hs = algos_for(m, n, k)
    rows = []
    for i, h in enumerate(hs):
        row = {"i": i, "waves_count": h.wavesCount, "workspace": h.workspaceSize}
        try:
            run_one(desc, la, lb, lc, h, a, b, c)
            torch.cuda.synchronize()
            row["max_abs_diff"] = float((c.float() - ref.float()).abs().max())
            row["kernels"] = names(lambda: run_one(desc, la, lb, lc, h, a, b, c))
        except Exception as exc:
            row["error"] = repr(exc)[:200]
        rows.append(row)
    tm = do_bench(lambda: torch.matmul(a, b), warmup=25, rep=100, return_mode="median")
    R["shapes"][key] = {"m": m, "n": n, "k": k, "algos": rows,
                        "torch_matmul": {"ms": tm, "nvml": nvml(), "kernels": names(lambda: torch.matmul(a, b))}}
    save()
    orders = [list(range(len(rows))) if p % 2 == 0 else list(reversed(range(len(rows)))) for p in range(PASSES)]
    for rep, order in enumerate(orders):
        for i in order:
            r = rows[i]
            if "error" in r:
                continue
            t = do_bench(lambda: run_one(desc, la, lb, lc, hs[i], a, b, c), warmup=25, rep=100, return_mode="median")
            r.setdefault("ms", []).append(t)
            r.setdefault("nvml", []).append(nvml())
        tm = do_bench(lambda: torch.matmul(a, b), warmup=25, rep=100, return_mode="median")
        R["shapes"][key]["torch_matmul"].setdefault("ms_reps", []).append(tm)
        save()
    for r in rows:
        kn = [x for x in r.get("kernels", []) if "name" in x]
        print(key, r["i"], r.get("ms"), kn[0]["name"][:60] if kn else r.get("error"), kn[0].get("grid") if kn else "", flush=True)
    print(key, "torch.matmul", R["shapes"][key]["torch_matmul"]["ms"], R["shapes"][key]["torch_matmul"]["kernels"][:1], flush=True)
    a = b = c = ref = None
    torch.cuda.empty_cache()
save()
print("done", time.time() - T0, flush=True)
