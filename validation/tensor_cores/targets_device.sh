#!/bin/bash
# On the card (NOT RUN YET; no device time was left in session 31).  One device call, from the
# repository root of a checkout that has this tree:
#   OUT=<dir> bash validation/tensor_cores/targets_device.sh
# 1. every issue-27 kernel once more with do_bench + CUPTI + registers + outputs (targets_device.py time);
# 2. the same launches, one each, under Nsight Compute for smsp__inst_executed.sum (never measured
#    for these kernels), gpu__time_duration.sum, registers and the SM clock under the profiler.
# Expected: a few minutes (the 4096^3 matmul and FA N=1024 are the largest; ncu replays each
# kernel for its metrics).  Then, here: the simgpu side of each case (the suites' compare.py
# scripts; smsp__inst_executed.sum from the same launches) goes into targets.py.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cd "$(dirname "$0")"
nvidia-smi > "$OUT/smi.txt" 2>&1
python3 -c "import triton, torch; print(triton.__version__, torch.__version__)" > "$OUT/versions.txt" 2>&1
python3 -c "import cupy; print('cupy', cupy.__version__)" >> "$OUT/versions.txt" 2>&1
ncu --version >> "$OUT/versions.txt" 2>&1
OUT=$OUT PYTHONUNBUFFERED=1 timeout 300 python3 targets_device.py time > "$OUT/time.log" 2>&1
echo "time: rc $?" >> "$OUT/versions.txt"
OUT=$OUT PYTHONUNBUFFERED=1 timeout 280 ncu --csv --page raw \
  --kernel-name regex:'add_kernel|softmax_kernel|matmul_kernel|_attn_fwd|matmul_tma|mma_sync_gemm' \
  --metrics smsp__inst_executed.sum,gpu__time_duration.sum,launch__registers_per_thread,sm__cycles_elapsed.avg.per_second,launch__grid_size \
  python3 targets_device.py ncu > "$OUT/ncu.csv" 2> "$OUT/ncu.log"
echo "ncu: rc $?" >> "$OUT/versions.txt"
