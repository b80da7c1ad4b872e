"""What the sanitizer found: one Finding per (tool, kind, source-line pair), counted, and the
summary printed as compute-sanitizer prints its own (``========= ... ERROR SUMMARY``)."""
from __future__ import annotations

import linecache
from dataclasses import dataclass, field

TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
PREFIX = "========= "


@dataclass
class Finding:
    """One deduplicated error.  ``loc`` is where it was detected (the later access, the
    barrier reached, the read); ``other_loc`` the earlier access or the other barrier."""
    tool: str                       # memcheck | racecheck | initcheck | synccheck
    kind: str                       # e.g. 'RAW', 'WAR', 'WAW', 'uninitialized read', 'divergent barrier'
    message: str                    # one line, what happened
    loc: str                        # 'file:line'
    other_loc: str | None = None
    space: str | None = None        # shared | local | global
    block: tuple | None = None      # the first occurrence
    thread: tuple | None = None
    other_block: tuple | None = None
    other_thread: tuple | None = None
    array: str | None = None
    index: object = None
    size: int | None = None
    count: int = 1                  # occurrences (threads) folded into this finding
    details: dict = field(default_factory=dict)

    @property
    def key(self):
        return (self.tool, self.kind, self.space, self.loc, self.other_loc)

    def lines(self):
        """The finding as compute-sanitizer-style lines (without the ========= prefix)."""
        out = [self.message]
        who = _who(self.thread, self.block)
        if self.tool == "racecheck":
            first, second = _access_names(self.kind)
            out = [f"Error: {self.message}",
                   f"    {first} access at {self.other_loc}{_src(self.other_loc)} "
                   f"by {_other(self)}",
                   f"    and {second} access at {self.loc}{_src(self.loc)} by {who}"
                   f"  [{self.count} hazard{'s' if self.count != 1 else ''}]"]
            return out
        out = [f"Error: {self.message}", f"    at {self.loc}{_src(self.loc)}"]
        if who:
            out.append(f"    by {who}" + (f"  [{self.count} occurrences]" if self.count > 1 else ""))
        if self.other_loc:
            label = self.details.get("other_label", "see also")
            out.append(f"    {label} {self.other_loc}{_src(self.other_loc)}")
        return out

    def __str__(self):
        return "\n".join(self.lines())


def _access_names(kind):
    return {"RAW": ("Write", "Read"), "WAR": ("Read", "Write"), "WAW": ("Write", "Write")}.get(
        kind, ("Write", "Access"))


def _other(f):
    if f.details.get("other_many_blocks"):
        return "several blocks"
    many = "several threads in " if f.details.get("other_many") else ""
    return many + _who(f.other_thread, f.other_block)


def _who(thread, block):
    parts = []
    if thread is not None:
        parts.append(f"thread ({','.join(str(int(v)) for v in thread)})")
    if block is not None:
        parts.append(f"block ({','.join(str(int(v)) for v in block)})")
    return " in ".join(parts)


def _src(loc):
    """': <the source text>' of a 'file:line' location, when the file can be read."""
    if not loc or ":" not in loc:
        return ""
    f, _, ln = loc.rpartition(":")
    try:
        text = linecache.getline(f, int(ln)).strip()
    except ValueError:
        return ""
    return f"  `{text}`" if text else ""


class SanitizerReport:
    """The findings of one launch (``report.sanitizer``), or of a whole program."""

    def __init__(self, kernel="", tools=TOOLS, executor=""):
        self.kernel, self.tools, self.executor = kernel, tuple(tools), executor
        self._by_key = {}

    # -- collecting -------------------------------------------------------------------------
    def add(self, finding: Finding):
        f = self._by_key.get(finding.key)
        if f is None:
            self._by_key[finding.key] = finding
        else:
            f.count += finding.count

    def extend(self, other: "SanitizerReport"):
        for f in other.findings:
            self.add(Finding(**{**f.__dict__, "details": dict(f.details)}))

    # -- views ------------------------------------------------------------------------------
    @property
    def findings(self):
        return list(self._by_key.values())

    def __len__(self):
        return len(self._by_key)

    def __iter__(self):
        return iter(self.findings)

    def __bool__(self):
        return True                 # a report with no findings is still a report

    @property
    def errors(self):
        return len(self._by_key)

    def by_tool(self, tool):
        return [f for f in self.findings if f.tool == tool]

    def counts(self):
        """{tool: number of deduplicated findings}."""
        c = {t: 0 for t in self.tools}
        for f in self.findings:
            c[f.tool] = c.get(f.tool, 0) + 1
        return c

    def to_dict(self):
        return {"kernel": self.kernel, "tools": list(self.tools), "errors": self.errors,
                "findings": [{k: (list(v) if isinstance(v, tuple) else v)
                              for k, v in f.__dict__.items() if k != "details"}
                             for f in self.findings]}

    def summary(self):
        """compute-sanitizer's layout: each error, then ``ERROR SUMMARY: N errors``."""
        tools = ",".join(self.tools)
        head = f"{PREFIX}SIMGPU COMPUTE-SANITIZER ({tools})"
        if self.kernel:
            head += f" -- kernel {self.kernel}"
        out = [head]
        order = {t: i for i, t in enumerate(TOOLS)}
        for f in sorted(self.findings, key=lambda f: (order.get(f.tool, 9), f.loc, f.other_loc or "")):
            out.extend(PREFIX + ln for ln in f.lines())
            out.append(PREFIX.rstrip())
        n = self.errors
        out.append(f"{PREFIX}ERROR SUMMARY: {n} error{'s' if n != 1 else ''}")
        return "\n".join(out)

    __str__ = summary

    def __repr__(self):
        return f"<SanitizerReport {self.kernel}: {self.errors} errors {self.counts()}>"
