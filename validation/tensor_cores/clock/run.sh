#!/usr/bin/env bash
# On the card (device tool), from this folder: the SM clock and the L2 -> shared rate (gen.py).
set -u
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.applications.graphics,power.limit,temperature.gpu --format=csv > "$OUT/smi.txt" 2>&1
Q=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$Q --format=csv,noheader -lms 50 > "$OUT/smi_trace.csv" 2>&1 &
SMI=$!
python3 gen.py > /tmp/clock.cu && "$NVCC" -gencode arch=compute_90a,code=sm_90a -O3 -std=c++17 -o /tmp/clock /tmp/clock.cu && /tmp/clock > "$OUT/clock.json"
echo "rc $?"
kill $SMI
"$NVCC" --version | tail -2 >> "$OUT/smi.txt"
nvidia-smi -q -d PERFORMANCE >> "$OUT/smi.txt" 2>&1
cat "$OUT/clock.json"
head -3 "$OUT/smi_trace.csv"; wc -l "$OUT/smi_trace.csv"
