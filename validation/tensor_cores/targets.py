"""Issue 27's targets over all its kernels: one H100 run of every case against simgpu (no device call).

The card (targets/h100/, 2026-12-07, NVIDIA H100 80GB HBM3, driver 580.159.04, Triton 3.6.0,
torch 2.11.0+cu130, CUDA 13.0, Nsight Compute 2025.3.1): ``targets_device.sh`` ran every case of
``targets_cases.py`` with do_bench (median), CUPTI (torch.profiler) and registers
(``targets_card_time.json``), then once each under ncu (``--clock-control none``:
smsp__inst_executed.sum, gpu__time_duration.sum, registers, SM clock; ``ncu.csv``,
``targets_card_ncu.json``); both runs hold the sha256 of every output array.

simgpu (``targets_sim.py`` -> ``targets_sim.json``): the same launches, same inputs, on
``simgpu.validate.unprofiled("H100")`` (the H100's SM clock outside a profiler, 1.83 GHz:
clock/derive_h100.py), Triton 3.6.0 as on the card (its own ptxas, as its JIT on the card).

Per case: outputs (sha256 equal or not), registers (simgpu / card), smsp__inst_executed ratio
(simgpu / ncu), do_bench median (simgpu's ``dobench_seconds`` / the card's: the issue's time
target), and simgpu's kernel time (gpu__time_duration, on the unprofiled clock) against CUPTI's
duration and against ncu's gpu__time_duration (ncu's adds about 1.5-2 us of launch to CUPTI's on
short kernels; ncu ran at its own clock, 1.56-1.98 GHz, sm__cycles_elapsed.avg.per_second).  Writes ``targets.json``; ``--markdown`` prints
the tables (docs/triton.md, "Issue 27's targets over all its kernels").  Run:
``python targets.py [--markdown]`` (json and csv only)."""
import csv
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CARD = os.path.join(HERE, "targets", "h100")

# the issue's kernels (section "Targets") and the cases that stand for each; the rest of the
# cases (small sm_90a matmuls, the lecture matmul at 512^3, the TMA matmul) are reported too
ISSUE_KERNELS = [
    ("vector add", lambda n: n.startswith("add_")),
    ("fused softmax (incl. width 781)", lambda n: n.startswith("softmax_")),
    ("fp16 matmul 1024^3", lambda n: n == "lecture_1024x1024x1024"),
    ("fp16 matmul 2048^3", lambda n: n == "lecture_2048x2048x2048"),
    ("fp16 matmul 4096^3", lambda n: n == "lecture_4096x4096x4096"),
    ("fp16 matmul 1000x1500x700 (unaligned)", lambda n: n == "lecture_1000x1500x700"),
    ("FA-2 forward, causal", lambda n: n.startswith("fa_") and n.endswith("causal")),
    ("FA-2 forward, not causal", lambda n: n.startswith("fa_") and not n.endswith("causal")),
    ("CUDA C, mma.sync", lambda n: n.startswith("mma_sync_")),
    ("CUDA C, wgmma + TMA", lambda n: n.startswith("wgmma_tma_")),
]


def _load(*p):
    path = os.path.join(*p)
    return json.load(open(path)) if os.path.exists(path) else None


def ncu_rows(path):
    """ncu's raw CSV: one dict a profiled launch, in launch order (its units row dropped)."""
    lines = open(path).read().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.DictReader(lines[start:]))
    metrics = ("smsp__inst_executed.sum", "gpu__time_duration.sum", "launch__registers_per_thread",
               "sm__cycles_elapsed.avg.per_second", "launch__grid_size")
    return [{**r, **{m: float(r[m].replace(",", "")) for m in metrics}} for r in rows[1:]]


