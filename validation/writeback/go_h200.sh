# The write-back microbenchmarks (bench.py) on the H200, one ncu pass (--cache-control none:
# on the H100 the 'all' pass gave the same in-kernel counts, h100_2026-12-07/README.md), so it
# fits one device call: run from the repository root as  bash validation/writeback/go_h200.sh
# Results in $OUT: ncu_none.csv (launch order), labels_none.json, out_none.txt, env.txt;
# read them with h100_2026-12-07/table.py's loop (python3 validation/writeback/table.py DIR).
cd "$(dirname "$0")"
N=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | tail -1)
{ date -u; nvidia-smi; $N --version; python3 -c 'import cupy;print("cupy",cupy.__version__)'; } > $OUT/env.txt 2>&1
Q="--clock-control none --kernel-name regex:^(wr|cp4|rd|wrs)$ --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum --csv --page raw --print-units base"
timeout 280 $N $Q --cache-control none --log-file $OUT/ncu_none.csv python3 bench.py $OUT/labels_none.json > $OUT/out_none.txt 2>&1
echo "none rc=$?"; grep -c '^"' $OUT/ncu_none.csv; tail -3 $OUT/out_none.txt
