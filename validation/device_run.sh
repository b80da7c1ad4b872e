#!/bin/bash
# Runs on the GPU machine (through the device tool's `run`), from the repository root:
#   bash validation/device_run.sh "STAGES" BUDGET_SECONDS
# STAGES (space separated, in order): env metrics suite_time micro_time suite_profile micro_profile
# Everything goes to /tmp/res; at exit it is packed into $OUT/{main,sass,reps}.tgz plus driver.log.
# Each stage is bounded with `timeout` so that the packing always happens inside the budget.
set -u
STAGES="${1:-env metrics suite_time micro_time}"
BUDGET="${2:-540}"
ONLY="${3:-}"            # optional regex passed to the suite runner (--only)
MICRO_ONLY="${MICRO_ONLY:-}"   # optional regex for the microbenchmark runner (--only)
MD=${MICRO_DIR:-micro}         # output folder name for the microbenchmarks
R=/tmp/res
mkdir -p $R/suite $R/${MICRO_DIR:-micro}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
T0=$(date +%s)
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a $R/driver.log; }
export PYTHONUNBUFFERED=1
export PATH=/usr/local/cuda/bin:$PATH
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
# metric lists validated by an earlier call travel in validation/data/ncu_setup/
for f in metrics_suite.txt metrics_micro.txt; do
  [ -s $R/$f ] || { [ -s validation/data/ncu_setup/$f ] && cp validation/data/ncu_setup/$f $R/$f; }
done
MODULES="copies matmul transpose reduction histogram compute bank_conflicts elementwise"

nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,pstate \
  --format=csv -lms 500 > $R/smi_clocks_$(date +%s).csv 2>&1 &
SMI=$!

finish() {
  kill $SMI 2>/dev/null
  log "packing; stages were: $STAGES"
  (cd $R && tar czf $OUT/sass.tgz $(ls -d */sass) 2>/dev/null)
  (cd $R && tar czf $OUT/reps.tgz $(find . -name '*.ncu-rep') 2>/dev/null)
  (cd $R && tar czf $OUT/main.tgz --exclude='*.ncu-rep' --exclude='sass' . 2>/dev/null)
  cp $R/driver.log $OUT/driver.log
  ls -la $OUT
}
trap finish EXIT

# run CMD with a timeout of min(CAP, left-RESERVE) seconds; skip if too little time is left
bounded() {
  local cap=$1; shift
  local t=$(( $(left) - 25 ))
  [ $t -gt $cap ] && t=$cap
  if [ $t -lt 10 ]; then log "SKIP (no time left): $*"; return 99; fi
  log "start (timeout ${t}s): $*"
  timeout -k 5 $t "$@"
  local rc=$?
  log "end rc=$rc: $1 $2 $3"
  return $rc
}

for st in $STAGES; do
  case $st in
  env)
    {
      echo "== date"; date -u
      echo "== nvidia-smi"; nvidia-smi
      echo "== nvidia-smi -q (clocks, power)"; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE,MEMORY,COMPUTE,ECC
      echo "== python"; command -v python3; python3 --version
      echo "== packages"; python3 -m pip list 2>/dev/null | grep -i -E "numba|numpy|cupy|cuda|torch |llvmlite"
      echo "== ncu"; echo "$NCU"; $NCU --version
      echo "== nvcc"; nvcc --version; command -v nvdisasm cuobjdump
      echo "== uname"; uname -a; nproc; free -g
    } > $R/env.txt 2>&1
    log "env: $(grep -m1 'NVIDIA H' $R/env.txt) ncu=$NCU"
    bounded 60 python3 -c "
import numpy as np; np.row_stack = getattr(np, 'row_stack', np.vstack)
import numba, numba.cuda as cuda
from importlib.metadata import version
print('numba', numba.__version__, 'numba-cuda', version('numba-cuda'), 'numpy', np.__version__)
@cuda.jit
def k(a):
    i = cuda.grid(1)
    if i < a.size: a[i] = a[i] * 2
