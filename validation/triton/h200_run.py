"""On the H200: Triton's own JIT compiles and runs validation/triton's kernels; writes the PTX,
the outputs and do_bench times under $OUT (compare.py puts them beside simgpu's)."""
import json, os, shutil, sys, datetime, subprocess
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs("/tmp/simgpu_triton", exist_ok=True)
shutil.copy(os.path.join(HERE, "kernels.py"), "/tmp/simgpu_triton/kernels.py")
sys.path.insert(0, "/tmp/simgpu_triton")
import torch, triton
from triton.testing import do_bench
import kernels as K

OUT = os.environ.get("OUT", "/tmp/out")
os.makedirs(OUT, exist_ok=True)
res = {"date": datetime.datetime.utcnow().isoformat() + "Z", "triton": triton.__version__, "torch": torch.__version__,
       "gpu": torch.cuda.get_device_name(), "cuda": torch.version.cuda, "cases": {}}
try:
    res["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem",
                                        "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
except Exception as e:
    res["nvidia_smi"] = str(e)


def inputs(kind, size):
    rng = np.random.default_rng(1234)
    if kind == "add":
        return rng.random(size, np.float32), rng.random(size, np.float32)
    return (rng.standard_normal(size).astype(np.float32),)


for name, kind, size, meta in K.cases():
    ins = inputs(kind, size)
    np.save(os.path.join(OUT, f"{name}_in.npy"), np.stack(ins) if kind == "add" else ins[0])
    t = [torch.from_numpy(a).cuda() for a in ins]
    if kind == "add":
        out = torch.empty_like(t[0])
        n = size
        fn = lambda: K.add_kernel[(triton.cdiv(n, meta["BLOCK_SIZE"]),)](t[0], t[1], out, n, **meta)
    else:
        R, C = size
        out = torch.empty_like(t[0])
        BS = triton.next_power_of_2(C)
        grid = (min(R, 132 * 4),)
        fn = lambda: K.softmax_kernel[grid](out, t[0], t[0].stride(0), out.stride(0), R, C, BLOCK_SIZE=BS, **meta)
    ck = fn()
    torch.cuda.synchronize()
    open(os.path.join(OUT, f"{name}.ptx"), "w").write(ck.asm["ptx"])
    np.save(os.path.join(OUT, f"{name}_out.npy"), out.cpu().numpy())
    ms = do_bench(fn, warmup=25, rep=100, return_mode="median")
    res["cases"][name] = {"time_ms": ms, "n_regs": getattr(ck, "n_regs", None), "shared": ck.metadata.shared,
                          "ptr_0": t[0].data_ptr() % 512}
    print(name, f"{ms*1e3:.2f} us", ck.n_regs)

# autotune: the card's pick, and each config's time
n = 1 << 22
x = torch.from_numpy(np.random.default_rng(7).random(n, np.float32)).cuda()
o = torch.empty_like(x)
K.scale_kernel[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, o, n)
torch.cuda.synchronize()
best = K.scale_kernel.best_config
times = {}
for c in K.scale_kernel.configs:
    jf = K.scale_kernel.fn
    g = (triton.cdiv(n, c.kwargs["BLOCK"]),)
    times[str(c)] = do_bench(lambda: jf[g](x, o, n, num_warps=c.num_warps, num_stages=c.num_stages, **c.kwargs),
                             warmup=25, rep=100, return_mode="median")
res["autotune"] = {"n": n, "best": str(best), "time_ms": times}
print("autotune best", best, times)
json.dump(res, open(os.path.join(OUT, "h200.json"), "w"), indent=1)
