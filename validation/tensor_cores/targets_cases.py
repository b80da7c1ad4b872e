"""Issue 27's target cases, once, for both sides: ``targets_device.py`` runs them on the card
(torch + cupy) and ``targets_sim.py`` on simgpu (numpy arrays through simgpu's front doors).

``cases(B)`` -> [(name, make)]; ``make()`` -> (launch, outputs): ``launch()`` runs the kernel once
and returns what the backend's launch returns (Triton's CompiledKernel on the card, a Report on
simgpu); ``outputs`` are the arrays the kernel writes, in a fixed order (their sha256 are compared).
A backend ``B`` supplies:

* ``B.array(a)``: the numpy array ``a`` as the kernel's argument (a device tensor on the card);
* ``B.full(shape, dtype, value)``: a new output array;
* ``B.desc(x, shape, strides, block)``: a host TensorDescriptor over ``x`` viewed as the 2-D
  ``shape``; ``B.desc_from(x, block)``: ``TensorDescriptor.from_tensor(x, block)``;
* ``B.triton(kernel, grid, args, meta)``: a callable that launches a ``@triton.jit`` kernel;
* ``B.cuda_c(src, name, grid, block, args, arch)``: a callable that launches a CUDA C kernel;
* ``B.tensor_map(x, box, swizzle)`` (optional): a host tensor map (cuTensorMapEncodeTiled) of
  ``x``; a backend that has it also runs the CUDA C wgmma + TMA GEMM (cuda_c/wgmma_tma_device.py
  on the card; targets_device.py's backend has none).

Cases: the Triton suites' kernels as stored (../triton, wgmma, flash), the lecture's matmul at
512^3, 1024^3, 1000 x 1500 x 700, 2048^3, 4096^3 and FA-2 N = 1024, not causal and causal
(lecture/kernels.py configs), the CUDA C mma.sync GEMM and the CUDA C wgmma + TMA GEMM
(cuda_c/kernels.py).  Inputs: each
suite's own seeded input functions."""
import importlib.util
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
VAL = os.path.dirname(HERE)


