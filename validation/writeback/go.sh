# runs on the device machine: bash go.sh (in a folder holding bench.py); results in $OUT
N=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | tail -1)
{ date -u; nvidia-smi; $N --version; python3 -c 'import cupy;print("cupy",cupy.__version__)'; } > $OUT/env.txt 2>&1
Q="--clock-control none --kernel-name regex:^(wr|cp4|rd|wrs)$ --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum --csv --page raw --print-units base"
for c in none all; do timeout 230 $N $Q --cache-control $c --log-file $OUT/ncu_$c.csv python3 bench.py $OUT/labels_$c.json > $OUT/out_$c.txt 2>&1; echo "$c rc=$?"; done
for c in none all; do echo $c; grep -c '^"' $OUT/ncu_$c.csv; tail -3 $OUT/out_$c.txt; done
