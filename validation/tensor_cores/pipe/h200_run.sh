#!/usr/bin/env bash
# On the H200 (device tool): the tensor-pipe microbenchmarks and the matmul timings.
set -u
cd "$(dirname "$0")"
python3 gen.py > /tmp/bench.cu && nvcc -gencode arch=compute_90a,code=sm_90a -O3 -o /tmp/bench /tmp/bench.cu && /tmp/bench > "$OUT/h200_pipe.json"
cat "$OUT/h200_pipe.json"
nvcc --version | tail -2 > "$OUT/versions.txt"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >> "$OUT/versions.txt"
[ "${SKIP_MATMUL:-0}" = 1 ] || PYTHONUNBUFFERED=1 python3 matmul_times.py