EXCESS = os.path.join(HERE, "lecture", "h100", "dobench_excess", "dobench_excess.json")
# later card runs of the same cases on the same card type (H100 80GB HBM3, Triton 3.6.0)
CARD2 = os.path.join(HERE, "targets", "h100_20261208")              # targets_device.sh again, 2026-12-08 00:31 UTC
CUDA_C2 = os.path.join(HERE, "cuda_c", "h100_20261208")             # wgmma_tma_device.sh again, 00:32 UTC
STATE = os.path.join(HERE, "lecture", "h100", "dobench_state", "dobench_state.json")  # 3 do_bench rounds, 00:33 UTC


def card_dobench_runs():
    """{case: [(run, do_bench median us), ...]}: every do_bench the card gave for a case -- the
    targets run, the second run (dobench_excess, 9 cases), the 2026-12-08 targets run and
    dobench_state_device.py's three rounds (each a do_bench median of its own)."""
    runs = {}

    def add(case, run, us):
        if us:
            runs.setdefault(case, []).append((run, float(us)))
    for folder, prefix, run in ((CARD, "targets_card", "targets 12-07"),
                                (os.path.join(HERE, "cuda_c", "h100"), "wgmma_tma_card", "targets 12-07"),
                                (CARD2, "targets_card", "targets 12-08"), (CUDA_C2, "wgmma_tma_card", "targets 12-08")):
        t = _load(folder, f"{prefix}_time.json")
        for case, c in ((t or {}).get("cases") or {}).items():
            add(case, run, c.get("dobench_median_us"))
    for case, v in second_run().items():
        add(case, "second 12-07", v[0])
    st = _load(STATE) or {}
    for case, rounds in (st.get("rounds") or {}).items():
        for i, r in enumerate(rounds):
            add(case, f"state 12-08 round {i}", r.get("dobench_median_us"))
    return runs


def card_repeat(folder, prefix, first):
    """The 2026-12-08 run against the 12-07 one: same registers, instructions and output
    sha256 per case (the card is deterministic there), or the differences."""
    t2, n2 = _load(folder, f"{prefix}_time.json"), _load(folder, f"{prefix}_ncu.json")
    if t2 is None or n2 is None or not os.path.exists(os.path.join(folder, "ncu.csv")):
        return None
    ncu2 = ncu_rows(os.path.join(folder, "ncu.csv"))
    names = [n for n, c in n2["cases"].items() if "error" not in c]
    inst2 = {n: r["smsp__inst_executed.sum"] for n, r in zip(names, ncu2)}
    out = {"date": t2["date"], "gpu": t2["gpu"], "cases": 0, "same_registers": 0, "same_inst": 0,
           "same_outputs": 0, "differ": {}}
    for r in first:
        name = r["case"]
        c2 = t2["cases"].get(name)
        if c2 is None or name not in inst2:
            continue
        out["cases"] += 1
        diffs = []
        if int(c2["n_regs"]) == int(r["registers"][1]):
            out["same_registers"] += 1
        else:
            diffs.append("registers")
        if inst2[name] == r["inst"][1]:
            out["same_inst"] += 1
        else:
            diffs.append(f"inst {inst2[name] / r['inst'][1]:.4f}")
        if all(c2.get(k) == r["card_sha256"].get(k) for k in r["card_sha256"]):
            out["same_outputs"] += 1
        else:
            diffs.append("outputs")
        if diffs:
            out["differ"][name] = diffs
    return out


def second_run():
    """The same card type's second do_bench run of 9 cases (dobench_excess_device.py, 19:06 UTC):
    {case: (do_bench median, the kernel's CUPTI median inside do_bench, warm CUPTI median)}."""
    d = _load(EXCESS)
    out = {}
    for name, c in (d or {}).get("cases", {}).items():
        k = next((k for k in c.get("d_cupti_warm", {})), None)
        if k is not None and "a_dobench_us" in c:
            out[name] = (c["a_dobench_us"], c["b_cupti_in_dobench"][k]["median_us"], c["d_cupti_warm"][k])
    return out


