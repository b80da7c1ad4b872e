#!/usr/bin/env python3
"""ncu metric lists for the suite and the microbenchmarks, and a validator that drops metrics
this ncu refuses.

  python3 validation/ncu_metrics.py --ncu NCU --query QUERY.txt --target "CMD" --out DIR
    writes DIR/metrics_suite.txt and DIR/metrics_micro.txt (comma-separated, accepted metrics only)
    and DIR/metrics_check.json (what was requested, accepted, refused, and how it was decided).

QUERY.txt is the output of `ncu --query-metrics` for the device; the warp stall metrics are chosen
from it. The target command is any short CUDA program (one kernel launch suffices).
"""
import argparse
import json
import os
import re
import subprocess

SUITE = [
    "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_sector_hit_rate.pct",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "smsp__inst_executed.sum", "smsp__thread_inst_executed.sum",
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg",
    "sm__warps_active.avg.pct_of_peak_sustained_active", "sm__maximum_warps_per_active_cycle_pct",
    "launch__waves_per_multiprocessor", "launch__occupancy_limit_blocks", "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps", "launch__registers_per_thread",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    "smsp__cycles_active.avg", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    # extras that help calibration (cheap: same counter domains)
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
    "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_red.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__cycles_active.avg", "smsp__warps_launched.sum", "launch__block_size", "launch__grid_size",
    "launch__shared_mem_per_block_static", "launch__occupancy_per_block_size",
    "sm__inst_executed_pipe_lsu.sum", "smsp__sass_inst_executed_op_global_ld.sum",
    "smsp__sass_inst_executed_op_global_st.sum", "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
]

MICRO = [
    "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "lts__t_sector_hit_rate.pct",
    "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
    "l1tex__t_sector_hit_rate.pct", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg", "sm__cycles_elapsed.max", "smsp__cycles_active.avg",
    "sm__cycles_active.avg", "gpc__cycles_elapsed.max", "dram__cycles_elapsed.avg", "lts__cycles_elapsed.avg",
    "smsp__inst_executed.sum", "sm__inst_executed_pipe_fma.sum", "sm__inst_executed_pipe_fmaheavy.sum",
    "sm__inst_executed_pipe_fp64.sum", "sm__inst_executed_pipe_alu.sum", "sm__inst_executed_pipe_xu.sum",
    "sm__inst_executed_pipe_lsu.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "lts__t_sectors_op_atom.sum", "lts__t_sectors_op_red.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed", "launch__registers_per_thread",
    "launch__waves_per_multiprocessor", "sm__warps_active.avg.pct_of_peak_sustained_active",
]


def stall_metrics(query_text):
    """Warp-stall metrics this ncu offers: per reason, the 'warps stalled per issue' ratio (what the
    Warp State Statistics section shows) and, if offered, the average latency ratio."""
    names = set(re.findall(r"^\s*(smsp__\w+)", query_text, re.M))
    out = []
    for n in sorted(names):
        if re.fullmatch(r"smsp__average_warps_issue_stalled_\w+_per_issue_active", n):
            out.append(n + ".ratio")
    for n in sorted(names):
        if re.fullmatch(r"smsp__average_warp_latency_issue_stalled_\w+", n):
            out.append(n + ".ratio")
    if not out:  # fall back to the raw per-reason counters
        for n in sorted(names):
            if re.fullmatch(r"smsp__warps_issue_stalled_\w+", n) and not n.endswith("_not_issued"):
                out.append(n + ".sum")
    return out


class Checker:
    def __init__(self, ncu, target, log):
        self.ncu, self.target, self.log, self.calls = ncu, target, log, 0

    def ok(self, metrics):
        self.calls += 1
        cmd = [self.ncu, "--clock-control", "none", "--csv", "--page", "raw", "--metrics", ",".join(metrics),
               "--launch-count", "1"] + self.target
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        txt = r.stdout + r.stderr
        bad_lines = [l for l in txt.splitlines() if "==ERROR==" in l]
        good = r.returncode == 0 and not bad_lines
        self.log.append({"n": len(metrics), "rc": r.returncode, "errors": bad_lines[:5]})
        return good, txt

    def refused(self, metrics):
        """Returns the metrics that make ncu fail: first by name in its error output, then by bisection."""
        good, txt = self.ok(metrics)
        if good:
            return []
        named = [m for m in metrics if re.search(re.escape(m.split(".")[0]) + r"\b", " ".join(
            l for l in txt.splitlines() if "ERROR" in l or "not found" in l.lower() or "invalid" in l.lower()))]
        if named:
            rest = [m for m in metrics if m not in named]
            return named + (self.refused(rest) if rest else [])
        if len(metrics) == 1:
            return list(metrics)
        h = len(metrics) // 2
        return self.refused(metrics[:h]) + self.refused(metrics[h:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ncu", required=True)
    ap.add_argument("--query", required=True)
    ap.add_argument("--target", required=True, help="command line of a tiny CUDA program")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    q = open(a.query).read() if os.path.exists(a.query) else ""
    stalls = stall_metrics(q)
    log = []
    ck = Checker(a.ncu, a.target.split(), log)
    res = {"stall_metrics_from_query": stalls}
    good, txt = ck.ok(["gpu__time_duration.sum"])
    if not good:
        res["fatal"] = "ncu cannot profile even gpu__time_duration.sum: " + txt[-2000:]
        with open(os.path.join(a.out, "metrics_check.json"), "w") as f:
            json.dump(res, f, indent=1)
        print(res["fatal"], flush=True)
        raise SystemExit(2)
    for label, lst in (("suite", SUITE + stalls), ("micro", MICRO)):
        lst = list(dict.fromkeys(lst))
        bad = ck.refused(lst)
        acc = [m for m in lst if m not in bad]
        res[label] = {"requested": lst, "refused": bad, "accepted": acc}
        with open(os.path.join(a.out, f"metrics_{label}.txt"), "w") as f:
            f.write(",".join(acc))
        print(f"{label}: {len(acc)} accepted, refused: {bad}", flush=True)
    res["ncu_calls"] = ck.calls
    res["log"] = log
    with open(os.path.join(a.out, "metrics_check.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
