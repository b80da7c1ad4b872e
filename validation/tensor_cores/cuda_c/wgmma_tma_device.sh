#!/bin/bash
# On the card, one device call (< 3 min), from the repository root:
#   OUT=<dir> bash validation/tensor_cores/cuda_c/wgmma_tma_device.sh
# The CUDA C wgmma + TMA GEMM (kernels.WGMMA_TMA_CASES: 256^3, 512x1024x512, 1024^3):
# 1. do_bench + CUPTI + registers + sha256 of C (wgmma_tma_device.py time);
# 2. one launch each under Nsight Compute: smsp__inst_executed.sum, gpu__time_duration.sum,
#    registers, the SM clock (--clock-control none, as targets_device.sh was run on 2026-12-07).
# Writes (5 files): versions.txt, wgmma_tma_card_time.json, time.log, wgmma_tma_card_ncu.json, ncu.csv (+ ncu.log)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
cd "$(dirname "$0")"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  python3 -c "import triton, torch, cuda.bindings; print('triton', triton.__version__, 'torch', torch.__version__, 'cuda-bindings', cuda.bindings.__version__)"
  ncu --version | tail -1; } > "$OUT/versions.txt" 2>&1
OUT=$OUT PYTHONUNBUFFERED=1 timeout 100 python3 wgmma_tma_device.py time > "$OUT/time.log" 2>&1
echo "time: rc $?" >> "$OUT/versions.txt"
OUT=$OUT PYTHONUNBUFFERED=1 timeout 60 ncu --csv --page raw --clock-control none --kernel-name wgmma_tma_gemm \
  --metrics smsp__inst_executed.sum,gpu__time_duration.sum,launch__registers_per_thread,sm__cycles_elapsed.avg.per_second,launch__grid_size \
  python3 wgmma_tma_device.py ncu > "$OUT/ncu.csv" 2> "$OUT/ncu.log"
echo "ncu: rc $?" >> "$OUT/versions.txt"