def card_rows(folder, prefix, sim):
    """Rows of one card run in ``folder``: {prefix}_time.json, {prefix}_ncu.json, ncu.csv."""
    time_ = _load(folder, f"{prefix}_time.json")
    ncu_js = _load(folder, f"{prefix}_ncu.json")
    if time_ is None or ncu_js is None or not os.path.exists(os.path.join(folder, "ncu.csv")):
        return []
    ncu = ncu_rows(os.path.join(folder, "ncu.csv"))
    again = second_run()
    names = [n for n, c in ncu_js["cases"].items() if "error" not in c]   # ncu profiled one launch a case, in order
    assert len(ncu) == len(names), (folder, len(ncu), len(names))
    out = []
    for name, prof in zip(names, ncu):
        card, s = time_["cases"][name], sim["cases"].get(name)
        k = next(iter(card["cupti_us"]))
        assert prof["Kernel Name"] == k, (name, prof["Kernel Name"], k)
        shas = sorted(x for x in card if x.endswith("_sha256"))
        out.append({"case": name, "kernel": k, "card": "H100" if "H100" in time_["gpu"] else time_["gpu"],
                    "date": time_["date"][:10], "issue_kernel": next((ik for ik, f in ISSUE_KERNELS if f(name)), None),
                    "grid": int(prof["launch__grid_size"]), "card_sm_clock_ncu_hz": prof["sm__cycles_elapsed.avg.per_second"],
                    "registers": (s and s["registers"], card["n_regs"]), "registers_ncu": prof["launch__registers_per_thread"],
                    "inst": (s and s["smsp__inst_executed.sum"], prof["smsp__inst_executed.sum"]),
                    "dobench_us": (s and s["dobench_us"], card["dobench_median_us"]),
                    # before the post-flush state (the kernel as ncu sees it + the floor)
                    "dobench_cold_us": (s and s.get("dobench_cold_us"), card["dobench_median_us"]),
                    # the second run's do_bench and the kernel's CUPTI duration inside do_bench
                    "dobench_second_us": (s and s["dobench_us"], again[name][0]) if name in again else (None, None),
                    "kernel_in_dobench_us": (s and s.get("kernel_after_flush_us"), again[name][1]) if name in again else (None, None),
                    "kernel_us": (s and s["kernel_us"], card["cupti_us"][k]),
                    "ncu_duration_us": (s and s["kernel_us"], prof["gpu__time_duration.sum"] / 1e3),
                    "card_sha256": {x: card[x] for x in shas},
                    "outputs": None if s is None else
                    {x: s.get(x) == card[x] == ncu_js["cases"][name][x] for x in shas}})
    return out


def rows():
    """Every case of targets/h100 (targets_device.sh) and, once run, cuda_c/h100
    (cuda_c/wgmma_tma_device.sh); then the simulated cases no card has run."""
    sim = _load(HERE, "targets_sim.json") or {"cases": {}}
    out = card_rows(CARD, "targets_card", sim) + card_rows(os.path.join(HERE, "cuda_c", "h100"), "wgmma_tma_card", sim)
    runs = card_dobench_runs()
    for r in out:       # every do_bench the card gave for the case, and their median: the reference
        got = runs.get(r["case"], [])
        r["card_dobench_runs_us"] = got
        r["dobench_card_median_us"] = (r["dobench_us"][0], statistics.median(us for _, us in got) if got else None)
    names = {r["case"] for r in out}
    for name, s in sim["cases"].items():          # simulated, not measured on the card
        if name in names:
            continue
        out.append({"case": name, "kernel": None, "card": None, "date": None,
                    "issue_kernel": next((ik for ik, f in ISSUE_KERNELS if f(name)), None),
                    "registers": (s["registers"], None), "inst": (s["smsp__inst_executed.sum"], None),
                    "dobench_us": (s["dobench_us"], None), "dobench_cold_us": (s.get("dobench_cold_us"), None),
                    "dobench_second_us": (None, None), "kernel_in_dobench_us": (None, None), "kernel_us": (s["kernel_us"], None),
                    "dobench_card_median_us": (s["dobench_us"], None), "card_dobench_runs_us": [],
                    "ncu_duration_us": (s["kernel_us"], None), "outputs": None})
    return out


