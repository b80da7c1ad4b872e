"""The CUDA C wgmma + TMA GEMM (kernels.py, WGMMA_TMA_CU) on the card, which targets_device.py
could not run (it needs host tensor maps: cuTensorMapEncodeTiled).  The cases and inputs are
targets_cases.py's (kernels.WGMMA_TMA_CASES), so ../targets_sim.py simulates the same launches.

    python3 wgmma_tma_device.py time   -> $OUT/wgmma_tma_card_time.json
        per case: registers (cuFuncGetAttribute NUM_REGS), do_bench median (warmup=25, rep=100,
        L2 flushed), CUPTI kernel durations (torch.profiler, median of 20), sha256 of C
    ncu --metrics ... python3 wgmma_tma_device.py ncu   (wgmma_tma_device.sh)
        one launch per case (ncu's CSV rows follow the cases' order)
    python3 wgmma_tma_device.py check   (here, no GPU: numpy + simgpu) -- the tensor-map arguments
        this script gives cuTensorMapEncodeTiled are simgpu.tensor_map's (encoded by simgpu both
        ways and compared byte for byte), the kernel compiles with NVRTC for sm_90a (cubin), the
        parameter block is laid out as the kernel's prototype wants.

On the card: torch (memory, do_bench, CUPTI), cuda-bindings' driver API (module, tensor maps,
launch) and NVRTC (CUDA C -> sm_90a cubin, as cupy would compile it, but with the version
recorded)."""
import ctypes
import datetime
import hashlib
import json
import os
import subprocess
import sys
import traceback
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import targets_cases  # noqa: E402

OUT = os.environ.get("OUT", "/tmp/out")
MODE = sys.argv[1] if len(sys.argv) > 1 else "time"
C = targets_cases.modules()[4]
WANT = [n for n, *_ in C.WGMMA_TMA_CASES]


def include_dirs():
    """Folders holding cuda_fp16.h for NVRTC: cuda.pathfinder's cudart headers, $CUDA_HOME,
    /usr/local/cuda, NVIDIA's wheels (nvidia/*/include)."""
    import glob
    import site
    dirs = []
    try:
        from cuda import pathfinder
        for lib in ("cudart", "cccl"):
            hit = pathfinder.locate_nvidia_header_directory(lib)
            if hit is not None:
                dirs.append(hit.abs_path)
    except Exception:  # noqa: BLE001 -- an older pathfinder: the folders below
        pass
    dirs += [os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include"), "/usr/local/cuda/include"]
    for sp in site.getsitepackages():
        dirs += sorted(glob.glob(os.path.join(sp, "nvidia", "*", "include")))
    out = []
    for d in dirs:
        if os.path.isdir(d) and d not in out:
            out.append(d)
    fp16 = [d for d in out if os.path.exists(os.path.join(d, "cuda_fp16.h"))]
    return fp16[:1] + [d for d in out if d not in fp16[:1]]


def nvrtc_cubin(src, name, arch):
    """(cubin bytes, NVRTC version) of CUDA C ``src`` for ``arch`` ("sm_90a")."""
    from cuda.bindings import nvrtc
    _, major, minor = nvrtc.nvrtcVersion()
    err, prog = nvrtc.nvrtcCreateProgram(src.encode(), f"{name}.cu".encode(), 0, [], [])
    try:
        opts = [f"-arch={arch}".encode(), b"-std=c++17"] + [f"-I{d}".encode() for d in include_dirs()]
        err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _, n = nvrtc.nvrtcGetProgramLogSize(prog)
        log = bytearray(n)
        nvrtc.nvrtcGetProgramLog(prog, log)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"NVRTC: {bytes(log).decode(errors='replace')}")
        _, n = nvrtc.nvrtcGetCUBINSize(prog)
        cubin = bytearray(n)
        nvrtc.nvrtcGetCUBIN(prog, cubin)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return bytes(cubin), f"{major}.{minor}"


def _ck(res):
    err, *rest = res if isinstance(res, tuple) else (res,)
    if int(err) != 0:
        raise RuntimeError(f"CUDA driver error {err}")
    return rest[0] if len(rest) == 1 else rest


def param_block(args, address_of):
    """The kernel-parameter pointer array cuLaunchKernel takes: one void* a parameter, each
    pointing at the parameter's bytes (a tensor map's 128 bytes, a device pointer's 8, an
    int's 4).  ``address_of(arg)`` gives a tensor map's or a tensor's address; returns (array,
    the ctypes objects it points into, which must outlive the launch)."""
    keep = []
    for a in args:
        if isinstance(a, np.integer):
            keep.append(ctypes.c_int32(int(a)))
        elif isinstance(a, TensorMap):
            keep.append(a)                       # its storage: a.address (64-byte aligned, 128 bytes)
        else:
            keep.append(ctypes.c_uint64(address_of(a)))
    arr = (ctypes.c_void_p * len(keep))(*[k.address if isinstance(k, TensorMap) else ctypes.addressof(k) for k in keep])
    return arr, keep


class TensorMap:
    """A tiled tensor map's arguments (kernels.tiled_map_args) and, on the card, the encoded
    CUtensorMap (cuda-bindings object; ``address``: its 128 bytes)."""

    def __init__(self, tensor, shape, itemsize, box, swizzle, ptr=None):
        self.tensor, self.args = tensor, C.tiled_map_args(shape, itemsize, box, swizzle)
        self.cu = None
        if ptr is not None:
            from cuda.bindings import driver as cu
            a = self.args
            self.cu = _ck(cu.cuTensorMapEncodeTiled(
                cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16, len(shape), ptr,
                [cu.cuuint64_t(x) for x in a["globalDim"]], [cu.cuuint64_t(x) for x in a["globalStrides"]],
                [cu.cuuint32_t(x) for x in a["boxDim"]], [cu.cuuint32_t(x) for x in a["elementStrides"]],
                cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE, cu.CUtensorMapSwizzle(a["swizzle"]),
                cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
                cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE))

    @property
    def address(self):
        return self.cu.getPtr()


