# table.txt of this run: python3 validation/writeback/h100_2026-12-07/table.py (the shared
# reader, validation/writeback/table.py, over this folder's two passes)
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from table import table  # noqa: E402

for c in ("none", "all"):
    table(HERE, c)
print()
