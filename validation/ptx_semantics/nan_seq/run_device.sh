#!/bin/bash
# One device call (issue 25 item 3): the NaN sequences on the card, and ptxas' SASS of campaign c2
# as the card's toolkit makes it.  OUT must be set.
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv
date -u
python3 device_nan_seq.py "$OUT" && cp seqs.py "$OUT/"
date -u
for p in 0 1 2; do python3 card_sass.py ../../validation/generated/c2_ptx.json.gz "$OUT/c2_card_sass_$p.json.gz" --workers 16 --part $p/3; done
date -u
ls -la "$OUT"