class Driver:
    """targets_cases' backend for this script on the card: torch memory, the driver API."""

    def __init__(self):
        import torch
        self.torch = torch
        torch.cuda.init()
        torch.zeros(1, device="cuda")                # the primary context current on this thread
        self.modules, self.nvrtc = {}, None

    def array(self, a):
        return self.torch.from_numpy(np.ascontiguousarray(a)).cuda()

    def full(self, shape, dtype, value):
        return self.torch.full(tuple(shape), value, dtype=getattr(self.torch, np.dtype(dtype).name), device="cuda")

    def tensor_map(self, x, box, swizzle):
        return TensorMap(x, tuple(x.shape), x.element_size(), box, swizzle, ptr=x.data_ptr())

    def cuda_c(self, src, name, grid, block, args, arch):
        from cuda.bindings import driver as cu
        key = (src, name, arch)
        if key not in self.modules:
            cubin, self.nvrtc = nvrtc_cubin(src, name, arch)
            mod = _ck(cu.cuModuleLoadData(cubin))
            f = _ck(cu.cuModuleGetFunction(mod, name.encode()))
            regs = _ck(cu.cuFuncGetAttribute(cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, f))
            self.modules[key] = (mod, f, regs)
        _, f, regs = self.modules[key]
        params, keep = param_block(args, lambda t: t.data_ptr())
        gx, gy = grid

        def launch():
            stream = self.torch.cuda.current_stream().cuda_stream
            _ck(cu.cuLaunchKernel(f, gx, gy, 1, block, 1, 1, 0, stream, ctypes.addressof(params), 0))
            return types.SimpleNamespace(n_regs=regs, keep=keep)
        return launch


def check():
    """Here, without a GPU: the map arguments against simgpu.tensor_map's, NVRTC, the parameter block."""
    import simgpu
    from simgpu.ptx.ops_tma import HOST_TO_PTX_TYPE, encode_tiled
    out = {}
    for name, M, N, K in C.WGMMA_TMA_CASES:
        a, bt = C.inputs(M, N, K)
        for x in (a, bt):
            ref = simgpu.tensor_map(x, (64, 64), swizzle=128).encode(0x7f0000000000)
            t = TensorMap(x, x.shape, x.itemsize, (64, 64), 128).args
            mine = encode_tiled(0x7f0000000000, HOST_TO_PTX_TYPE[6], t["globalDim"], t["globalStrides"],
                                t["boxDim"], t["elementStrides"], swizzle=t["swizzle"])
            assert bytes(mine) == bytes(ref), (name, t)
        out[name] = TensorMap(a, a.shape, 2, (64, 64), 128).args
    cubin, ver = nvrtc_cubin(C.WGMMA_TMA_CU, "wgmma_tma_gemm", "sm_90a")
    assert cubin[:4] == b"\x7fELF" and b"wgmma_tma_gemm" in cubin
    tm = TensorMap(a, a.shape, 2, (64, 64), 128)
    tm.cu = types.SimpleNamespace(getPtr=lambda: 0x1000)          # stand-in for the encoded map
    params, keep = param_block((tm, tm, np.zeros(1), np.int32(M), np.int32(N), np.int32(K)), lambda t: 0xdead0000)
    assert params[0] == 0x1000 and ctypes.c_uint64.from_address(params[2]).value == 0xdead0000
    assert [ctypes.c_int32.from_address(params[i]).value for i in (3, 4, 5)] == [M, N, K]
    print(json.dumps({"tensor_map_args": out, "nvrtc": ver, "cubin_bytes": len(cubin)}, indent=1))
    print("check: ok")


def main():
    if MODE == "check":
        return check()
    import torch
    sys.path.insert(0, os.path.dirname(HERE))
    from targets_device import cupti_us
    os.makedirs(OUT, exist_ok=True)
    B = Driver()
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "mode": MODE,
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "cuda": torch.version.cuda, "cases": {}}
    try:
        import cuda.bindings
        res["cuda_bindings"] = cuda.bindings.__version__
        res["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit",
                                            "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except Exception as e:  # noqa: BLE001
        res["nvidia_smi"] = str(e)
    for name, make in targets_cases.cases(B):
        if name not in WANT:
            continue
        r = res["cases"][name] = {}
        try:
            fn, outs = make()
            ck = fn()                                   # ncu mode: the one profiled launch
            torch.cuda.synchronize()
            r["n_regs"] = ck.n_regs
            for i, o in enumerate(outs):
                r[f"out{i}_sha256"] = hashlib.sha256(np.ascontiguousarray(o.cpu().numpy()).tobytes()).hexdigest()
            if MODE == "time":
                from triton.testing import do_bench
                r["dobench_median_us"] = do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3
                r["cupti_us"] = cupti_us(fn)
        except Exception:  # noqa: BLE001
            r["error"] = traceback.format_exc()
        print("CASE", name, {k: v for k, v in r.items() if "sha" not in k}, flush=True)
    res["nvrtc"] = B.nvrtc
    json.dump(res, open(os.path.join(OUT, f"wgmma_tma_card_{MODE}.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
