"""The kernels of validation/triton: Triton's tutorial vector add and fused softmax, and a
small autotuned kernel.  Both sides (the H200 and simgpu) import this file from the same path
(/tmp/simgpu_triton/kernels.py), because Triton's PTX names its source file."""
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float('inf'))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 512}, num_warps=4),
                          triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 4096}, num_warps=8)],
                 key=["n"])
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3.0, mask=m)


# (name, kernel, kind, size, meta): the cases both sides run
def cases():
    return [
        ("add_4096", "add", 4096, {"BLOCK_SIZE": 1024}),
        ("add_98432", "add", 98432, {"BLOCK_SIZE": 1024}),
        ("add_3000", "add", 3000, {"BLOCK_SIZE": 1024}),
        ("add_1", "add", 1, {"BLOCK_SIZE": 1024}),
        ("softmax_1823x781_s1", "softmax", (1823, 781), {"num_stages": 1, "num_warps": 8}),
        ("softmax_64x1024_s1", "softmax", (64, 1024), {"num_stages": 1, "num_warps": 8}),
        ("softmax_1823x781_s2", "softmax", (1823, 781), {"num_stages": 2, "num_warps": 8}),
    ]
