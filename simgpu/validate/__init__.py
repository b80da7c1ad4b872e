"""Validate on a real GPU: the same kernel under numba.cuda and Nsight Compute, prediction
beside measurement.

    cmp = simgpu.validate.against_gpu(kernel, grid, block, args, gpu="H200", repeat=50, ncu=True)
    print(cmp); cmp.to_json("out.json")
    simgpu.validate.load_ncu_csv(path)          # profiles captured elsewhere
    simgpu.validate.compare(report, metrics)    # the same Comparison
    simgpu.validate.dobench_seconds(report)     # what triton.testing.do_bench's median would read
"""
from __future__ import annotations


import numpy as np

from .compare import Comparison, compare, compare_results
from .ncu import load_ncu_csv, parse_ncu_csv, profile as ncu_profile
from ..hardware import get_gpu
from ..runtime.binding import dim3
from ..runtime.launch import launch
from ..runtime.program import as_program
from .runner import device_available, run_on_gpu


def unprofiled(gpu):
    """The GPU as it runs launches outside a profiler (do_bench, CUPTI / torch.profiler, a
    program timing itself): its SM at ``unprofiled_clock_hz`` (measured with %clock64 against
    time on the card; the H200's 1.794 GHz) instead of the clock under Nsight Compute
    (``clock_hz``, 1.979 GHz), which the timing model's calibration used.  Simulate a launch on
    ``unprofiled(gpu)`` to compare its time with do_bench or CUPTI; the L2 and DRAM keep their
    measured bytes per second.  A GPU without the measurement is returned as it is."""
    g = get_gpu(gpu)
    if not g.unprofiled_clock_hz or g.unprofiled_clock_hz == g.clock_hz:
        return g
    return g.with_(clock_hz=g.unprofiled_clock_hz)


def dobench_seconds(rep, gpu=None):
    """What ``triton.testing.do_bench`` reports (its median) for the launch ``rep`` predicts: the
    predicted kernel time (``gpu__time_duration.sum``) plus do_bench's floor, the GPU's
    ``dobench_floor_ns``: its CUDA events and launch add about 2.3 us to every call, measured on
    the card with launches that do nothing (validation/tensor_cores/lecture/derive_floor.py; 0
    for a GPU without the measurement).  do_bench runs the kernel at the card's unprofiled
    clock: simulate it on ``unprofiled(gpu)``.  Compare a do_bench median with this, a kernel's
    own duration (CUPTI on ``unprofiled(gpu)``, ncu on the GPU itself) with
    ``rep.metrics["gpu__time_duration.sum"]``.

    do_bench zeroes 256 MB before every call (its L2 flush): launch with
    ``memory=simgpu.memory.AfterFlush`` to run the kernel in that state (the L2 full of the
    memset's lines, the newest dirty: a kernel's misses write them back, on the card's DRAM;
    docs/memory.md) -- the state the floor was measured in, with launches that touch no memory.

    A Triton launch with tensor descriptors adds the GPU's ``dobench_host_desc_ns`` per host
    TensorDescriptor and ``dobench_device_desc_ns`` per ``tl.make_tensor_descriptor``
    (``rep.extras["triton_launch"]``), measured with near-empty kernels of 1-4 descriptors
    (derive_floor.py, h100/launch_floor): about 0.1 and 0.5 us each on the H100."""
    g = gpu if gpu is not None else rep.gpu
    if isinstance(g, str):
        g = get_gpu(g)
    d = rep.extras.get("triton_launch") or {}
    floor = (g.dobench_floor_ns + d.get("host_tensor_descriptors", 0) * g.dobench_host_desc_ns
             + d.get("device_tensor_descriptors", 0) * g.dobench_device_desc_ns)
    return rep.metrics["gpu__time_duration.sum"] * 1e-9 + floor * 1e-9


def _copy_args(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def against_gpu(kernel, grid, block, args, gpu="H200", repeat=50, ncu=True, flush_l2=False, **launch_kw):
    """Simulate the launch, run it on the CUDA GPU present (numba.cuda), profile it with ncu
    when available, and return a Comparison.  Never raises for a missing GPU/ncu or a failing
    device run: those become notes in the Comparison."""
    k = as_program(kernel)
    sim_args = _copy_args(args)
    rep = launch(k, grid, block, sim_args, gpu=gpu, **launch_kw)
    notes, measured, results, device = [], {}, [], None
    ok, why = device_available()
    if not ok:
        notes.append("no CUDA device was found" + (f" ({why})" if why else "") +
                     "; showing the prediction only")
        return Comparison(rep, {}, notes=notes)
    g, b = dim3(grid, "grid"), dim3(block, "block")
    run = run_on_gpu(k.py_func, g, b, _copy_args(args), repeat=repeat, flush_l2=flush_l2)
    if not run.get("ok"):
        notes.append(f"the kernel did not run under numba.cuda: {run.get('error')}")
    else:
        device = run.get("device")
        results = compare_results([a for a in sim_args], run["results"])
        measured["gpu__time_duration.sum"] = run["time_ns"]
        notes.append("time: CUDA events, median of 5 batches of back-to-back launches (numba's host "
                     "launch overhead, ~11 us, bounds what short kernels can show)" if not flush_l2 else
                     f"time: CUDA events, median of {repeat} single launches, L2 flushed before each "
                     "(includes the host's launch latency)")
        if "registers_per_thread" in run:
            measured["launch__registers_per_thread"] = float(run["registers_per_thread"])
    if ncu and run.get("ok"):
        m, msg = ncu_profile(k.py_func, g, b, _copy_args(args))
        if m is None:
            notes.append(f"Nsight Compute: {msg}")
        else:
            measured.update({key: v for key, v in m.items() if key not in ("id", "kernel")})
            notes.append("counters and gpu__time_duration.sum from one ncu --clock-control none run "
                         "(caches flushed by ncu); they replace the event time")
    return Comparison(rep, measured, results=results, notes=notes, device=device)


__all__ = ["against_gpu", "Comparison", "compare", "dobench_seconds", "load_ncu_csv", "parse_ncu_csv", "unprofiled"]
