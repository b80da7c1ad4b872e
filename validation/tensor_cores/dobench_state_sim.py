"""Here (no device): simgpu's side of dobench_state_device.py's stream reads -- the same sizes,
grid and block, as ncu sees them (caches empty), after do_bench's flush (memory=AfterFlush) and,
where the card's data is there, the card's medians in its three states (warm, after the 256 MB
memset, after a clean 256 MB read).  The memset - read difference is what the L2's dirty lines
cost on the card; AfterFlush - cold is simgpu's.

    PYTHONPATH=<simgpu> python dobench_state_sim.py [CARD_DIR_WITH_dobench_state.json] [--gpu H100]
        -> dobench_state_sim.json (here)
"""
import json
import os
import sys

import numpy as np
from numba import cuda

import simgpu
from simgpu.memory import AfterFlush
from simgpu.validate import unprofiled

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1 << 20
SIZES = (64 << 10, 1 * MiB, 4 * MiB, 16 * MiB, 32 * MiB, 64 * MiB)


@cuda.jit
def stream_read(a, out):
    """dobench_state_device.py's stream_read: every element read once, grid-stride (4-byte loads
    here, float4 there: the DRAM bytes are the same)."""
    i = cuda.grid(1)
    s = 0.0
    st = cuda.gridsize(1)
    while i < a.shape[0]:
        s += a[i]
        i += st
    if s == 1234.5:
        out[0] = s


def main():
    argv = sys.argv[1:]
    gpu_name = argv[argv.index("--gpu") + 1] if "--gpu" in argv else "H100"
    card_dir = next((a for a in argv if not a.startswith("--") and a != gpu_name), None)
    card = json.load(open(os.path.join(card_dir, "dobench_state.json")))["micro"] if card_dir else {}
    g = unprofiled(gpu_name)
    res = {"gpu": f"unprofiled({gpu_name!r})", "l2_dirty_max_bytes": g.l2_dirty_max_bytes,
           "dram_write_cost": g.dram_write_cost, "cases": {}}
    for S in SIZES:
        x = np.ones(S // 4, dtype=np.float32)
        r = {}
        for state, mem in (("cold", True), ("after_flush", AfterFlush)):
            rep = simgpu.launch(stream_read, 132 * 4, 512, (x, np.zeros(1, np.float32)), gpu=g, sample=True, memory=mem)
            r[state] = {"us": rep.metrics["gpu__time_duration.sum"] / 1e3,
                        "dram_write_bytes": rep.metrics.get("dram__bytes_write.sum", 0.0)}
        r["sim_extra_us"] = r["after_flush"]["us"] - r["cold"]["us"]
        c = card.get(f"stream_read_{S}")
        if c:
            med = {st: next((v["median_us"] for k, v in d.items() if k == "stream_read"), None) for st, d in c.items()}
            r["card_us"] = med
            if med.get("memset") is not None and med.get("read") is not None:
                r["card_dirty_extra_us"] = med["memset"] - med["read"]
        res["cases"][str(S)] = r
        print(S, json.dumps(r), flush=True)
    json.dump(res, open(os.path.join(HERE, "dobench_state_sim.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
