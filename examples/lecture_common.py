"""Shared bits of the lecture examples: command line, output folder, table printing."""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:          # run from a checkout: python examples/lecture_x.py
    sys.path.insert(0, str(ROOT))


def parse(argv, description: str, **extra) -> argparse.Namespace:
    """--gpu and --out, plus one ``--name`` option per keyword (its default)."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", default=None, help="GPU preset (H200, H100, A100, V100); default H200")
    ap.add_argument("--out", default=None, help="folder for the PNG (default: a new temp folder)")
    for name, default in extra.items():
        ap.add_argument(f"--{name}", default=default, help=f"default {default}")
    args = ap.parse_args(argv)
    args.out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="simgpu_lecture_"))
    args.out.mkdir(parents=True, exist_ok=True)
    return args


def table(headers, rows) -> str:
    """A plain text table, columns right-aligned to their widest cell."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def save(fig, out: Path, name: str) -> Path:
    path = out / name
    fig.savefig(path, dpi=110)
    print(f"\nfigure: {path}")
    return path