def _mod(name, src, tmp):
    os.makedirs(tmp, exist_ok=True)                       # as the suites import them (PTX .file)
    shutil.copy(src, os.path.join(tmp, "kernels.py"))
    spec = importlib.util.spec_from_file_location(name, os.path.join(tmp, "kernels.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def modules():
    """The suites' kernel modules: (triton, wgmma, flash, lecture, cuda_c)."""
    return (_mod("t_kernels", os.path.join(VAL, "triton", "kernels.py"), "/tmp/simgpu_triton"),
            _mod("w_kernels", os.path.join(HERE, "wgmma", "kernels.py"), "/tmp/simgpu_wgmma"),
            _mod("f_kernels", os.path.join(HERE, "flash", "kernels.py"), "/tmp/simgpu_flash"),
            _mod("l_kernels", os.path.join(HERE, "lecture", "kernels.py"), "/tmp/simgpu_lecture"),
            _mod("c_kernels", os.path.join(HERE, "cuda_c", "kernels.py"), "/tmp/simgpu_cuda_c"))


def cdiv(a, b):
    return -(-a // b)


def cases(B):
    T, W, F, L, C = modules()
    out = []

    for name, kind, size, meta in T.cases():                    # ../triton/h200_run.py's inputs
        def make(kind=kind, size=size, meta=meta):
            rng = np.random.default_rng(1234)
            if kind == "add":
                x, y = B.array(rng.random(size, np.float32)), B.array(rng.random(size, np.float32))
                o = B.full((size,), np.float32, 0.0)
                return B.triton(T.add_kernel, (cdiv(size, meta["BLOCK_SIZE"]),), (x, y, o, size), meta), [o]
            R, Cc = size
            a = rng.standard_normal(size).astype(np.float32)
            o = B.full(size, np.float32, 0.0)
            bs = 1 << (Cc - 1).bit_length()                        # triton.next_power_of_2
            return B.triton(T.softmax_kernel, (min(R, 132 * 4),), (o, B.array(a), Cc, Cc, R, Cc),
                            dict(meta, BLOCK_SIZE=bs)), [o]
        out.append((name, make))

    def mm(M, N, K_, meta, a, b, kern=W.matmul_kernel):
        c = B.full((M, N), np.float16, np.nan)
        grid = (cdiv(M, meta["BLOCK_SIZE_M"]) * cdiv(N, meta["BLOCK_SIZE_N"]),)
        return B.triton(kern, grid, (B.array(a), B.array(b), c, M, N, K_, K_, 1, N, 1, N, 1), meta), [c]
    for name, M, N, K_, meta, fam in W.CASES:
        out.append((name, lambda name=name, M=M, N=N, K_=K_, meta=meta, fam=fam: mm(M, N, K_, meta, *W.inputs(name, M, N, K_, fam))))
    for M, N, K_ in L.TABLE:
        def make(M=M, N=N, K_=K_):
            rng = np.random.default_rng(M * 7 + N * 3 + K_)
            a, b = ((rng.standard_normal(s) * 0.5).astype(np.float16) for s in ((M, K_), (K_, N)))
            return mm(M, N, K_, L.MM_META, a, b, kern=L.matmul_kernel)   # lecture/device_run.py's kernel
        out.append((f"lecture_{M}x{N}x{K_}", make))

    def fa(Z, H, N, D, causal, host, BM, BN, w, s, q, k, v):
        tq, tk, tv = B.array(q), B.array(k), B.array(v)
        to = B.full(q.shape, np.float16, np.nan)
        tM = B.full((Z, H, N), np.float32, np.nan)
        y = Z * H * N
        descs = ([B.desc(x, [y, D], [D, 1], [BM if i in (0, 3) else BN, D])
                  for i, x in enumerate((tq, tk, tv, to))] if host else [tq, tk, tv, to])
        return B.triton(F._attn_fwd, (cdiv(N, BM), Z * H, 1), (0.5, tM, Z, H, *descs, N),
                        dict(HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN, FP8_OUTPUT=False, STAGE=3 if causal else 1,
                             warp_specialize=False, IS_HOPPER=True, num_warps=w, num_stages=s)), [to, tM]
    for name, Z, H, N, D, causal, host, BM, BN, w, s in F.FA_CASES:
        out.append((name, lambda a=(Z, H, N, D, causal, host, BM, BN, w, s), name=name: fa(*a, *F.fa_inputs(name, *a[:4]))))
    for causal in (False, True):
        def make(causal=causal):
            Z, H, N, D = L.FA_SIZES[0]
            rng = np.random.default_rng(0)
            q, k, v = ((rng.standard_normal((Z, H, N, D)) * 0.5).astype(np.float16) for _ in range(3))
            return fa(Z, H, N, D, causal, True, L.FA_META["BLOCK_M"], L.FA_META["BLOCK_N"], L.FA_META["num_warps"],
                      L.FA_META["num_stages"], q, k, v)
        out.append((f"fa_lecture_1024{'_causal' if causal else ''}", make))
    for name, M, N, K_, BM, BN, BK, w, s in F.MM_CASES:
        def make(name=name, M=M, N=N, K_=K_, BM=BM, BN=BN, BK=BK, w=w, s=s):
            a, b = F.mm_inputs(name, M, N, K_)
            tc = B.full((M, N), np.float16, np.nan)
            ds = [B.desc_from(t, blk) for t, blk in ((B.array(a), [BM, BK]), (B.array(b), [BK, BN]), (tc, [BM, BN]))]
            return B.triton(F.matmul_tma, (cdiv(M, BM), cdiv(N, BN)), (*ds, M, N, K_),
                            dict(BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, num_warps=w, num_stages=s)), [tc]
        out.append((name, make))
    for name, M, N, K_ in C.MMA_SYNC_CASES:
        def make(M=M, N=N, K_=K_):
            a, bt = C.inputs(M, N, K_)
            cc = B.full((M, N), np.float32, np.nan)
            return B.cuda_c(C.MMA_SYNC_CU, "mma_sync_gemm", C.grid(M, N), 128,
                            (B.array(a), B.array(bt), cc, np.int32(M), np.int32(N), np.int32(K_)), "sm_90"), [cc]
        out.append((name, make))
    if hasattr(B, "tensor_map"):
        for name, M, N, K_ in C.WGMMA_TMA_CASES:
            def make(M=M, N=N, K_=K_):
                a, bt = C.inputs(M, N, K_)
                ta, tb = B.array(a), B.array(bt)
                cc = B.full((M, N), np.float32, np.nan)
                maps = (B.tensor_map(ta, (64, 64), 128), B.tensor_map(tb, (64, 64), 128))
                return B.cuda_c(C.WGMMA_TMA_CU, "wgmma_tma_gemm", C.wgmma_grid(M, N), 128,
                                (*maps, cc, np.int32(M), np.int32(N), np.int32(K_)), "sm_90a"), [cc]
            out.append((name, make))
    return out
