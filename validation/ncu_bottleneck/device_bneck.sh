#!/bin/bash
# Runs on the GPU machine (device tool `run`), from the repository root:
#   bash validation/ncu_bottleneck/device_bneck.sh BUDGET_SECONDS
# Nsight Compute's per-unit utilisation for the holdout (validation/holdout) and, as time allows,
# the calibration suite (validation/kernels): one launch per case under
#   ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis
#       --section MemoryWorkloadAnalysis
#       --metrics breakdown:sm__throughput...,breakdown:gpu__compute_memory_throughput...,<pipe list>
# The pipe list is filtered against `ncu --query-metrics` first (an unknown metric stops ncu);
# if the full request fails, it falls back to the sections + breakdowns, then the sections alone.
# SUITE_MODULES="" skips the suite; HOLDOUT_CAP caps the holdout's ncu run (seconds, default 150).
# Also sm__inst_executed_pipe_<p>.sum and smsp__inst_executed.sum (instruction counts per pipe).
# Results: $OUT/bneck_raw.tgz (bneck_<tag>.csv: raw page, base units; profile_order_*.json; the
# metric query), $OUT/bneck_holdout.csv, metrics_requested.txt, env.txt, log.txt
set -u
BUDGET=${1:-420}
T0=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
R=/tmp/bneck; mkdir -p $R/csv; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a $OUT/log.txt; }
export PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
{ date -u +%FT%TZ; nvidia-smi; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv;
  echo "== ncu $NCU"; $NCU --version; nvcc --version 2>/dev/null; python3 -c "import numba, numpy, sys; print('python', sys.version); print('numba', numba.__version__); print('numpy', numpy.__version__)";
  python3 -c "import numba_cuda; print('numba-cuda', numba_cuda.__version__)" 2>&1 | tail -1; uname -a; } > $OUT/env.txt 2>&1
timeout 60 $NCU --query-metrics --chip gh100 > $R/query.txt 2>&1
PIPES="alu fma fmaheavy fmalite fp16 fp64 xu lsu uniform adu cbu tensor tensor_op_hmma tensor_op_imma tensor_op_dmma tma shared fp64_dmma"
EXTRA="gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg"
for p in $PIPES; do
  for b in sm__inst_executed_pipe_$p sm__pipe_${p}_cycles_active; do
    grep -qE "^\s*$b\s" $R/query.txt && EXTRA="$EXTRA,$b.avg.pct_of_peak_sustained_active"
  done
  # the instructions each pipe executed (facts for the opcode -> pipe table, not utilisations)
  grep -qE "^\s*sm__inst_executed_pipe_$p\s" $R/query.txt && EXTRA="$EXTRA,sm__inst_executed_pipe_$p.sum"
done
EXTRA="$EXTRA,smsp__inst_executed.sum"
grep -qE "^\s*lts__d_atomic_input_cycles_active\s" $R/query.txt && EXTRA="$EXTRA,lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed"
echo "$EXTRA" | tr ',' '\n' > $OUT/metrics_requested.txt
BD="breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed,breakdown:gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
SEC="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
prof() {   # prof TAG CAP CMD...
  local tag=$1 cap=$2; shift 2
  local t=$(( $(left) - 20 )); [ $t -gt $cap ] && t=$cap
  [ $t -lt 15 ] && { log "SKIP $tag: no time"; return; }
  for how in full bd sec; do
    case $how in full) M="--metrics $BD,$EXTRA";; bd) M="--metrics $BD";; sec) M="";; esac
    log "ncu $tag ($how, timeout ${t}s)"
    rm -f $R/$tag.ncu-rep
    timeout -k 5 $t $NCU --clock-control none $SEC $M -f -o $R/$tag "$@" > $R/${tag}_$how.log 2>&1
    log "  rc=$?"; tail -4 $R/${tag}_$how.log | tee -a $OUT/log.txt
    if [ -f $R/$tag.ncu-rep ] && ! grep -q "==ERROR== .*metric" $R/${tag}_$how.log; then
      $NCU -i $R/$tag.ncu-rep --csv --page raw --print-units base > $R/csv/bneck_$tag.csv 2>>$OUT/log.txt
      log "  $tag: $(wc -l < $R/csv/bneck_$tag.csv) csv lines, how=$how"
      return
    fi
    t=$(( $(left) - 20 )); [ $t -gt $cap ] && t=$cap; [ $t -lt 15 ] && return
  done
}
prof holdout ${HOLDOUT_CAP:-150} python3 validation/holdout/device_run.py profile --out $R/csv --tag holdout
for m in ${SUITE_MODULES-copies matmul transpose reduction histogram compute bank_conflicts elementwise}; do
  prof suite_$m 60 python3 validation/run_suite.py --out $R/csv --mode profile --modules $m
done
cp $R/query.txt $R/csv/ncu_query_metrics.txt
(cd $R/csv && tar czf $OUT/bneck_raw.tgz .)
cp $R/csv/bneck_holdout.csv $OUT/ 2>/dev/null
ls -la $OUT; log done
