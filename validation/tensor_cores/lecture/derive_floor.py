"""do_bench's floor: what triton.testing.do_bench's median adds to simgpu's predicted kernel time
(gpu__time_duration), from launches that do (almost) nothing -- never from the kernels whose
accuracy is reported.

* H100: h100/card_lecture.json "floor": an empty Triton kernel and a one-store kernel at 1, 132,
  1056 and 8448 blocks of 4 warps; floor = median over the 8 of (do_bench median - simgpu's time
  for the same launch on gpu="H100").  The card's CUPTI durations give the same quantity against
  the kernel's own duration (printed beside it).
* H200: ../../triton/h200/h200.json, the 1-element vector add (add_1, the smallest launch measured
  there): do_bench median - simgpu's time on gpu="H200".

* H100, launches with tensor descriptors: h100/launch_floor/launch_floor.json
  (launch_floor_device.py, 2026-12-07 17:26 UTC; kernels in launch_floor_kernels.py): an empty
  kernel and near-empty kernels of 1, 2, 4 host TensorDescriptors and of 1, 2
  tl.make_tensor_descriptor, grid 1.  Per kind, the excess of (do_bench median - simgpu's time)
  over the same run's empty kernel, fitted as a cost per descriptor (least squares through 0):
  presets.DOBENCH_HOST_DESC_H100_NS and DOBENCH_DEVICE_DESC_H100_NS.  (simgpu's time already
  holds the kernel's own TMA loads and tensormap writes; this is what do_bench adds beyond it.)

Prints the values presets.DOBENCH_FLOOR_*_NS and DOBENCH_*_DESC_H100_NS hold.  Run: PYTHONPATH=<simgpu>:<triton 3.6> python derive_floor.py"""
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

# -- launches with tensor descriptors (H100) ------------------------------------------------
import launch_floor_kernels as K  # noqa: E402  (this folder: on sys.path as the script's own)
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402
lf = json.load(open(os.path.join(HERE, "h100", "launch_floor", "launch_floor.json")))
rng = np.random.default_rng(0)
mats = [rng.standard_normal((64, 64)).astype(np.float16) for _ in range(4)]   # as the card's: 64 x 64 fp16
descs = [TensorDescriptor.from_tensor(simgpu.as_tensor(m), [16, 16]) for m in mats]
o = np.zeros(16, np.float16)
excess = {}
for name, kern, args in (("empty_ptr", K.empty_ptr, (o,)), ("host_desc_1", K.host_desc_1, (o, *descs[:1])),
                         ("host_desc_2", K.host_desc_2, (o, *descs[:2])), ("host_desc_4", K.host_desc_4, (o, *descs)),
                         ("dev_desc_1", K.dev_desc_1, (o, mats[0])), ("dev_desc_2", K.dev_desc_2, (o, mats[0], mats[1]))):
    rep = simgpu.jit(kern)[(1,)](*args, gpu="H100", num_warps=4)
    c = lf["cases"][name]
    pred = rep.metrics["gpu__time_duration.sum"] / 1e3
    excess[name] = c["dobench_median_us"] - pred
    print(f"{name:11s} do_bench {c['dobench_median_us']:.2f} us  CUPTI {list(c['cupti_us'].values())[0]:.2f}  "
          f"back-to-back {c['back_to_back_us']:.1f}  simgpu {pred:.2f}  do_bench - simgpu {excess[name]:.2f}  "
          f"descriptors {rep.extras['triton_launch']}")
for kind, ns in (("host", (1, 2, 4)), ("dev", (1, 2))):
    ys = [excess[f"{kind}_desc_{n}"] - excess["empty_ptr"] for n in ns]
    per = sum(n * y for n, y in zip(ns, ys)) / sum(n * n for n in ns)
    print(f"H100 {kind} descriptor: {', '.join(f'{y * 1e3:.0f}' for y in ys)} ns over the empty kernel at "
          f"{', '.join(map(str, ns))} -> {per * 1e3:.0f} ns per descriptor")
