"""Write an observer once, run it on both executors: SIMT efficiency per source line.

An observer (simgpu.events.Observer) receives the same records from the PTX executor (the
default: the code numba-cuda compiled) and from simgpu's IR interpreter (the kernel as written).
This one adds up, per source line, the warp instructions executed and the threads active in
them: active threads / (32 x warp instructions) is the line's SIMT efficiency, as Nsight
Compute defines smsp__thread_inst_executed / (32 x smsp__inst_executed).

    python examples/observer_line_efficiency.py
"""
import inspect
from collections import defaultdict

import numpy as np

import simgpu
from simgpu import cuda
from simgpu.events import Observer


class LineEfficiency(Observer):
    def __init__(self):
        self.warps = defaultdict(int)       # line -> warp instructions
        self.threads = defaultdict(int)     # line -> active threads summed over them
        self.divergent = defaultdict(int)   # line -> warps split by a branch there

    def inst(self, ev):
        self.warps[ev.line] += ev.mask.n_warps
        self.threads[ev.line] += ev.mask.n_threads

    def branch(self, ev):
        self.divergent[ev.line] += ev.divergent_warps

    def table(self, source_lines):
        rows = []
        for line in sorted(self.warps):
            w, t = self.warps[line], self.threads[line]
            text = source_lines.get(line, "").strip() if line else "(no source line)"
            rows.append(f"  line {line:3d}  {w:6d} warp inst  {100 * t / (32 * w):5.1f} %"
                        f"  {self.divergent[line]:4d} divergent  {text}")
        return "\n".join(rows)


def relu_if(x, out):
    i = cuda.grid(1)
    if i < x.size:
        if x[i] > 0:
            out[i] = x[i]
        else:
            out[i] = 0.0


def main():
    src, first = inspect.getsourcelines(relu_if)
    lines = {first + k: s for k, s in enumerate(src)}
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    for executor in ("ptx", "ir"):
        obs = LineEfficiency()
        out = np.zeros_like(x)
        simgpu.launch(relu_if, 4, 256, (x, out), observers=[obs], executor=executor,
                      memory=False, timing=False)
        assert np.array_equal(out, np.maximum(x, 0))
        print(f"{executor}: " + {"ptx": "the compiled code (numba-cuda's PTX)",
                                 "ir": "the kernel as written (simgpu's IR)"}[executor])
        print(obs.table(lines))


if __name__ == "__main__":
    main()
