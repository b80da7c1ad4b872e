#!/usr/bin/env python3
"""Draw the site's gallery: run the lecture examples and a lesson's warp stepper, each writing
its figure into OUT (the documentation build calls this through docs/site/hooks.py).

    python docs/site/gallery.py OUT

Each example runs in its own process, as a user runs it (`python examples/X.py --out OUT`).
"""
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (script, extra arguments): each writes one PNG into --out
EXAMPLES = [
    ("lecture_mystery_plot.py", []),
    ("lecture_roofline.py", []),
    ("lecture_six_tricks.py", []),
    ("lecture_flashattention.py", []),
    ("lecture_tpu.py", []),
    # the timing model's matmul sweep, on a few sizes around the first wave's end (a sweep)
    ("mystery_plot_simulated.py", ["--sizes", "256,448,512,528,576", "--workers", "2"]),
]

STEPPER = """
import sys
sys.path.insert(0, {examples!r})
import lesson_relu as L
from simgpu.stepper import step, warp_lanes
st = step(L.relu_if, L.N // L.BLOCK, L.BLOCK, L.args_relu_if(), executor="ir")
st.run()
st.to_html({html!r})
warp_lanes(st, path={png!r}, title="relu_if, warp 0: lanes x warp instructions")
"""


def main(out):
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), MPLBACKEND="Agg")
    for script, extra in EXAMPLES:
        t = time.time()
        subprocess.run([sys.executable, os.path.join(ROOT, "examples", script), "--out", out, *extra],
                       cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
        print(f"gallery: {script} {time.time() - t:.1f} s", file=sys.stderr)
    code = STEPPER.format(examples=os.path.join(ROOT, "examples"), html=os.path.join(out, "relu_if_stepper.html"),
                          png=os.path.join(out, "relu_if_lanes.png"))
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    return sorted(os.listdir(out))


if __name__ == "__main__":
    print("\n".join(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "gallery"))))
