"""The `simgpu` command."""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

from . import __version__
from .errors import KernelError, SimGPUError
from .tracebacks import is_user_error, user_traceback
from .hardware import PRESETS
from .model import attention as model_attention
from .model import gemm as model_gemm


def _later(module, name):
    """`from module import name`, done the first time the function is called: `simgpu --help`
    and the demo's first line do not wait for numba-cuda (cli is the top layer, so hiding these
    imports from the import contract hides no cycle)."""
    def call(*args, **kwargs):
        return getattr(importlib.import_module(module), name)(*args, **kwargs)
    call.__name__ = call.__qualname__ = name
    return call


run_program = _later("simgpu.host", "run_program")
demo_launches = _later("simgpu.kernels.demo", "demo_launches")
start_engine_compile = _later("simgpu.kernels.demo", "start_engine_compile")
engine_cached = _later("simgpu.memory.warm", "engine_cached")
finish_engine_compile = _later("simgpu.kernels.demo", "finish_engine_compile")
compile_kernels = _later("simgpu.kernels.demo", "compile_kernels")
plot_mystery = _later("simgpu.plot.model", "mystery")
launch = _later("simgpu.runtime.launch", "launch")
build_args = _later("simgpu.runtime.loader", "build_args")
load_target = _later("simgpu.runtime.loader", "load_target")
parse_dims = _later("simgpu.runtime.loader", "parse_dims")
step_main = _later("simgpu.stepper.tui", "main")
against_gpu = _later("simgpu.validate", "against_gpu")
run_suite = _later("simgpu.validate.suite", "run_suite")

DESCRIPTION = """\
simgpu runs numba.cuda kernels on a modelled GPU (default: NVIDIA H200) and shows what the
hardware would do: the results, every instruction and byte moved, divergence, occupancy and
(where modelled) the time and its bottleneck, named as Nsight Compute names them.

Start here:
  simgpu demo                         simulate classic kernels (saxpy, naive vs tiled matmul,
                                      reduction, transpose) and print their reports
  simgpu run prog.py [ARGS...]        run an existing numba.cuda program unchanged on the
                                      modelled GPU; at exit: one line per kernel launch
                                      (grid x block, predicted time, bottleneck) and totals
  simgpu run -m package.module        the same for a module; --report DIR writes each
                                      launch's report (text, JSON, HTML); --gpu A100
  simgpu run kern.py::saxpy --grid 4096 --block 256
                                      simulate your kernel; kern.py defines saxpy and
                                      args_saxpy() (or make_args()) returning its arguments
  simgpu step kern.py::relu --grid 1 --block 32
                                      step one warp one instruction at a time (teaching)
  simgpu validate kern.py::saxpy --grid 4096 --block 256
                                      on a machine with a CUDA GPU: run the same source under
                                      numba.cuda (+ Nsight Compute) and print prediction beside
                                      measurement
  simgpu sanitize kern.py::dot --grid 1 --block 8
                                      compute-sanitizer's racecheck, initcheck, synccheck and
                                      memcheck on the model, at your source lines (also
                                      `simgpu sanitize prog.py`, `simgpu run --check prog.py`)
  simgpu gpus                         list the modelled GPUs and their numbers

The library cost model (no kernel of yours; cuBLAS and PyTorch as measured on the H200):
  simgpu gemm 8192 50257 768          one torch.matmul: the kernel cuBLAS would run, its
                                      waves, the bound and the time (--dtype, --clock max)
  simgpu attention 1 16 4096 64       scaled_dot_product_attention: time, extra memory and
                                      HBM bytes per backend (--backend, --causal, --backward)
  simgpu mystery --out plot.png       the lecture's mystery plot, each cliff labelled
"""


RUN_DESCRIPTION = """\
Run a whole numba.cuda program unchanged, with the modelled GPU as its device:

  simgpu run prog.py [ARGS...]          options for simgpu go before prog.py
  simgpu run -m package.module [ARGS...]
  simgpu run --gpu A100 --report out/ prog.py

`from numba import cuda` in the program gets simgpu underneath (simgpu.install(): numba.cuda's
host API -- to_device, device_array, streams, events, cuda.jit kernels -- runs on the model;
numba-cuda still compiles the kernels, and simgpu runs the PTX it emits).  At exit simgpu prints
one line per kernel launch (name, grid x block, predicted time, bottleneck), per-kernel totals
and the host<->device transfers.

Or simulate one kernel of a file:

  simgpu run kern.py::saxpy --grid 4096 --block 256
      kern.py defines saxpy and args_saxpy() (or make_args()) returning its arguments
"""


