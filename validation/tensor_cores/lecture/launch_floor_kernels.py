"""The near-empty Triton kernels of launch_floor_device.py (do_bench's floor for launches with
tensor descriptors), shared with derive_floor.py, which simulates them: grid 1, 4 warps; one TMA
load of a 16 x 16 fp16 tile per descriptor, one store of 16 fp16.  No torch here."""
import triton
import triton.language as tl


@triton.jit
def empty_ptr(x_ptr):
    pass


@triton.jit
def host_desc_1(o_ptr, d0):
    tl.store(o_ptr + tl.arange(0, 16), tl.sum(d0.load([0, 0]), 0))


@triton.jit
def host_desc_2(o_ptr, d0, d1):
    tl.store(o_ptr + tl.arange(0, 16), tl.sum(d0.load([0, 0]) + d1.load([0, 0]), 0))


@triton.jit
def host_desc_4(o_ptr, d0, d1, d2, d3):
    tl.store(o_ptr + tl.arange(0, 16), tl.sum(d0.load([0, 0]) + d1.load([0, 0]) + d2.load([0, 0]) + d3.load([0, 0]), 0))


@triton.jit
def dev_desc_1(o_ptr, a_ptr):
    d0 = tl.make_tensor_descriptor(a_ptr, [64, 64], [64, 1], [16, 16])
    tl.store(o_ptr + tl.arange(0, 16), tl.sum(d0.load([0, 0]), 0))


@triton.jit
def dev_desc_2(o_ptr, a_ptr, b_ptr):
    d0 = tl.make_tensor_descriptor(a_ptr, [64, 64], [64, 1], [16, 16])
    d1 = tl.make_tensor_descriptor(b_ptr, [64, 64], [64, 1], [16, 16])
    tl.store(o_ptr + tl.arange(0, 16), tl.sum(d0.load([0, 0]) + d1.load([0, 0]), 0))
