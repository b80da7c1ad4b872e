"""Turn raw microbenchmark results (event timings + ncu metrics) into calibration numbers.

Used by validation/collect_results.py; every number in the summary carries the method that made it.
Inputs per bench name: `time` (run_micro.py --mode time record) and `ncu` (metrics dict from
validation/ncu_csv.py). Times are medians of CUDA-event timings in microseconds; cycles are ncu's
sm__cycles_elapsed.avg (SM clock cycles elapsed during the kernel, averaged over SMs).
"""
import statistics

NSM = 132


def _m(ncu, name, key):
    r = ncu.get(name)
    return None if r is None else r.get(key)


def _t(time, name, mode="flushed"):
    r = time.get(name)
    if not r or "timing" not in r:
        return None
    return r["timing"][mode]["median_us"]


def _clock_ghz(ncu, name):
    c, t = _m(ncu, name, "sm__cycles_elapsed.avg"), _m(ncu, name, "gpu__time_duration.sum")
    return c / t if c and t else None


def granularity(time, ncu, benches):
    rows = []
    for n, b in benches.items():
        if b["group"] != "granularity" or n not in ncu:
            continue
        p = b["params"]
        acc = p["accesses"]
        rd, wr = _m(ncu, n, "dram__bytes_read.sum"), _m(ncu, n, "dram__bytes_write.sum")
        rows.append({"bench": n, "kind": "read" if "read" in n else "write", "stride_bytes": p["stride_bytes"],
                     "accesses": acc, "dram_read_bytes": rd, "dram_write_bytes": wr,
                     "dram_read_bytes_per_access": rd / acc, "dram_write_bytes_per_access": wr / acc,
                     "l1_sectors_per_request": (_m(ncu, n, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") or 0) /
                     max(1.0, _m(ncu, n, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") or 0),
                     "time_us_flushed": _t(time, n)})
    rows.sort(key=lambda r: (r["kind"], r["stride_bytes"]))
    return {"method": "one thread per access reads (or writes) one float32 every `stride` bytes of a 1 GiB buffer "
                      "(L2 flushed by ncu before the kernel); DRAM bytes from ncu dram__bytes_read/write.sum divided "
                      "by the number of accesses",
            "rows": rows}


def l2_sweep(time, ncu, benches):
    rows = []
    for n, b in benches.items():
        if b["group"] != "l2_sweep" or n not in ncu:
            continue
        p = b["params"]
        w, passes = p["working_set_bytes"], p["passes"]
        rd = _m(ncu, n, "dram__bytes_read.sum")
        steady_miss = max(0.0, (rd - w) / (w * (passes - 1)))
        tw = _t(time, n, "warm")
        rows.append({"bench": n, "working_set_MiB": w / 2 ** 20, "passes": passes, "dram_read_bytes": rd,
                     "dram_read_over_working_set": rd / w, "steady_state_miss_fraction": steady_miss,
                     "lts__t_sector_hit_rate.pct": _m(ncu, n, "lts__t_sector_hit_rate.pct"),
                     "GBps_warm_events": w * passes / (tw * 1e-6) / 1e9 if tw else None,
                     "GBps_ncu": w * passes / (_m(ncu, n, "gpu__time_duration.sum") * 1e-9) / 1e9})
    rows.sort(key=lambda r: r["working_set_MiB"])
    fits = [r["working_set_MiB"] for r in rows if r["steady_state_miss_fraction"] < 0.05]
    thrash = [r["working_set_MiB"] for r in rows if r["steady_state_miss_fraction"] > 0.5]
    return {"method": "one kernel reads a W-byte buffer `passes`=10 times (grid-stride, 132*8 blocks of 256, 4 loads "
                      "in flight per thread); ncu flushes L2 before the kernel, so the first pass is cold; steady-state "
                      "miss fraction = (dram_read - W) / (W * (passes - 1))",
            "largest_working_set_that_fits_MiB": max(fits) if fits else None,
            "smallest_working_set_that_thrashes_MiB": min(thrash) if thrash else None,
            "rows": rows,
            "note": "ncu's lts__t_sector_hit_rate.pct is not the plain hit rate of this access pattern on H200 (it reads "
                    "5-30% where DRAM traffic shows ~100% reuse, and >100% for single-thread chases); use DRAM bytes"}


def _chase(time, ncu, prefix, label, S_key="S"):
    out = {}
    for mult_name in list(time) + list(ncu):
        pass
    names = sorted({n[:-3] for n in list(ncu) + list(time) if n.startswith(prefix) and n.endswith("_x1")})
    for base in names:
        n1, n2 = base + "_x1", base + "_x2"
        if n1 not in ncu or n2 not in ncu:
            continue
        S = time.get(n1, {}).get("params", {}).get("S")
        if S is None:
            continue
        c1, c2 = _m(ncu, n1, "sm__cycles_elapsed.avg"), _m(ncu, n2, "sm__cycles_elapsed.avg")
        rec = {"cycles_per_step_ncu": (c2 - c1) / S, "S": S,
               "footprint_bytes": time[n1]["params"].get("footprint_bytes")}
        for mode in ("flushed", "warm"):
            t1, t2 = _t(time, n1, mode), _t(time, n2, mode)
            if t1 and t2:
                rec[f"ns_per_step_events_{mode}"] = (t2 - t1) * 1e3 / S
        rec["clock_GHz_ncu"] = _clock_ghz(ncu, n2)
        out[base[len(prefix):]] = rec
    return out


def latency(time, ncu):
    signed = _chase(time, ncu, "chase_", "int32")
    unsigned = _chase(time, ncu, "chaseu_", "uint32")
    fma = _m(ncu, "fma_f32_latency", "sm__cycles_elapsed.avg")
    dfma = _m(ncu, "fma_f64_latency", "sm__cycles_elapsed.avg")
    n = time.get("fma_f32_latency", {}).get("params", {}).get("chain", 65536)
    fma_lat = fma / n if fma else None
    dfma_lat = dfma / n if dfma else None
    addr = 4.0  # IMAD.WIDE.U32 / IMAD in the dependent chain, taken equal to the measured FMA latency (4 cycles)

    def pick(d, key):
        return d.get(key, {}).get("cycles_per_step_ncu")

    est = {}
    for key, level in (("8KB", "L1 hit"), ("192KB", "L1 hit (192 KiB footprint)"), ("1MB", "L2 hit"),
                       ("4MB", "L2 hit (4 MiB)"), ("16MB", "L2 hit (16 MiB)"), ("128MB", "DRAM (128 MiB random)"),
                       ("1GB", "DRAM (1 GiB random, incl. TLB effects)")):
        v = pick(unsigned, key)
        if v:
            est[level] = {"cycles_per_step": v, "load_latency_cycles": v - addr}
    v = pick(unsigned, "shared")
    if v:
        est["shared memory"] = {"cycles_per_step": v, "load_latency_cycles": v - addr}
    return {
        "method": "single thread pointer chase j = a[j] over a random cyclic permutation of one word per 128-byte "
                  "line (shared: of every word of a 16 KiB array); a warm-up traversal of the whole cycle (footprints "
                  "<= 64 MiB), then S more steps; run with S and 2S steps; cycles per step = difference of ncu "
                  "sm__cycles_elapsed.avg over S (launch and warm-up cancel). 'chaseu' uses uint32 indices: the "
                  "dependent chain per step is LDG/LDS + one IMAD.WIDE.U32 (SASS in data/sass/micro); 'chase' uses "
                  "int32/int64 indices: numba adds a negative-index wrap-around (SHF, LOP3, IADD3, IMAD.X, LEA.HI.X), "
                  "~19.5 cycles more per step. load_latency = cycles_per_step - 4 (the IMAD, taken as the measured FMA "
                  "latency)",
        "estimates": est,
        "uint32_chase": unsigned, "int_chase": signed,
        "fma_f32_dependent_latency_cycles": fma_lat, "fma_f64_dependent_latency_cycles": dfma_lat,
        "note": "footprints of 32 and 48 MiB land between L2 and DRAM latency in the flushed (ncu) runs: after one "
                "warm-up traversal only part of the footprint is still in L2 for a single SM; the event timings "
                "without a flush (previous launches left the data in L2) give L2 latency for 32-48 MiB",
    }


def bandwidth(time, ncu, micro_extra):
    out = {}

    def bw(name, nbytes, mode="flushed"):
        t = _t(time, name, mode)
        if not t:
            return None
        return {"bench": name, "bytes": nbytes, "time_us": t, "GBps": nbytes / (t * 1e-6) / 1e9,
                "time_us_ncu": (_m(ncu, name, "gpu__time_duration.sum") or 0) / 1e3,
                "dram_read_bytes_ncu": _m(ncu, name, "dram__bytes_read.sum"),
                "dram_write_bytes_ncu": _m(ncu, name, "dram__bytes_write.sum")}

    p = lambda n: time.get(n, {}).get("params", {})  # noqa: E731
    out["dram_read"] = bw("dram_read_2GiB", p("dram_read_2GiB").get("bytes_read", 0))
    out["dram_read_8_loads_in_flight"] = bw("dram_read8_2GiB", p("dram_read8_2GiB").get("bytes_read", 0))
    out["dram_write"] = bw("dram_write_2GiB", p("dram_write_2GiB").get("bytes_written", 0))
    pc = p("dram_copy_1GiB")
    out["dram_copy_kernel_read_plus_write"] = bw("dram_copy_1GiB", pc.get("bytes_read", 0) + pc.get("bytes_written", 0))
    out["memcpy_device_to_device_read_plus_write"] = micro_extra.get("memcpy_d2d")
    out["l2_read_16MiB_resident"] = bw("l2_bw_16MB_x100", p("l2_bw_16MB_x100").get("bytes_read", 0), "warm")
    out["l2_read_16MiB_resident_8_loads_in_flight"] = bw("l2_bw8_16MB_x100",
                                                         p("l2_bw8_16MB_x100").get("bytes_read", 0), "warm")
    for k in ("l2_read_16MiB_resident", "l2_read_16MiB_resident_8_loads_in_flight"):
        if out[k]:
            clk = _clock_ghz(ncu, out[k]["bench"]) or 1.98
            out[k]["bytes_per_clk_per_SM"] = out[k]["GBps"] / clk / NSM
            out[k]["bytes_per_clk_total"] = out[k]["GBps"] / clk
    ps = p("smem_bw")
    if ps:
        nbytes = ps["lds_per_thread"] * ps["bytes_per_lds_thread"] * ps["threads"]
        r = bw("smem_bw", nbytes)
        clk = _clock_ghz(ncu, "smem_bw") or 1.98
        r["bytes_per_clk_per_SM"] = r["GBps"] / clk / NSM
        r["shared_wavefronts_ncu"] = _m(ncu, "smem_bw", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
        out["shared_memory"] = r
    out["method"] = ("bytes the kernel must move / median event time (dram: flushed; L2: warm, 16 MiB read 100 times "
                     "in one kernel; shared: 32-bit conflict-free LDS, 8 independent per loop iteration, 1056x256 "
                     "threads); memcpy = numba device-to-device copy of 1 GiB (cuMemcpyDtoD), bytes read + written")
    return out


def issue(time, ncu, benches):
    rows = {}
    for n, b in benches.items():
        if b["group"] != "issue":
            continue
        p = b["params"]
        ops = p["ops_per_thread"] * p["threads"]
        cyc = _m(ncu, n, "sm__cycles_elapsed.avg")
        t = _t(time, n)
        clk = _clock_ghz(ncu, n)
        r = {"ops": ops, "time_us": t, "clock_GHz_ncu": clk,
             "ops_per_clk_per_SM_events": ops / (t * 1e-6 * clk * 1e9) / NSM if t and clk else None,
             "ops_per_clk_per_SM_ncu": ops / cyc / NSM if cyc else None,
             "warp_inst_per_clk_per_SM": (_m(ncu, n, "smsp__inst_executed.sum") or 0) / cyc / NSM if cyc else None}
        for pipe in ("fma", "fmaheavy", "fp64", "alu", "xu", "lsu"):
            v = _m(ncu, n, f"sm__inst_executed_pipe_{pipe}.sum")
            if v:
                r[f"pipe_{pipe}_warp_inst_per_clk_per_SM"] = v / cyc / NSM
        rows[n] = r
    return {"method": "4 full-occupancy waves (4*1056 blocks of 256 threads), 8 independent dependency chains per "
                      "thread, loop trip count a compile-time constant (while loop); ops = thread-level operations "
                      "(FMA counted once; sin/exp = calls); per SM per clock with the SM clock ncu measured for that "
                      "kernel (sm__cycles_elapsed.avg / gpu__time_duration)",
            "rows": rows}


def atomics(time, ncu, benches):
    rows = {}
    for n, b in benches.items():
        if b["group"] != "atomics":
            continue
        p = b["params"]
        t = _t(time, n)
        cyc = _m(ncu, n, "sm__cycles_elapsed.avg")
        rows[n] = {"atomics": p["atomics"], "addresses": p["addresses"], "time_us": t,
                   "G_atomics_per_s": p["atomics"] / (t * 1e-6) / 1e9 if t else None,
                   "atomics_per_clk_gpu": p["atomics"] / cyc if cyc else None,
                   "lts_sectors_op_red": _m(ncu, n, "lts__t_sectors_op_red.sum"),
                   "lts_sectors_op_atom": _m(ncu, n, "lts__t_sectors_op_atom.sum")}
    return {"method": "1056 blocks x 256 threads x 4 atomic adds (no return value used -> REDG); time = median "
                      "event time", "rows": rows,
            "note": "the uint32 add of a constant 1 to one address is warp-aggregated by the compiler (VOTEU.ANY + "
                    "UFLO + POPC, one REDG per warp); float32 adds are not"}


def launch(time, ncu):
    out = {}
    for n in ("empty_kernel", "empty_kernel_1056x256"):
        r = time.get(n)
        if not r:
            continue
        out[n] = {"gpu__time_duration_ns_ncu": _m(ncu, n, "gpu__time_duration.sum"),
                  "events_single_launch_us": _t(time, n),
                  **{k: v.get("median_us") for k, v in r.get("launch_overhead", {}).items()}}
    out["method"] = ("empty kernel (no arguments): ncu gpu__time_duration; event pair around one launch that is "
                     "enqueued behind a 1-warp spin kernel (so host submission is hidden); back-to-back launches "
                     "between two events (per launch, includes numba's host dispatch); host wall clock per launch call")
    return out


def clocks(ncu, smi_rows):
    vals = [r["metrics"].get("sm__cycles_elapsed.avg") / r["metrics"].get("gpu__time_duration.sum")
            for r in ncu.values() if r["metrics"].get("gpu__time_duration.sum")
            and r["metrics"].get("gpu__time_duration.sum") > 20000 and r["metrics"].get("sm__cycles_elapsed.avg")]
    out = {"method": "SM clock = sm__cycles_elapsed.avg / gpu__time_duration.sum for every profiled kernel longer "
                     "than 20 us (ncu --clock-control none: the clock the card chose), and nvidia-smi samples every "
                     "0.5 s during the runs",
           "ncu_sm_clock_GHz": {"median": statistics.median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}
           if vals else None}
    if smi_rows:
        sm = [r[0] for r in smi_rows]
        busy = [r[0] for r in smi_rows if r[1] > 0]
        out["nvidia_smi_sm_clock_MHz"] = {"all_median": statistics.median(sm), "min": min(sm), "max": max(sm),
                                          "busy_median": statistics.median(busy) if busy else None,
                                          "busy_min": min(busy) if busy else None, "n": len(sm)}
        out["nvidia_smi_mem_clock_MHz"] = statistics.median(r[2] for r in smi_rows)
    return out


def analyze(time_benches, ncu_cases, micro_extra, smi_rows):
    ncu = {n: r["metrics"] for n, r in ncu_cases.items()}
    benches = {n: {"group": r["group"], "params": r["params"]} for n, r in time_benches.items()}
    return {
        "granularity": granularity(time_benches, ncu, benches),
        "l2": l2_sweep(time_benches, ncu, benches),
        "writeback": {
            "method": "write an 8 MiB buffer 10 times in one kernel (80 MiB of stores), read dram__bytes_write.sum",
            "dram_write_bytes": _m(ncu, "writeback_8MB_x10", "dram__bytes_write.sum"),
            "bytes_stored": 80 * 2 ** 20,
            "dram_write_bytes_2GiB_write": _m(ncu, "dram_write_2GiB", "dram__bytes_write.sum")},
        "latency": latency(time_benches, ncu),
        "bandwidth": bandwidth(time_benches, ncu, micro_extra),
        "issue": issue(time_benches, ncu, benches),
        "atomics": atomics(time_benches, ncu, benches),
        "launch": launch(time_benches, ncu),
        "clock": clocks(ncu_cases, smi_rows),
    }
