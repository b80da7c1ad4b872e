"""CUDA C's front door (issue 27 item 2): simgpu.cuda_source(src, name, arch=...) compiled by
NVRTC, launched as k[grid, block, stream, shared_bytes](*args) through launch()'s steps."""
import numpy as np
import pytest

import simgpu
from simgpu.errors import ArgumentError, LaunchError, SimGPUError
from simgpu.runtime.cuda_source import prototype
from simgpu.sass.toolchain import compiled_path_available

pytestmark = pytest.mark.skipif(not compiled_path_available()[0], reason="needs NVRTC and ptxas (NVIDIA's wheels)")

SRC = r"""
// y = a x + y
__global__ void saxpy(int n, float a, const float* __restrict__ x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void rowsum(const double* m, double* out, int rows, int cols)
{
    extern __shared__ double part[];
    int r = blockIdx.x;
    double s = 0;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += m[r * cols + c];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[r] = part[0];
}

__global__ void fill(unsigned char *flags, unsigned long long n, short v, long long *out)
{
    unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { flags[i] = (unsigned char)(i & 1); out[i] = (long long)v * (long long)i; }
}
"""


def test_saxpy_exact_without_contraction():
    k = simgpu.cuda_source(SRC, "saxpy", options=["-fmad=false"])
    n = 1000
    rng = np.random.default_rng(0)
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    y0 = y.copy()
    rep = k[(n + 255) // 256, 256](n, 2.5, x, y)
    np.testing.assert_array_equal(y, np.float32(2.5) * x + y0)
    assert rep.extras["ptx"]["entry"] == "_Z5saxpyifPKfPf"          # C++ mangling, NVRTC's lowered name
    assert rep.metrics["smsp__inst_executed.sum"] > 0
    assert rep.metrics["dram__bytes_read.sum"] >= 2 * n * 4
    assert any("y[i] = a * x[i] + y[i]" in t for t in rep.source.values())


def test_saxpy_contracted_is_fma():
    k = simgpu.cuda_source(SRC, "saxpy")
    n = 512
    rng = np.random.default_rng(1)
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    y0 = y.copy()
    rep = k[2, 256](n, np.float32(1.1), x, y)
    assert "fma.rn.f32" in rep.extras["ptx"]["compiled"].ptx
    fma = (np.float64(np.float32(1.1)) * x.astype(np.float64) + y0).astype(np.float32)   # a*x exact in f64
    np.testing.assert_array_equal(y, fma)


def test_dynamic_shared_memory_and_extern_c():
    k = simgpu.cuda_source(SRC, "rowsum")
    m = np.random.default_rng(2).random((7, 300))
    out = np.zeros(7)
    rep = k[7, 128, 0, 128 * 8](m, out, 7, 300)
    np.testing.assert_allclose(out, m.sum(1), rtol=1e-13)
    assert rep.extras["ptx"]["entry"] == "rowsum"
    assert rep.metrics["launch__shared_mem_per_block_dynamic"] == 1024


def test_integer_types_from_the_prototype():
    k = simgpu.cuda_source(SRC, "fill")
    assert [(p.name, p.kind, p.ctype) for p in k.params] == [
        ("flags", "pointer", "u8"), ("n", "scalar", "u64"), ("v", "scalar", "i16"), ("out", "pointer", "i64")]
    flags, out = np.zeros(100, np.uint8), np.zeros(100, np.int64)
    k[1, 128](flags, 100, -3, out)
    np.testing.assert_array_equal(flags, np.arange(100) & 1)
    np.testing.assert_array_equal(out, -3 * np.arange(100))


def test_sm_90a():
    k = simgpu.cuda_source(SRC, "saxpy", arch="sm_90a")
    x, y = np.ones(64, np.float32), np.ones(64, np.float32)
    rep = k[1, 64](64, 2.0, x, y)
    assert ".target sm_90a" in rep.extras["ptx"]["compiled"].ptx
    np.testing.assert_array_equal(y, np.full(64, 3, np.float32))
    with pytest.raises(LaunchError, match="compiled for sm_90a"):
        k[1, 64](64, 2.0, x, y, gpu="A100")


def test_clear_errors():
    k = simgpu.cuda_source(SRC, "saxpy")
    x, y = np.ones(8, np.float32), np.ones(8, np.float32)
    with pytest.raises(ArgumentError, match=r"takes 4 argument\(s\) \(n, a, x, y\), got 3"):
        k[1, 32](8, 2.0, x)
    with pytest.raises(ArgumentError, match="points to fp32"):
        k[1, 32](8, 2.0, x.astype(np.float64), y)
    with pytest.raises(ArgumentError, match="is a pointer"):
        k[1, 32](8, 2.0, 5, y)
    with pytest.raises(ArgumentError, match="is a scalar"):
        k[1, 32](x, 2.0, x, y)
    with pytest.raises(ArgumentError, match="does not fit"):
        k[1, 32](1 << 40, 2.0, x, y)
    with pytest.raises(SimGPUError, match="no __global__ kernel named 'nope'"):
        simgpu.cuda_source(SRC, "nope")
    with pytest.raises(SimGPUError, match="cannot pass by value"):
        prototype("struct P { int a; }; __global__ void k(P p) {}", "k")
    with pytest.raises(SimGPUError, match="NVRTC could not compile"):
        simgpu.cuda_source("__global__ void bad(float* a) { a[0] = undefined_name; }", "bad")[1, 32](x)
    with pytest.raises(LaunchError, match="kernel\\[grid, block\\]"):
        k[1]


def test_nvrtc_leaves_cpythons_cached_bytes_alone():
    """NVRTC writes its log and PTX into the buffer it is given; an empty log is one NUL byte.
    Handed ``b" " * 1`` (CPython's cached one-byte object), it turned every later ``b" "``, and
    so every printed separator, into NUL."""
    from simgpu.sass.toolchain import nvrtc_kernel_ptx, nvrtc_ptx
    src = 'extern "C" __global__ void k(float *x) { x[threadIdx.x] = 1.0f; }'
    nvrtc_kernel_ptx(src, "k", "compute_90")
    nvrtc_ptx(src, "k", (9, 0))
    assert " ".encode("latin-1").hex() == "20" and (b" " * 1).hex() == "20"