d = cuda.to_device(np.arange(1024, dtype=np.float32)); k[4, 256](d)
assert (d.copy_to_host() == 2 * np.arange(1024)).all(); print('smoke ok', cuda.get_current_device().name)
print(k.inspect_sass()[:0] if hasattr(k, 'inspect_sass') else '')
" 2>&1 | tee $R/smoke.txt
    if ! grep -q "smoke ok" $R/smoke.txt; then log "SMOKE FAILED: stopping"; exit 3; fi
    ;;
  metrics)
    bounded 60 $NCU --query-metrics --devices 0 > $R/ncu_query_metrics.txt 2>&1 || \
      bounded 60 $NCU --query-metrics --chip gh100 > $R/ncu_query_metrics.txt 2>&1
    bounded 60 $NCU --query-metrics --devices 0 --query-metrics-mode suffix > $R/ncu_query_metrics_suffix.txt 2>&1
    ls $(dirname $(readlink -f $NCU))/sections/ > $R/ncu_sections_list.txt 2>&1
    cat $(dirname $(readlink -f $NCU))/sections/WarpStateStats.section > $R/ncu_WarpStateStats.section 2>&1
    TARGET="python3 validation/tools/tiny_numba.py"
    if nvcc -arch=sm_90 -o /tmp/tiny validation/tools/tiny.cu > $R/tiny_build.txt 2>&1 && /tmp/tiny; then
      TARGET=/tmp/tiny
    fi
    bounded 200 python3 validation/ncu_metrics.py --ncu $NCU --query $R/ncu_query_metrics.txt \
      --target "$TARGET" --out $R 2>&1 | tee $R/metrics_check.log
    ;;
  suite_time)
    for m in $MODULES; do
      bounded 150 python3 validation/run_suite.py --out $R/suite --mode time --modules $m ${ONLY:+--only "$ONLY"} \
        2>&1 | tee -a $R/suite/time_log.txt
    done
    ;;
  micro_time)
    bounded 200 python3 validation/microbench/run_micro.py --out $R/$MD --mode time ${MICRO_ONLY:+--only "$MICRO_ONLY"} \
      2>&1 | tee $R/$MD/time_log.txt
    ;;
  suite_profile)
    [ -s $R/metrics_suite.txt ] || { log "no metrics_suite.txt"; continue; }
    for m in $MODULES; do
      bounded 150 $NCU --clock-control none --metrics "$(cat $R/metrics_suite.txt)" -f -o $R/suite/ncu_$m \
        python3 validation/run_suite.py --out $R/suite --mode profile --modules $m ${ONLY:+--only "$ONLY"} \
        > $R/suite/ncu_$m.log 2>&1
      tail -3 $R/suite/ncu_$m.log
      [ -f $R/suite/ncu_$m.ncu-rep ] && $NCU -i $R/suite/ncu_$m.ncu-rep --csv --page raw --print-units base \
        > $R/suite/ncu_$m.csv 2> $R/suite/ncu_${m}_export.err
    done
    ;;
  micro_profile)
    [ -s $R/metrics_micro.txt ] || { log "no metrics_micro.txt"; continue; }
    bounded 240 $NCU --clock-control none --kernel-name-base mangled --kernel-name 'regex:.*mb_.*' --metrics "$(cat $R/metrics_micro.txt)" -f \
      -o $R/$MD/ncu_micro python3 validation/microbench/run_micro.py --out $R/$MD --mode profile \
      ${MICRO_ONLY:+--only "$MICRO_ONLY"} > $R/$MD/ncu_micro.log 2>&1
    tail -3 $R/$MD/ncu_micro.log
    [ -f $R/$MD/ncu_micro.ncu-rep ] && $NCU -i $R/$MD/ncu_micro.ncu-rep --csv --page raw --print-units base \
      > $R/$MD/ncu_micro.csv 2> $R/$MD/ncu_micro_export.err
    ;;
  esac
done
log "all stages done"
