"""What the memory model puts in the Report: metrics, per-line counters, bytes_by_level and
the "Memory" section printed by print(rep)."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from . import counters as C
from .lines import SourceLines
from ..units import human_bytes


def _pct(a, b):
    return 100.0 * a / b if b else 0.0


def levels(t, sector_bytes, red=None):
    """bytes_by_level: the per-level table as data (t: the totals row; red: the rows of the
    atomics compiled to RED, shown apart from the other atomics)."""
    t = [int(x) for x in t]
    red = [int(x) for x in red] if red is not None else [0] * C.N_COUNTERS
    atom = [a - b for a, b in zip(t, red)]
    sb = sector_bytes

    def gl(req, sect, nbytes, hit, t=t):
        return {"requests": t[req], "sectors": t[sect], "bytes": t[sect] * sb,
                "bytes_requested": t[nbytes], "sectors_per_request": t[sect] / t[req] if t[req] else 0.0,
                "hit_rate_pct": _pct(t[hit], t[sect]) if hit is not None else 0.0}

    def sh(req, wf, ideal, nbytes):
        return {"requests": t[req], "wavefronts": t[wf], "ideal_wavefronts": t[ideal],
                "bank_conflicts": t[wf] - t[ideal], "bytes": t[nbytes]}

    def l2(req, sect, hit):
        return {"requests": t[req], "sectors": t[sect], "bytes": t[sect] * sb,
                "hit_rate_pct": _pct(t[hit], t[sect])}

    shared = {"ld": sh(C.SLD_REQ, C.SLD_WF, C.SLD_IDEAL, C.SLD_BYTES),
              "st": sh(C.SST_REQ, C.SST_WF, C.SST_IDEAL, C.SST_BYTES),
              "atom": sh(C.SAT_REQ, C.SAT_WF, C.SAT_IDEAL, C.SAT_BYTES)}
    shared["bytes"] = sum(v["bytes"] for v in shared.values())
    l1 = {"global_ld": gl(C.GLD_REQ, C.GLD_SECT, C.GLD_BYTES, C.GLD_HIT),
          "global_st": gl(C.GST_REQ, C.GST_SECT, C.GST_BYTES, C.GST_HIT),
          "global_atom": gl(C.GAT_REQ, C.GAT_SECT, C.GAT_BYTES, None, atom),
          "global_red": gl(C.GAT_REQ, C.GAT_SECT, C.GAT_BYTES, None, red),
          "local_ld": gl(C.LLD_REQ, C.LLD_SECT, C.LLD_BYTES, C.LLD_HIT),
          "local_st": gl(C.LST_REQ, C.LST_SECT, C.LST_BYTES, C.LST_HIT)}
    sect = sum(v["sectors"] for v in l1.values())
    hits = t[C.GLD_HIT] + t[C.GST_HIT] + t[C.LLD_HIT] + t[C.LST_HIT]
    l1.update(bytes=sect * sb, hit_rate_pct=_pct(hits, sect))
    l2d = {"read": l2(C.L2_RD_REQ, C.L2_RD, C.L2_RD_HIT), "write": l2(C.L2_WR_REQ, C.L2_WR, C.L2_WR_HIT),
           "atom": l2(C.L2_AT_REQ, C.L2_AT, C.L2_AT_HIT)}
    l2s = t[C.L2_RD] + t[C.L2_WR] + t[C.L2_AT]
    l2d.update(bytes=l2s * sb, tag_bytes=C.l2_tag_sectors(t, sb) * sb,
               hit_rate_pct=_pct(t[C.L2_RD_HIT] + t[C.L2_WR_HIT] + t[C.L2_AT_HIT], l2s))
    dram = {"read_bytes": t[C.DRAM_RD], "write_bytes": t[C.DRAM_WR], "bytes": t[C.DRAM_RD] + t[C.DRAM_WR],
            "dirty_bytes_in_l2_at_end": t[C.DIRTY_END]}
    const = {"requests": t[C.CLD_REQ], "serialized_accesses": t[C.CLD_WF], "bytes": t[C.CLD_BYTES]}
    return {"shared": shared, "L1": l1, "L2": l2d, "DRAM": dram, "const": const}


def _n(v):
    return f"{v:,}" if isinstance(v, int) else f"{v:,.2f}"


def _b(n):
    return human_bytes(n)


def section(rep):
    """The "Memory" section of print(rep): one row per level and operation that moved bytes."""
    lv = rep.bytes_by_level
    ex = rep.extras.get("memory", {})
    head = (f"  {'level':<10}{'op':<7}{'requests':>13}{'sectors':>14}{'wavefronts':>12}{'/req':>7}{'bytes':>13}"
            f"{'useful':>8}{'hit rate':>10}")
    rows = ["Memory (bytes moved at each level; requests: one per warp instruction; sectors: 32 bytes; "
            "useful: bytes the lanes asked for / bytes moved; see docs/memory.md)", head]
    shared_bytes = False
    for op in ("ld", "st", "atom"):
        r = lv["shared"][op]
        if r["requests"]:
            rows.append(f"  {'shared':<10}{op:<7}{_n(r['requests']):>13}{'':>14}{_n(r['wavefronts']):>12}"
                        f"{r['wavefronts'] / r['requests']:>7.2f}{_b(r['bytes']):>13}{'':>8}{'':>10}"
                        f"   {_n(r['bank_conflicts'])} bank conflicts")
    for key, name, op in (("global_ld", "L1", "ld"), ("global_st", "L1", "st"), ("global_atom", "L1", "atom"),
                          ("global_red", "L1", "red"),
                          ("local_ld", "L1 local", "ld"), ("local_st", "L1 local", "st")):
        r = lv["L1"][key]
        if r["requests"]:
            hit = "" if op in ("atom", "red") else f"{r['hit_rate_pct']:.1f} %"
            useful = _pct(r['bytes_requested'], r['bytes'])
            shared_bytes |= useful > 100.5
            rows.append(f"  {name:<10}{op:<7}{_n(r['requests']):>13}{_n(r['sectors']):>14}{'':>12}"
                        f"{r['sectors_per_request']:>7.2f}{_b(r['bytes']):>13}"
                        f"{useful:>7.0f}%{hit:>10}" + ("   lanes share bytes (see below)" if useful > 100.5 else ""))
    for op in ("read", "write", "atom"):
        r = lv["L2"][op]
        if r["sectors"]:
            rows.append(f"  {'L2':<10}{op:<7}{_n(r['requests']):>13}{_n(r['sectors']):>14}{'':>12}"
                        f"{r['sectors'] / r['requests']:>7.2f}{_b(r['bytes']):>13}{'':>8}{r['hit_rate_pct']:>8.1f} %")
    if lv["L2"]["bytes"]:
        rows.append(f"  {'L2':<10}{'all':<7}{'':>13}{'':>14}{'':>12}{'':>7}{_b(lv['L2']['tag_bytes']):>13}"
                    f"   look-ups in both L2 partitions (lts__t_bytes)")
    d = lv["DRAM"]
    rows.append(f"  {'HBM':<10}{'read':<7}{'':>13}{'':>14}{'':>12}{'':>7}{_b(d['read_bytes']):>13}")
    rows.append(f"  {'HBM':<10}{'write':<7}{'':>13}{'':>14}{'':>12}{'':>7}{_b(d['write_bytes']):>13}"
                f"   + {_b(d['dirty_bytes_in_l2_at_end'])} still dirty in L2 at the end")
    if shared_bytes:
        rows.append("  useful over 100 %: lanes of a warp read the same bytes (e.g. all of them A[row, k]); each "
                    "lane's bytes count, a sector moves once for all of them")
    c = lv["const"]
    if c["requests"]:
        rows.append(f"  {'const':<10}{'ld':<7}{_n(c['requests']):>13}{'':>14}{_n(c['serialized_accesses']):>12}"
                    f"{c['serialized_accesses'] / c['requests']:>7.2f}{_b(c['bytes']):>13}   addresses served one per pass")
    if ex.get("blocks_counted", 0) < ex.get("blocks", 0):
        rows.append(f"  counted for {_n(ex['blocks_counted'])} of {_n(ex['blocks'])} blocks (the rest were not executed)")
    rows.append(f"  L1 {_b(ex.get('l1_bytes', 0))} per SM (carve-out {_b(ex.get('carveout_bytes', 0))} shared), "
                f"L2 {_b(rep.gpu.l2.size_bytes)}, DRAM access {ex.get('dram_access_bytes', 0)} B; "
                f"{ex.get('blocks_per_sm', 0)} blocks/SM, waves of {_n(ex.get('wave_blocks', 0))} blocks")
    return "\n".join(rows)


def line_section(rep):
    """Memory by source line, like Nsight Compute's source view (lines that moved bytes)."""
    rows = [r for r in rep.by_line() if "l1_bytes" in r or "shared_requests" in r or "const_requests" in r]
    if not rows:
        return "Memory by source line: no memory instructions"
    out = ["Memory by source line (global/local: requests (warp instructions), sectors (32 bytes) per request, "
           "bytes at L2 and HBM; shared: wavefronts per request, bank conflicts (extra wavefronts))",
           f"  {'line':>5} {'requests':>10} {'sect/req':>8} {'L2':>11} {'HBM read':>11} {'HBM write*':>11}"
           f" {'wf/req':>7} {'conflicts':>10}  source"]
    for r in rows:
        req = sum(r.get(k, 0) for k in ("global_ld_requests", "global_st_requests", "global_atom_requests",
                                         "local_requests"))
        spr = f"{r['sectors_per_request']:.2f}" if "sectors_per_request" in r else ""
        wf = f"{r['wavefronts_per_request']:.2f}" if "wavefronts_per_request" in r else ""
        conf = _n(r["bank_conflicts"]) if "bank_conflicts" in r else ""
        dw = r.get("dram_write_bytes", 0) + r.get("l2_dirty_bytes_at_end", 0)
        src = r["source"] if len(r["source"]) <= 48 else r["source"][:45] + "..."
        out.append(f"  {r['line']:>5} {_n(req) if req else '':>10} {spr:>8} "
                   f"{_b(r.get('l2_bytes', 0)) if req else '':>11} {_b(r.get('dram_read_bytes', 0)) if req else '':>11} "
                   f"{_b(dw) if req else '':>11} {wf:>7} {conf:>10}  {src}")
    out.append("  * HBM write includes the line's bytes still dirty in L2 at the end (written back later)")
    return "\n".join(out)


