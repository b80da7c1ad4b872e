#!/bin/bash
# Campaign c2 on the card, in one device call (issue 25 item 3): run from a folder holding
# simgpu/ (as committed before the fixes), validation/{_common.py,generated/,ptx_semantics/approx_tables.py}
# and whl/ (simpy), with OUT set.  See validation/generated/README.md.
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site whl/*.whl
export PYTHONPATH=$PWD:/tmp/site
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
date -u
python3 validation/generated/device_run.py "$OUT" --campaign c2 --workers 15 2>&1 | grep -v "^  " | tail -30
python3 validation/ptx_semantics/approx_tables.py "$OUT"
SIMGPU_CACHE_DIR=/tmp/simgpu-cache timeout "${COMPARE_SECONDS:-230}" python3 validation/generated/compare.py \
    --campaign c2 --jobs 15 --ref "$OUT/c2_outputs.npz" --dev "$OUT/c2_device.json" --out "$OUT/c2_compare.json" \
    2>&1 | tail -15 && [ -s "$OUT/c2_compare.json" ] && rm -f "$OUT/c2_compare.json.partial.jsonl"
date -u
ls -la "$OUT"