def _ratio(pair):
    s, c = pair
    return None if s is None or not c else s / c


def _err(pair):
    q = _ratio(pair)
    return None if q is None else abs(q - 1)


def _factor(pair):
    q = _ratio(pair)
    return None if q is None else max(q, 1 / q)


def aggregate(rs):
    sim = [r for r in rs if r["inst"][0] is not None and r["card"] is not None]
    inst = {r["case"]: _ratio(r["inst"]) for r in sim}
    within = [n for n, q in inst.items() if abs(q - 1) <= 0.10]
    regs = [r for r in sim if r["registers"][0] is not None]
    outs = [r for r in sim if r["outputs"] is not None]
    per = {}
    for ik, _ in ISSUE_KERNELS:
        v = [r for r in sim if r["issue_kernel"] == ik]
        if v:
            per[ik] = {"launches": len(v), "dobench_error": statistics.median(_err(r["dobench_us"]) for r in v),
                       "cupti_error": statistics.median(_err(r["kernel_us"]) for r in v),
                       "ncu_duration_error": statistics.median(_err(r["ncu_duration_us"]) for r in v),
                       "inst_within_10pct": sum(r["case"] in within for r in v)}

    def timing(sel, key):
        v = [r for r in sim if sel(r) and r[key][0] is not None and r[key][1]]
        if not v:
            return None
        f = [_factor(r[key]) for r in v]
        return {"launches": len(v), "median_error": statistics.median(_err(r[key]) for r in v),
                "max_factor": max(f), "beyond_2x": [r["case"] for r in v if _factor(r[key]) > 2]}
    return {
        "outputs": {"compared": len(outs), "bit_identical": [r["case"] for r in outs if all(r["outputs"].values())],
                    "sha256_differs": [r["case"] for r in outs if not all(r["outputs"].values())]},
        "registers": {"compared": len(regs), "equal": sum(int(r["registers"][0]) == int(r["registers"][1]) for r in regs),
                      "differ": [r["case"] for r in regs if int(r["registers"][0]) != int(r["registers"][1])]},
        "inst_executed": {"launches": len(inst), "within_10pct": len(within),
                          "fraction_within_10pct": len(within) / len(inst) if inst else None,
                          "exact": sum(r["inst"][0] == r["inst"][1] for r in sim),
                          "outside_10pct": {n: q for n, q in inst.items() if n not in within}},
        "time_dobench_all": timing(lambda r: True, "dobench_us"),
        "time_dobench_issue_kernels": timing(lambda r: r["issue_kernel"], "dobench_us"),
        # the 19 launches judged first (the issue's kernels but the CUDA C wgmma + TMA GEMM)
        "time_dobench_issue_kernels_19": timing(lambda r: r["issue_kernel"] and not r["case"].startswith("wgmma_tma_"),
                                                "dobench_us"),
        "time_dobench_cold_issue_kernels_19": timing(lambda r: r["issue_kernel"] and not r["case"].startswith("wgmma_tma_"),
                                                     "dobench_cold_us"),
        "time_dobench_cold_issue_kernels": timing(lambda r: r["issue_kernel"], "dobench_cold_us"),
        "time_dobench_second_run": timing(lambda r: True, "dobench_second_us"),
        # against the median of every do_bench the card gave for the case (2-6 runs, 12-07 and 12-08)
        "time_dobench_card_median_issue_kernels_19": timing(
            lambda r: r["issue_kernel"] and not r["case"].startswith("wgmma_tma_"), "dobench_card_median_us"),
        "time_dobench_card_median_issue_kernels": timing(lambda r: r["issue_kernel"], "dobench_card_median_us"),
        "time_dobench_card_median_all": timing(lambda r: True, "dobench_card_median_us"),
        # the card against itself: each case's largest / smallest do_bench over its runs
        "card_dobench_spread": {r["case"]: round(max(u for _, u in r["card_dobench_runs_us"])
                                                 / min(u for _, u in r["card_dobench_runs_us"]), 3)
                                for r in sim if len(r["card_dobench_runs_us"]) > 1},
        "time_dobench_targets_run_same_cases": timing(lambda r: r["dobench_second_us"][1] is not None, "dobench_us"),
        "time_kernel_in_dobench": timing(lambda r: True, "kernel_in_dobench_us"),
        "time_cupti_all": timing(lambda r: True, "kernel_us"),
        "time_ncu_duration_all": timing(lambda r: True, "ncu_duration_us"),
        "time_cupti_issue_kernels": timing(lambda r: r["issue_kernel"], "kernel_us"),
        "per_issue_kernel": per,
        "per_issue_kernel_median_dobench_error": statistics.median(v["dobench_error"] for v in per.values()) if per else None,
        "per_issue_kernel_median_cupti_error": statistics.median(v["cupti_error"] for v in per.values()) if per else None,
        "per_issue_kernel_median_ncu_duration_error": statistics.median(v["ncu_duration_error"] for v in per.values()) if per else None,
        "issue_kernels_without_card_data": [ik for ik, f in ISSUE_KERNELS
                                            if not any(f(r["case"]) and r["card"] for r in rs)],
        "simulated_not_measured": [r["case"] for r in rs if r["card"] is None],
        "cases_not_simulated": [r["case"] for r in rs if r["inst"][0] is None],
    }


