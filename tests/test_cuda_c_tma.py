"""A CUDA C kernel with a host tensor map (``const __grid_constant__ CUtensorMap``) and TMA
(``cp.async.bulk.tensor`` signalling an mbarrier) through simgpu.cuda_source: the tile each
block copies is the array's, out-of-bounds elements are the map's fill, and the default light
hazard check does not take the copy's landing for a warp's write (the mbarrier orders it)."""
import warnings

import numpy as np
import pytest

import simgpu
from simgpu.errors import ArgumentError, SimGPUWarning
from simgpu.sass.toolchain import compiled_path_available

pytestmark = pytest.mark.skipif(not compiled_path_available()[0], reason="needs NVRTC and ptxas (NVIDIA's wheels)")

SRC = r'''
struct alignas(64) CUtensorMap { unsigned long long opaque[16]; };   // cuda.h's, without the header
extern "C" __global__ void tma_scale(const __grid_constant__ CUtensorMap tmap, float* out, int rows, int cols) {
  __shared__ alignas(128) float tile[16 * 16];
  __shared__ alignas(8) unsigned long long bar;
  int t = threadIdx.x;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned s = (unsigned)__cvta_generic_to_shared(tile);
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.proxy.async.shared::cta;");
  }
  __syncthreads();
  if (t == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(16 * 16 * 4));
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        :: "r"(s), "l"(&tmap), "r"(blockIdx.x * 16), "r"(blockIdx.y * 16), "r"(b) : "memory");
  }
  asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n @!p bra W;\n}"
      :: "r"(b) : "memory");
  for (int i = t; i < 256; i += blockDim.x) {
    int r = blockIdx.y * 16 + i / 16, c = blockIdx.x * 16 + i % 16;
    out[r * cols + c] = tile[i] * 2.0f;      // out is padded to whole tiles
  }
}
'''


def test_tma_tiles_through_a_host_tensor_map():
    a = np.arange(40 * 56, dtype=np.float32).reshape(40, 56)      # not whole 16x16 tiles
    out = np.full((48, 64), -1, np.float32)
    k = simgpu.cuda_source(SRC, "tma_scale", arch="sm_90a")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SimGPUWarning)             # no race reported
        k[(4, 3), 64](simgpu.tensor_map(a, (16, 16)), out, 40, 64)
    want = np.zeros((48, 64), np.float32)                           # the map's zero fill past the edges
    want[:40, :56] = 2 * a
    np.testing.assert_array_equal(out, want)


def test_a_tensor_map_parameter_takes_a_tensor_map():
    k = simgpu.cuda_source(SRC, "tma_scale", arch="sm_90a")
    out = np.zeros((16, 16), np.float32)
    with pytest.raises(ArgumentError, match="CUtensorMap: pass simgpu.tensor_map"):
        k[1, 32](np.zeros((16, 16), np.float32), out, 16, 16)
    with pytest.raises(ArgumentError, match="box of 1 dimension"):
        simgpu.tensor_map(np.zeros((16, 16), np.float32), 16)
    with pytest.raises(ArgumentError, match="swizzle"):
        simgpu.tensor_map(np.zeros((16, 16), np.float32), (16, 16), swizzle=16)
