#!/bin/bash
# On the card, one device call, from the repository root of a checkout that has this tree:
#   OUT=<dir> bash validation/tensor_cores/targets_device.sh
# Run on an H100 on 2026-12-07 (targets/h100/; outputs.npz, 30 MB, did not come back: the JSONs
# hold every output's sha256).
# 1. every issue-27 case (targets_cases.py) with do_bench + CUPTI + registers + outputs (targets_device.py time);
# 2. the same launches, one each, under Nsight Compute (--clock-control none: the card's own
#    clock, as do_bench sees it) for smsp__inst_executed.sum, gpu__time_duration.sum, registers
#    and the SM clock.  Then, here: targets_sim.py (simgpu's side) and targets.py.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cd "$(dirname "$0")"
nvidia-smi > "$OUT/smi.txt" 2>&1
python3 -c "import triton, torch; print(triton.__version__, torch.__version__)" > "$OUT/versions.txt" 2>&1
python3 -c "import cupy; print('cupy', cupy.__version__)" >> "$OUT/versions.txt" 2>&1
ncu --version >> "$OUT/versions.txt" 2>&1
OUT=$OUT PYTHONUNBUFFERED=1 timeout 300 python3 targets_device.py time > "$OUT/time.log" 2>&1
echo "time: rc $?" >> "$OUT/versions.txt"
OUT=$OUT PYTHONUNBUFFERED=1 timeout 280 ncu --csv --page raw --clock-control none \
  --kernel-name regex:'add_kernel|softmax_kernel|matmul_kernel|_attn_fwd|matmul_tma|mma_sync_gemm' \
  --metrics smsp__inst_executed.sum,gpu__time_duration.sum,launch__registers_per_thread,sm__cycles_elapsed.avg.per_second,launch__grid_size \
  python3 targets_device.py ncu > "$OUT/ncu.csv" 2> "$OUT/ncu.log"
echo "ncu: rc $?" >> "$OUT/versions.txt"