def markdown(rs):
    L = ["| case | kernel (issue's) | outputs (sha256) | registers simgpu / card | smsp__inst_executed simgpu / ncu | ratio | "
         "do_bench us simgpu / card | ratio | kernel us simgpu / CUPTI | ratio | simgpu / ncu duration | ratio |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rs:
        s_reg, c_reg = r["registers"]
        if r["card"] is None:
            L.append(f"| {r['case']} | {r['issue_kernel'] or '(extra)'} | not run on a card | {int(s_reg)} / - | "
                     f"{r['inst'][0]:,.0f} / - | - | {r['dobench_us'][0]:.2f} / - | - | {r['kernel_us'][0]:.2f} / - | - | - | - |")
            continue
        o = "-" if r["outputs"] is None else ("identical" if all(r["outputs"].values()) else
                                              "differs: " + ", ".join(k[:4] for k, v in r["outputs"].items() if not v))
        f = lambda p, d=2: "-" if p[0] is None else f"{p[0]:,.{d}f} / {p[1]:,.{d}f}"   # noqa: E731
        q = lambda p: "-" if _ratio(p) is None else f"{_ratio(p):.3f}"                   # noqa: E731
        L.append(f"| {r['case']} | {r['issue_kernel'] or '(extra)'} | {o} | "
                 f"{'-' if s_reg is None else int(s_reg)} / {int(c_reg)} | {f(r['inst'], 0)} | {q(r['inst'])} | "
                 f"{f(r['dobench_us'])} | {q(r['dobench_us'])} | {f(r['kernel_us'])} | {q(r['kernel_us'])} | "
                 f"{f(r['ncu_duration_us'])} | {q(r['ncu_duration_us'])} |")
    return "\n".join(L)


def main():
    rs = rows()
    agg = aggregate(rs)
    first = [r for r in rs if r["card"] is not None]
    agg["repeat_12_08"] = {"targets": card_repeat(CARD2, "targets_card", first),
                           "cuda_c": card_repeat(CUDA_C2, "wgmma_tma_card", first)}
    json.dump({"card": "H100 80GB HBM3, 2026-12-07 (targets/h100); do_bench also 2026-12-08 (targets/h100_20261208, "
                       "lecture/h100/dobench_state)", "simgpu": (_load(HERE, "targets_sim.json") or {}).get("here"),
               "rows": rs, "aggregate": agg}, open(os.path.join(HERE, "targets.json"), "w"), indent=1)
    if "--markdown" in sys.argv:
        print(markdown(rs))
    print(json.dumps(agg, indent=1))


if __name__ == "__main__":
    main()