def cmd_demo(a):
    t0 = time.perf_counter()
    print(f"simgpu demo: five classic kernels on the modelled {a.gpu or 'H200'}; loading numba-cuda and "
          "the models...", flush=True)
    # the memory model's numba code: compiled in a second process while the kernels compile here,
    # unless numba's cache has it (then loading it costs a fraction of a second)
    engine = None if engine_cached() else start_engine_compile()
    launches = demo_launches()
    print(f"  loaded in {time.perf_counter() - t0:.1f} s.  Compiling the kernels (numba-cuda, ptxas; "
          "cached on disk after the first run)...", flush=True)
    t1 = time.perf_counter()
    n_compiled = compile_kernels(launches, a.gpu)
    t2 = time.perf_counter()
    if engine is None:
        engine_said = "the memory model's compiled code was in numba's cache"
    else:
        ok = finish_engine_compile(engine)
        engine_said = (f"the memory model compiled (a second process) {time.perf_counter() - t2:.1f} s later"
                       if ok else "the memory model compiles with the first launch")
    print(f"  {n_compiled} kernels compiled in {t2 - t1:.1f} s; {engine_said}.  Each kernel now "
          "simulated:", flush=True)
    for i, (title, k, g, b, args, check) in enumerate(launches, 1):
        print(f"[{i}/{len(launches)}] {title} ...", flush=True)
        t0 = time.perf_counter()
        rep = launch(k, g, b, args, gpu=a.gpu)
        dt = time.perf_counter() - t0
        compiled = rep.extras.get("compile_seconds", 0.0)
        print("=" * 78)
        print(f"{title}    [compiled in {compiled:.1f} s, simulated in {dt - compiled:.1f} s; "
              f"result {'correct' if check() else 'WRONG'}]")
        print(rep, flush=True)
    return 0


def cmd_run(a):
    if a.module or (a.target and "::" not in a.target):
        return cmd_run_program(a)
    if not a.target:
        print("simgpu run: give a program (prog.py, -m module) or FILE.py::KERNEL", file=sys.stderr)
        return 2
    if a.argv:          # FILE.py::KERNEL --grid ... : the options after the target are simgpu's
        k = argparse.ArgumentParser(prog="simgpu run FILE.py::KERNEL")
        for opt in ("--grid", "--block", "--args", "--gpu", "--json", "--tools", "--executor"):
            k.add_argument(opt, default=None)
        k.add_argument("--check", action="store_true", default=None)
        for key, value in vars(k.parse_args(a.argv)).items():
            if value is not None:
                setattr(a, key, value)
    if not (a.grid and a.block):
        print("simgpu run FILE.py::KERNEL needs --grid and --block", file=sys.stderr)
        return 2
    mod, kern = load_target(a.target)
    args = build_args(mod, a.target.rsplit("::", 1)[1], a.args)
    check = _tools(a) if getattr(a, "check", None) else None
    rep = launch(kern, parse_dims(a.grid), parse_dims(a.block), args, gpu=a.gpu, check=check,
                 executor=getattr(a, "executor", None) or "auto")
    print(rep)
    if a.json:
        rep.to_json(a.json)
        print(f"wrote {a.json}")
    return 1 if rep.sanitizer is not None and rep.sanitizer.errors else 0


def _tools(a):
    t = getattr(a, "tools", None)
    return [s for s in t.split(",") if s] if t else True


def cmd_sanitize(a):
    """simgpu sanitize FILE.py::KERNEL --grid G --block B  |  simgpu sanitize prog.py ARGS:
    the four tools (or --tools racecheck,initcheck), the summary; exit status 1 on errors."""
    if not a.target:
        print("simgpu sanitize: give FILE.py::KERNEL (with --grid and --block) or a program", file=sys.stderr)
        return 2
    if "::" not in a.target:
        if not os.path.exists(a.target):
            print(f"simgpu sanitize: no such file: {a.target}", file=sys.stderr)
            return 2
        return run_program(path=a.target, argv=list(a.argv), gpu=a.gpu, check=_tools(a))
    if a.argv:
        k = argparse.ArgumentParser(prog="simgpu sanitize FILE.py::KERNEL")
        for opt in ("--grid", "--block", "--args", "--gpu", "--tools", "--executor"):
            k.add_argument(opt, default=None)
        for key, value in vars(k.parse_args(a.argv)).items():
            if value is not None:
                setattr(a, key, value)
    if not (a.grid and a.block):
        print("simgpu sanitize FILE.py::KERNEL needs --grid and --block", file=sys.stderr)
        return 2
    mod, kern = load_target(a.target)
    args = build_args(mod, a.target.rsplit("::", 1)[1], a.args)
    try:
        rep = launch(kern, parse_dims(a.grid), parse_dims(a.block), args, gpu=a.gpu, check=_tools(a),
                     timing=False, executor=a.executor or "auto")
    except KernelError as e:
        san = getattr(e, "sanitizer", None)
        if san is None:
            raise
        print(san.summary())
        return 1
    print(rep.sanitizer.summary())
    return 1 if rep.sanitizer.errors else 0


