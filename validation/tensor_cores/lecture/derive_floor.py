"""do_bench's floor: what triton.testing.do_bench's median adds to simgpu's predicted kernel time
(gpu__time_duration), from launches that do (almost) nothing -- never from the kernels whose
accuracy is reported.

* H100: h100/card_lecture.json "floor": an empty Triton kernel and a one-store kernel at 1, 132,
  1056 and 8448 blocks of 4 warps; floor = median over the 8 of (do_bench median - simgpu's time
  for the same launch on gpu="H100").  The card's CUPTI durations give the same quantity against
  the kernel's own duration (printed beside it).
* H200: ../../triton/h200/h200.json, the 1-element vector add (add_1, the smallest launch measured
  there): do_bench median - simgpu's time on gpu="H200".

Prints the values presets.DOBENCH_FLOOR_*_NS hold.  Run: PYTHONPATH=<simgpu>:<triton 3.6> python derive_floor.py"""
import importlib.util, json, os, shutil, statistics, sys
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs("/tmp/simgpu_lecture", exist_ok=True)
shutil.copy(os.path.join(HERE, "kernels.py"), "/tmp/simgpu_lecture/kernels.py")
sys.path.insert(0, "/tmp/simgpu_lecture")
import simgpu, kernels as L

card = json.load(open(os.path.join(HERE, "h100", "card_lecture.json")))
rows = []
for kname, kern in (("empty", L.empty_kernel), ("store", L.store_kernel)):
    for g in L.FLOOR_GRIDS:
        c = card["floor"][f"{kname}_{g}"]
        x = np.zeros(1 << 16, np.int32)
        rep = simgpu.launch(kern, (g,), None, (x,), gpu="H100", num_warps=4)
        pred = rep.metrics["gpu__time_duration.sum"] / 1e3
        cupti = list(c["kernel_us"].values())[0]
        rows.append((kname, g, c["median_us"], cupti, pred, c["median_us"] - pred, c["median_us"] - cupti))
        print(f"{kname:5s} {g:5d} do_bench {c['median_us']:.2f} us  CUPTI {cupti:.2f}  simgpu {pred:.2f}  "
              f"do_bench - simgpu {rows[-1][5]:.2f}  do_bench - CUPTI {rows[-1][6]:.2f}")
h100 = statistics.median(r[5] for r in rows)
print(f"H100 floor (do_bench - simgpu, median of {len(rows)}): {h100 * 1e3:.0f} ns;"
      f" do_bench - CUPTI: {statistics.median(r[6] for r in rows) * 1e3:.0f} ns")

os.makedirs("/tmp/simgpu_triton", exist_ok=True)
shutil.copy(os.path.join(HERE, "..", "..", "triton", "kernels.py"), "/tmp/simgpu_triton/kernels.py")
_spec = importlib.util.spec_from_file_location("triton_kernels", "/tmp/simgpu_triton/kernels.py")
T = importlib.util.module_from_spec(_spec)        # validation/triton's kernels, as both sides ran them
_spec.loader.exec_module(T)
t200 = json.load(open(os.path.join(HERE, "..", "..", "triton", "h200", "h200.json")))
add = t200["cases"]["add_1"]
a = np.ones(1, np.float32)
rep = simgpu.launch(T.add_kernel, (1,), None, (a, a.copy(), np.zeros(1, np.float32), 1), gpu="H200", BLOCK_SIZE=1024)
pred = rep.metrics["gpu__time_duration.sum"] / 1e3
t = add["time_ms"] * 1e3
print(f"H200 add_1: do_bench {t:.2f} us, simgpu {pred:.2f} us -> floor {(t - pred) * 1e3:.0f} ns")
