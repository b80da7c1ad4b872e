"""On the H200: Triton's own JIT compiles (sm_90a) and runs the tutorial matmul of kernels.py;
writes each case's PTX, inputs and output bits and a do_bench time under $OUT."""
import datetime, json, os, shutil, subprocess, sys
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs("/tmp/simgpu_wgmma", exist_ok=True)
shutil.copy(os.path.join(HERE, "kernels.py"), "/tmp/simgpu_wgmma/kernels.py")
sys.path.insert(0, "/tmp/simgpu_wgmma")
import torch, triton
from triton.testing import do_bench
import kernels as K

OUT = os.environ.get("OUT", "/tmp/out")
os.makedirs(OUT, exist_ok=True)
res = {"date": datetime.datetime.utcnow().isoformat() + "Z", "triton": triton.__version__, "torch": torch.__version__,
       "gpu": torch.cuda.get_device_name(), "cuda": torch.version.cuda, "python": sys.version, "cases": {}}
try:
    res["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem",
                                        "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
except Exception as e:
    res["nvidia_smi"] = str(e)
arrays = {}
for name, M, N, K_, meta, fam in K.CASES:
    a, b = K.inputs(name, M, N, K_, fam)
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    c = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
    grid = lambda m: (triton.cdiv(M, m["BLOCK_SIZE_M"]) * triton.cdiv(N, m["BLOCK_SIZE_N"]),)
    fn = lambda: K.matmul_kernel[grid](ta, tb, c, M, N, K_, ta.stride(0), ta.stride(1), tb.stride(0), tb.stride(1),
                                       c.stride(0), c.stride(1), **meta)
    ck = fn()
    torch.cuda.synchronize()
    open(os.path.join(OUT, f"{name}.ptx"), "w").write(ck.asm["ptx"])
    arrays[name + "_a"], arrays[name + "_b"] = a.view(np.uint16), b.view(np.uint16)
    arrays[name + "_c"] = c.cpu().numpy().view(np.uint16)
    ms = do_bench(fn, warmup=10, rep=30, return_mode="median")
    res["cases"][name] = {"M": M, "N": N, "K": K_, "meta": meta, "family": fam, "time_ms": ms,
                          "n_regs": getattr(ck, "n_regs", None), "shared": ck.metadata.shared,
                          "wgmma": "wgmma.mma_async" in ck.asm["ptx"], "ptrs_mod_256": [t.data_ptr() % 256 for t in (ta, tb, c)]}
    print(name, f"{ms*1e3:.2f} us", ck.n_regs, "wgmma" in ck.asm["ptx"], flush=True)
np.savez_compressed(os.path.join(OUT, "h200_wgmma.npz"), **arrays)
json.dump(res, open(os.path.join(OUT, "h200_wgmma.json"), "w"), indent=1)