def cmd_run_program(a):
    """simgpu run prog.py ARGS / -m module ARGS: the whole program on the modelled GPU."""
    argv = list(a.argv)
    if a.module:
        if a.target:
            argv.insert(0, a.target)
        return run_program(module=a.module, argv=argv, gpu=a.gpu, report_dir=a.report,
                           check=_tools(a) if a.check else None)
    if not os.path.exists(a.target):
        print(f"simgpu run: no such file: {a.target}", file=sys.stderr)
        return 2
    return run_program(path=a.target, argv=argv, gpu=a.gpu, report_dir=a.report,
                       check=_tools(a) if a.check else None)


def cmd_validate(a):
    if a.suite:
        return run_suite(a.suite, only=a.only, ncu=not a.no_ncu)
    if not a.target:
        print("simgpu validate: give FILE.py::KERNEL or --suite DIR", file=sys.stderr)
        return 2
    mod, kern = load_target(a.target)
    args = build_args(mod, a.target.rsplit("::", 1)[1], a.args)
    cmp = against_gpu(kern, parse_dims(a.grid), parse_dims(a.block), args, gpu=a.gpu, repeat=a.repeat,
                   ncu=not a.no_ncu, flush_l2=a.flush_l2)
    print(cmp)
    if a.json:
        cmp.to_json(a.json)
    return 0


def cmd_gpus(a):
    for name, g in PRESETS.items():
        print(f"{name:6s} {g}")
    return 0


def _clock(value):
    if value in (None, "sustained", "max"):
        return value
    try:
        return float(value)
    except ValueError:
        raise SimGPUError(f"--clock takes 'sustained', 'max' or a clock in Hz (e.g. 1.5e9), not {value!r}") from None


def cmd_gemm(a):
    try:
        est = model_gemm(a.m, a.n, a.k, a.dtype, a.gpu, layout=a.layout, batch=a.batch, sm_clock_hz=_clock(a.clock),
                         timing=a.timing, kernel=a.kernel)
    except ValueError as e:
        raise SimGPUError(str(e)) from None
    print(est)
    w = est.why
    print(f"  operands' rows {est.alignment_bytes}-byte aligned; tile {w['tile'][0]}x{w['tile'][1]}, "
          f"split-K {w['split_k']}; compute {w['compute_s'] * 1e6:.1f} us, L2 {w['l2_s'] * 1e6:.1f} us, "
          f"HBM {w['hbm_s'] * 1e6:.1f} us, floor {w['floor_s'] * 1e6:.1f} us")
    if a.candidates:
        print(f"\n  {'candidate':34s} {'CTAs':>6s} {'waves':>5s} {'us':>9s}  bound")
        for c in sorted(est.candidates, key=lambda c: c.seconds)[:a.candidates]:
            print(f"  {c.kernel:34s} {c.ctas:6d} {c.waves:5d} {c.seconds * 1e6:9.1f}  {c.bound}")
    return 0


def cmd_attention(a):
    backends = [a.backend] if a.backend else ["flash", "efficient", "math"]
    try:
        ests = [model_attention(a.b, a.h, a.t, a.d, a.dtype, backend=be, causal=a.causal, backward=a.backward,
                                gpu=a.gpu) for be in backends]
    except ValueError as err:
        raise SimGPUError(str(err)) from None
    print(f"scaled_dot_product_attention B={a.b} H={a.h} T={a.t} d={a.d} {a.dtype}"
          f"{' causal' if a.causal else ''}{' forward + backward' if a.backward else ' forward'} on {a.gpu}:")
    for be, e in zip(backends, ests):
        print(f"  {be:10s} {e.seconds * 1e6:10.1f} us   extra memory {e.peak_bytes / 1e6:10.2f} MB   "
              f"HBM {e.hbm_bytes / 1e9:8.3f} GB")
        if a.kernels:
            for name, sec in e.kernels:
                print(f"      {name:40s} {sec * 1e6:10.1f} us")
    return 0


