#!/bin/bash
# One device call (about 150 s on the card, the machine's start on top), from the repository root:
#   bash validation/ncu_bottleneck/device_call.sh [SECONDS]
# 1. validation/ncu_bottleneck/device_bneck.sh on the holdout (issue 22's bottleneck target);
# 2. the per-opcode benches of validation/microbench/opcodes.py (the new ones and controls);
# 3. the same benches once under ncu for each pipe's instruction count (which pipe an opcode uses).
# Results in $OUT (at most 8 files, the limit of what comes back): log.txt, env.txt,
# metrics_requested.txt, bneck_holdout.csv, bneck_raw.tgz (CSVs and order files), opcodes.json,
# opcodes_sass.txt, opcodes_ncu.csv.  Then, here: validation/compare_bottleneck.py --pair ... and
# validation/ncu_bottleneck/pipe_counts.py (docs/timing.md, "Bottleneck agreement").
# BNECK=0 skips step 1; ONLY=REGEX picks the benches (default: the second run's set). The third
# run, the one-address and fixed-address constant loads (about 60 s on the card):
#   BNECK=0 ONLY='^(ldc_warp|ldc64_imm|ldc|imad_lo|ffma)$' bash validation/ncu_bottleneck/device_call.sh 90
# The fourth (session 33): is the ADU one unit of the SM or one per SMSP (one warp per SM), and
# ULDC.64's fixed-address rate (about 60 s):
#   BNECK=0 ONLY='^(ldc_warp_1w|ldc64_imm_1w|imad_lo_1w|uldc64_imm|ldc_warp|imad_lo)$' bash validation/ncu_bottleneck/device_call.sh 90
set -u
export PYTHONUNBUFFERED=1 PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
T0=$(date +%s)
TOTAL=${1:-150}
B=validation
ONLY=${ONLY:-'^(isetp_ex|viadd|bra_bssy|bra_uniform|umov|uiadd3|uldc|ldc|isetp_sel|iadd3|lop3_shf|ffma|dmul|imad_lo)$'}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [ "${BNECK:-1}" != 0 ]; then
  SUITE_MODULES="" HOLDOUT_CAP=${HOLDOUT_CAP:-95} bash $B/ncu_bottleneck/device_bneck.sh 120 > /tmp/bneck_stdout.txt 2>&1
  echo "[bneck took $(( $(date +%s) - T0 ))s]" | tee -a $OUT/log.txt
else
  mkdir -p /tmp/bneck
  NCU0=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
  timeout 60 $NCU0 --query-metrics --chip gh100 > /tmp/bneck/query.txt 2>&1
  { date -u +%FT%TZ; nvidia-smi; $NCU0 --version; nvcc --version 2>/dev/null; } > $OUT/env.txt 2>&1
fi
left() { echo $(( TOTAL - ($(date +%s) - T0) )); }
timeout -k 3 $(( $(left) > 35 ? 35 : $(left) - 2 )) python3 $B/microbench/opcodes.py run --out $OUT --only "$ONLY" 2>&1 | tee -a $OUT/log.txt
echo "[opcodes done at $(( $(date +%s) - T0 ))s]" | tee -a $OUT/log.txt
T=$(( $(left) - 5 ))
if [ $T -ge 12 ]; then
  NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
  M=$(grep -oE "^sm__inst_executed_pipe_(adu|alu|cbu|fma|fmaheavy|fmalite|fp16|fp64|lsu|uniform|xu|tex)\b" /tmp/bneck/query.txt | sort -u | sed 's/$/.sum/' | tr '\n' ',')
  M="${M}smsp__inst_executed.sum,sm__cycles_elapsed.avg"
  echo "opcode pipe metrics: $M" | tee -a $OUT/log.txt
  timeout -k 3 $T $NCU --clock-control none --metrics "$M" -k regex:bench_ -f -o /tmp/opc_ncu \
    python3 $B/microbench/opcodes.py run --out /tmp/opc_ncu_out --reps 0 --only "$ONLY" > /tmp/opc_ncu.log 2>&1
  echo "ncu opcodes rc=$?" | tee -a $OUT/log.txt; tail -3 /tmp/opc_ncu.log | tee -a $OUT/log.txt
  $NCU -i /tmp/opc_ncu.ncu-rep --csv --page raw --print-units base > $OUT/opcodes_ncu.csv 2>>$OUT/log.txt
fi
echo "[all took $(( $(date +%s) - T0 ))s]" | tee -a $OUT/log.txt
cat $OUT/log.txt | grep -v "^\s*$" | tail -60
