#!/bin/bash
# One device call (issue 25 item 3): the NaN sequences on the card (seqs.CASES, with the phi cases),
# from ptxas' cubin and again as numba-cuda links the PTX (nvJitLink or the driver's JIT), and which
# linker numba-cuda's cuda.core picks there.  OUT must be set.  About a minute.
cd "$(dirname "$0")"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv
date -u
python3 device_nan_seq.py "$OUT" && cp seqs.py "$OUT/"
python3 -c "from cuda.core import Linker; print('cuda.core Linker backend:', Linker.which_backend())" > "$OUT/linker.txt" 2>&1
python3 -m pip list 2>/dev/null | grep -i -E "nvjitlink|cuda-core|cuda-bindings|numba" >> "$OUT/linker.txt"
date -u
ls -la "$OUT"