def cmd_mystery(a):
    sizes = list(range(a.step, a.max + 1, a.step))
    fig = plot_mystery(sizes, dtype=a.dtype, gpu=a.gpu)
    fig.savefig(a.out, dpi=120, bbox_inches="tight")
    print(f"wrote {a.out}: predicted TFLOP/s of square {a.dtype} matmuls, N = {a.step}..{a.max} step {a.step}, "
          f"cliffs labelled by cause")
    return 0


def cmd_step(a, rest):
    return step_main(rest)


def build_parser():
    p = argparse.ArgumentParser(prog="simgpu", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"simgpu {__version__}")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    d = sub.add_parser("demo", help="simulate classic kernels and print their reports")
    d.add_argument("--gpu", default=None, help="GPU preset (H200, H100, A100, V100); default H200")
    r = sub.add_parser("run", help="run a numba.cuda program (prog.py, -m module) or one kernel "
                       "(FILE.py::KERNEL) on the modelled GPU",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description=RUN_DESCRIPTION)
    r.add_argument("target", nargs="?", help="prog.py (a whole program) or path/to/file.py::kernel_name")
    r.add_argument("argv", nargs=argparse.REMAINDER, help="the program's own arguments")
    r.add_argument("-m", dest="module", default=None, help="run a module as a program (like python -m)")
    r.add_argument("--report", default=None, metavar="DIR",
                   help="program: write each launch's report (text, JSON, HTML) to DIR")
    r.add_argument("--grid", default=None, help="FILE.py::KERNEL: grid dimensions: 128 or 32,8")
    r.add_argument("--block", default=None, help="FILE.py::KERNEL: block dimensions: 256 or 16,16")
    r.add_argument("--args", default=None, help="Python expression for the arguments (np is numpy)")
    r.add_argument("--gpu", default=None, help="GPU preset; default H200")
    r.add_argument("--json", default=None, help="also write the report as JSON here")
    r.add_argument("--check", action="store_true", default=False,
                   help="run the sanitizer on every launch (docs/sanitizer.md); summary at exit")
    r.add_argument("--tools", default=None, help="with --check: e.g. racecheck,initcheck (default: all four)")
    r.add_argument("--executor", default=None, help="ptx (the compiled code, default) or ir")
    s = sub.add_parser("sanitize", help="compute-sanitizer's four tools on the model: FILE.py::KERNEL or prog.py",
                       description="Run a kernel (FILE.py::KERNEL --grid G --block B, arguments from "
                                   "args_KERNEL() or make_args()) or a whole program with the sanitizer: "
                                   "racecheck, initcheck, synccheck, memcheck, at your source lines "
                                   "(docs/sanitizer.md).  Exit status 1 when it finds errors.")
    s.add_argument("target", nargs="?", help="path/to/file.py::kernel_name or prog.py")
    s.add_argument("argv", nargs=argparse.REMAINDER, help="the program's own arguments")
    s.add_argument("--grid", default=None, help="grid dimensions: 128 or 32,8")
    s.add_argument("--block", default=None, help="block dimensions: 256 or 16,16")
    s.add_argument("--args", default=None, help="Python expression for the arguments (np is numpy)")
    s.add_argument("--gpu", default=None, help="GPU preset; default H200")
    s.add_argument("--tools", default=None, help="comma-separated: memcheck,racecheck,initcheck,synccheck (default: all)")
    s.add_argument("--executor", default=None, help="ptx (the compiled code, default) or ir (simgpu's interpreter)")
    v = sub.add_parser("validate", help="run a kernel on the CUDA GPU present and compare with the model",
                       description="Run FILE.py::KERNEL under numba.cuda (and Nsight Compute when "
                                   "ncu is on PATH) and print prediction beside measurement; or "
                                   "--suite validation/ to re-measure the stored suite.")
    v.add_argument("target", nargs="?", help="path/to/file.py::kernel_name")
    v.add_argument("--grid", default="1")
    v.add_argument("--block", default="32")
    v.add_argument("--args", default=None, help="Python expression for the arguments (np is numpy)")
    v.add_argument("--gpu", default="H200", help="GPU preset to predict with")
    v.add_argument("--repeat", type=int, default=50, help="timed launches (median)")
    v.add_argument("--no-ncu", action="store_true", help="do not profile with Nsight Compute")
    v.add_argument("--flush-l2", action="store_true", help="flush L2 between timed launches")
    v.add_argument("--json", default=None, help="write the comparison as JSON here")
    v.add_argument("--suite", default=None, help="run every case of a validation directory")
    v.add_argument("--only", default=None, help="with --suite: only cases whose name contains this")
    g = sub.add_parser("gemm", help="cost of one torch.matmul through cuBLAS (the library model)",
                       description="Predict one (M x K) @ (K x N) product as cuBLAS runs it (simgpu.model.gemm, "
                                   "docs/model.md): the candidate kernels for the operands' alignment, each "
                                   "costed (waves of tiles, L2 and HBM traffic, floors), the fastest chosen.")
    g.add_argument("m", type=int)
    g.add_argument("n", type=int)
    g.add_argument("k", type=int)
    g.add_argument("--dtype", default="bf16", help="fp32, tf32, bf16, fp16, fp8_e4m3, fp8_e5m2 (default bf16)")
    g.add_argument("--layout", default="NN", help="NN, NT, TN or TT (T: that operand transposed)")
    g.add_argument("--batch", type=int, default=1)
    g.add_argument("--clock", default=None, help="SM clock: sustained (default, back-to-back calls at the power "
                                                  "limit), max (a kernel alone) or Hz")
    g.add_argument("--timing", default="loop", choices=("loop", "dobench"),
                   help="loop: back-to-back calls on warm operands (default); dobench: triton.testing.do_bench "
                        "(L2 flushed before each call, the call alone timed)")
    g.add_argument("--kernel", default=None, help="cost this cuBLAS kernel (a name as torch.profiler shows it) "
                                                   "instead of the fastest candidate")
    g.add_argument("--candidates", type=int, nargs="?", const=8, default=0, metavar="K",
                   help="also list the K fastest candidates (default 8)")
    g.add_argument("--gpu", default="H200")
    at = sub.add_parser("attention", help="cost of scaled_dot_product_attention per backend (the library model)",
                        description="Predict torch.nn.functional.scaled_dot_product_attention on (B, H, T, d) "
                                    "inputs (simgpu.model.attention): time, memory allocated beyond q, k, v and "
                                    "the output, and HBM bytes, for the flash, efficient and math backends.")
    for name in ("b", "h", "t", "d"):
        at.add_argument(name, type=int, help={"b": "batch", "h": "heads", "t": "sequence length",
                                              "d": "head dimension"}[name])
    at.add_argument("--backend", default=None, help="flash, efficient or math (default: all three)")
    at.add_argument("--dtype", default="bf16", help="bf16 or fp16")
    at.add_argument("--causal", action="store_true")
    at.add_argument("--backward", action="store_true", help="forward + backward")
    at.add_argument("--kernels", action="store_true", help="list each kernel's time")
    at.add_argument("--gpu", default="H200")
    my = sub.add_parser("mystery", help="draw the lecture's mystery plot from the library model",
                        description="Predicted TFLOP/s of square matmuls against N (simgpu.plot.mystery), every "
                                    "cliff labelled by its cause: alignment, wave or tile.")
    my.add_argument("--out", default="mystery.png")
    my.add_argument("--dtype", default="bf16")
    my.add_argument("--step", type=int, default=64)
    my.add_argument("--max", type=int, default=8192)
    my.add_argument("--gpu", default="H200")
    sub.add_parser("gpus", help="list the modelled GPUs")
    sub.add_parser("step", help="step one warp through a kernel (see simgpu step --help)",
                   add_help=False)
    return p


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    p = build_parser()
    if argv and argv[0] == "step":
        return cmd_step(None, argv[1:])
    a = p.parse_args(argv)
    if a.cmd is None:
        p.print_help()
        return 0
    try:
        return {"demo": cmd_demo, "run": cmd_run, "gpus": cmd_gpus, "validate": cmd_validate,
                "sanitize": cmd_sanitize, "gemm": cmd_gemm, "attention": cmd_attention,
                "mystery": cmd_mystery}[a.cmd](a)
    except Exception as e:      # noqa: BLE001 - the top level: say it as the user needs it
        if is_user_error(e):    # a SimGPUError, or numba's compile error made readable: the message
            print(f"simgpu: error: {e}", file=sys.stderr)
            return 2
        sys.stderr.write(user_traceback(e))     # from the user's frames on (all, for simgpu's own bugs)
        return 1


if __name__ == "__main__":
    sys.exit(main())
