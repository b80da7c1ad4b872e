"""Units and their formatting: the bottom layer, imported by everything, importing nothing."""
from __future__ import annotations

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


def human_bytes(n):
    """Bytes in decimal units, as Nsight Compute prints them: '1.05 MB'."""
    n = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.2f} {unit}"
        n /= 1000.0