def fill_report(mm, rep):
    sb = mm.gpu.l2.sector_bytes
    cnt = mm.cnt[:len(mm.slot_ins)]
    totals = cnt.sum(axis=0) if len(cnt) else np.zeros(C.N_COUNTERS, dtype=np.int64)
    red = np.zeros(C.N_COUNTERS, dtype=np.int64)
    for ins, row in zip(mm.slot_ins, cnt):
        if ins.id in mm.red_ids:
            red += row
    rep.metrics.update(C.metrics(totals, sb, red))
    by_line = defaultdict(lambda: np.zeros(C.N_COUNTERS, dtype=np.int64))
    line_of = SourceLines(mm.launch)
    for ins, row in zip(mm.slot_ins, cnt):
        by_line[line_of(ins) or (ins.loc.file, ins.loc.line)] += row
    for key, row in by_line.items():
        rep.lines.setdefault(key, {}).update(C.line_row(row, sb))
    rep.bytes_by_level = levels(totals, sb, red)
    s = mm.schedule
    rep.extras["memory"] = {"l1_bytes": mm.l1_bytes, "carveout_bytes": mm.carveout_bytes,
                            "dram_access_bytes": mm.dram_access_bytes, "blocks_per_sm": s.blocks_per_sm,
                            "wave_blocks": s.wave_blocks, "waves_per_chunk": s.waves_per_chunk,
                            "sector_lookups": mm.sector_lookups, "blocks_counted": mm.blocks_seen,
                            "blocks": mm.launch.n_blocks}
    rep.sections.append(("Memory", section))
    rep.sections.append(("Memory by source line", line_section))
