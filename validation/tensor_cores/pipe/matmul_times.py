"""On the H200: Triton's tutorial fp16 matmul (validation/tensor_cores/wgmma/kernels.py, sm_90a
as Triton's JIT compiles it there) timed with triton.testing.do_bench at the issue's sizes, one
fixed config (the tutorial's first Hopper autotune config), so that simgpu predicts the same
kernel.  Writes $OUT/h200_matmul_times.json."""
import datetime, json, os, shutil, sys
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs("/tmp/simgpu_wgmma", exist_ok=True)
shutil.copy(os.path.join(HERE, "..", "wgmma", "kernels.py"), "/tmp/simgpu_wgmma/kernels.py")
sys.path.insert(0, "/tmp/simgpu_wgmma")
import torch, triton
from triton.testing import do_bench
import kernels as K

META = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, num_warps=8, num_stages=3)
SHAPES = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (1000, 1500, 700), (512, 512, 512)]
res = {"date": datetime.datetime.utcnow().isoformat() + "Z", "triton": triton.__version__, "torch": torch.__version__,
       "gpu": torch.cuda.get_device_name(), "cuda": torch.version.cuda, "meta": META, "method":
       "triton.testing.do_bench(warmup=25, rep=100, return_mode='median') (L2 flushed before each call)", "cases": {}}
for M, N, Kd in SHAPES:
    a = torch.randn((M, Kd), device="cuda", dtype=torch.float16)
    b = torch.randn((Kd, N), device="cuda", dtype=torch.float16)
    c = torch.empty((M, N), device="cuda", dtype=torch.float16)
    grid = lambda m: (triton.cdiv(M, m["BLOCK_SIZE_M"]) * triton.cdiv(N, m["BLOCK_SIZE_N"]),)
    fn = lambda: K.matmul_kernel[grid](a, b, c, M, N, Kd, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                       c.stride(0), c.stride(1), **META)
    ck = fn()
    torch.cuda.synchronize()
    ms = do_bench(fn, warmup=25, rep=100, return_mode="median")
    ref = torch.matmul(a, b)
    err = float((c.float() - ref.float()).abs().max())
    res["cases"][f"{M}x{N}x{Kd}"] = {"M": M, "N": N, "K": Kd, "time_ms": ms, "tflops": 2 * M * N * Kd / ms / 1e9,
                                     "n_regs": ck.n_regs, "shared": ck.metadata.shared, "max_abs_vs_torch": err}
    print(M, N, Kd, f"{ms * 1e3:.1f} us", f"{2 * M * N * Kd / ms / 1e9:.0f} TFLOP/s", flush=True)
json.dump(res, open(os.path.join(os.environ.get("OUT", "/tmp"), "h200_matmul_times.json"), "w"), indent=1)
