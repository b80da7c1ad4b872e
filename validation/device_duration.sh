#!/bin/bash
# Kernel durations under Nsight Compute with gpu__time_duration collected ALONE (one replay
# pass, no other counters), for every suite case (and the hot-atomic microbenchmarks).
# Runs on the GPU machine, from the repository root, through the device tool's `run`:
#   bash validation/device_duration.sh [BUDGET_SECONDS]
# -> $OUT/duration.tgz (ncu_<module>.csv, profile_order_<module>.json, logs), $OUT/env.txt
# Why: the 92-metric profile (h200_ncu.json) times some kernels in a replay pass that also
# collects L2 counters; for hot global atomics that pass runs ~2x the un-profiled time.
set -u
BUDGET="${1:-420}"
OUT=${OUT:-/tmp/out}
D=/tmp/duration
rm -rf $D; mkdir -p $D
T0=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
export PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv; $NCU --version | tail -1;
  python3 -c "import numba, numpy; print('numba', numba.__version__, 'numpy', numpy.__version__)"; } > $OUT/env.txt 2>&1
METRICS=gpu__time_duration.sum,sm__cycles_elapsed.avg
for m in copies matmul transpose reduction histogram compute bank_conflicts elementwise; do
  l=$(left); [ $l -lt 20 ] && { echo "out of time before $m"; break; }
  timeout $((l - 10)) $NCU --clock-control none --metrics $METRICS -f -o $D/ncu_$m \
    python3 validation/run_suite.py --out $D --mode profile --modules $m --no-sass > $D/ncu_$m.log 2>&1
  tail -2 $D/ncu_$m.log
  [ -f $D/ncu_$m.ncu-rep ] && $NCU -i $D/ncu_$m.ncu-rep --csv --page raw --print-units base > $D/ncu_$m.csv 2>/dev/null
  rm -f $D/ncu_$m.ncu-rep
  echo "[$(( $(date +%s) - T0 ))s] $m done"
done
l=$(left)
if [ $l -gt 30 ]; then
  timeout $((l - 10)) $NCU --clock-control none --kernel-name-base mangled --kernel-name 'regex:.*mb_.*' --metrics $METRICS -f \
    -o $D/ncu_micro python3 validation/microbench/run_micro.py --out $D/micro --mode profile --only '^atom2_hist' > $D/ncu_micro.log 2>&1
  [ -f $D/ncu_micro.ncu-rep ] && $NCU -i $D/ncu_micro.ncu-rep --csv --page raw --print-units base > $D/ncu_micro.csv 2>/dev/null
  rm -f $D/ncu_micro.ncu-rep
fi
rm -rf $D/sass $D/micro/sass
(cd /tmp && tar czf $OUT/duration.tgz duration)
ls -la $D | head -40
