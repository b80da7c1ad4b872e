#!/usr/bin/env python3
"""Parse `ncu --csv --page raw` output into {case_name: {metric: float}}.

  python3 validation/ncu_csv.py --pair suite_copies.csv:profile_order_copies.json [--pair ...] --out x.json

The parser is simgpu/validate/ncu_csv.py, the one implementation simgpu uses too.  It is pure
standard library, and this module loads it by its file path (not `import simgpu`), because
the suite runs on a GPU machine where simgpu is not installed: validation/ only needs the
repository's files, not the package.
"""
import importlib.util
import os
import sys

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "simgpu", "validate", "ncu_csv.py")
_spec = importlib.util.spec_from_file_location("_simgpu_validate_ncu_csv", _PATH)
_mod = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _mod
_spec.loader.exec_module(_mod)

convert, parse_csv, rows_to_dicts, map_to_cases, main = (
    _mod.convert, _mod.parse_csv, _mod.rows_to_dicts, _mod.map_to_cases, _mod.main)

if __name__ == "__main__":
    main()
