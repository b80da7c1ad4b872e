"""Whole programs (``simgpu run --check``): every launch made while a collector is active is
sanitized, and the collector sums their findings."""
from __future__ import annotations

import contextlib

from .findings import TOOLS, SanitizerReport

_ACTIVE = []


class Collector:
    def __init__(self, tools=TOOLS):
        self.tools = tuple(tools)
        self.report = SanitizerReport("", self.tools)
        self.launches = 0

    def add(self, rep):
        self.launches += 1
        self.report.extend(rep)

    def summary(self):
        s = self.report.summary()
        return s.replace("SIMGPU COMPUTE-SANITIZER", f"SIMGPU COMPUTE-SANITIZER ({self.launches} launches)", 1) \
            if self.launches != 1 else s


def current_collector():
    """The innermost active collector, or None."""
    return _ACTIVE[-1] if _ACTIVE else None


@contextlib.contextmanager
def collecting(tools=TOOLS):
    """Sanitize every launch in the block (launch's check=None means: as the collector says)."""
    c = Collector(tools)
    _ACTIVE.append(c)
    try:
        yield c
    finally:
        _ACTIVE.remove(c)
