"""The lecture's kernels, as both sides run them (imported from /tmp/simgpu_lecture/kernels.py on
the card and here, as the other tensor-core validations do):

* ``matmul_kernel``: Triton's tutorial fp16 matmul (03-matrix-multiplication; the same source as
  ../wgmma/kernels.py), for the mystery plot's square sweep;
* ``bmm_kernel``: the same kernel with a batch axis (program_id(1) offsets A, B and C by their
  batch strides): the math path's Q K^T and P V, one launch for all heads;
* ``softmax_kernel``: Triton's tutorial fused softmax (02-fused-softmax; as ../../triton/kernels.py),
  one program per row here;
* ``empty_kernel`` / ``store_kernel``: do_bench's floor (a launch that does nothing, and one
  that stores one word per program).

FlashAttention-2 is ../flash/kernels.py's ``_attn_fwd``."""
import triton
import triton.language as tl

MM_META = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, num_warps=8, num_stages=3)
QK_META = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, num_warps=4, num_stages=3)
PV_META = dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=64, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, num_warps=4, num_stages=3)
FA_META = dict(BLOCK_M=128, BLOCK_N=64, num_warps=4, num_stages=3)
# the square sweep (multiples of 128: one compiled specialisation) and unaligned sizes
SQUARE = list(range(256, 4096 + 1, 128)) + [1000, 2047, 2049, 3000]
TABLE = [(512, 512, 512), (1024, 1024, 1024), (1000, 1500, 700), (2048, 2048, 2048), (4096, 4096, 4096)]
FA_SIZES = [(1, 16, 1024, 64), (1, 16, 2048, 64), (1, 16, 4096, 64)]
FLOOR_GRIDS = [1, 132, 1056, 8448]


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                  BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_az, stride_am, stride_ak, stride_bz, stride_bk, stride_bn,
               stride_cz, stride_cm, stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
               BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    z = tl.program_id(axis=1)
    a_ptr += z * stride_az
    b_ptr += z * stride_bz
    c_ptr += z * stride_cz
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


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


@triton.jit
def empty_kernel(x_ptr):
    pass


@triton.jit
def store_kernel(x_ptr):
    pid = tl.program_id(0)
    tl.store(x_ptr + pid, pid)


def math_path_launches(Z, H, N, D):
    """The math path's three launches for Q, K, V of shape (Z*H, N, D) (Q pre-scaled by
    sm_scale): [(kernel, grid, strides-maker, meta)], as (name, kernel, grid, meta, args(q, k, v, s, p, o))."""
    B = Z * H
    qk_grid = (triton.cdiv(N, QK_META["BLOCK_SIZE_M"]) * triton.cdiv(N, QK_META["BLOCK_SIZE_N"]), B)
    pv_grid = (triton.cdiv(N, PV_META["BLOCK_SIZE_M"]) * triton.cdiv(D, PV_META["BLOCK_SIZE_N"]), B)
    bs = triton.next_power_of_2(N)
    sm_meta = dict(BLOCK_SIZE=bs, num_stages=1, num_warps=4 if bs <= 1024 else 8)
    return [
        # S = Q K^T: B = K^T through its strides (k: (B, N, D) -> element (d, n) at n*D + d)
        ("qk", bmm_kernel, qk_grid, QK_META,
         lambda q, k, v, s, p, o: (q, k, s, N, N, D, N * D, D, 1, N * D, 1, D, N * N, N, 1)),
        ("softmax", softmax_kernel, (B * N,), sm_meta,
         lambda q, k, v, s, p, o: (p, s, N, N, B * N, N)),
        ("pv", bmm_kernel, pv_grid, PV_META,
         lambda q, k, v, s, p, o: (p, v, o, N, D, N, N * N, N, 1, N * D, D, 1, N * D, D, 1)),
    ]
