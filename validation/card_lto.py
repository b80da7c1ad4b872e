"""Did a stored card measurement run numba-cuda's LTO program?  Compare like for like.

numba-cuda 0.16 and newer link every ``cuda.jit`` kernel with link-time optimisation where
nvJitLink (>= 12.3) is installed (NVIDIA/numba-cuda #310; ``decorators.py``:
``lto = _have_nvjitlink() and not debug``).  simgpu compiles the same way by default
(``simgpu.sass.toolchain.lto_for``), but what this machine has installed says nothing about what
the card had: a comparison with card data compiles with LTO exactly where that run's recorded
versions say the card did (``SIMGPU_LTO`` on or off for the whole comparison), never by outcome.

The rule, per data file (``card_ran_lto``):

* numba-cuda older than 0.16 -> no LTO;
* the record lists the nvidia-nvjitlink package (``pkg_nvidia-nvjitlink``: device_run.py since
  2026-12-07) -> LTO;
* the record lists no packages, but its Python, numpy, numba and numba-cuda are those of a card
  image whose package list is recorded (``IMAGES``) -> that image's answer.  Every card run so far
  (2026-11-30 to 2026-12-07: /opt/torch/.venv, Python 3.12.3, numpy 2.5.2, numba 0.68.0,
  numba-cuda 0.30.4, cuda-bindings 13.3.1, cuda-toolkit 13.0.2) is that image; c2_device.json
  records its nvidia-nvjitlink 13.0.88.  (The 2026-11-30 env.txt files list packages through a
  ``grep cuda|numba|...`` that leaves nvidia-nvjitlink out; the card's own SASS of that day,
  ``inspect_sass()`` of the cubin that ran, has the float16 ReLU's compare inlined
  (``HSETP2``, data/sass/suite/relu_if_f16_*.sass), which only the LTO link does.)
* anything else -> unknown: the comparison stops and asks for ``--lto on|off``.

    from card_lto import use_card_lto
    record = use_card_lto([data_file, ...], choice="record")   # before the first compile
"""
from __future__ import annotations

import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

LTO_DEFAULT_SINCE = (0, 16, 0)
#: card images whose full package list is recorded: (python, numpy, numba, numba-cuda) -> nvidia-nvjitlink
IMAGES = {("3.12.3", "2.5.2", "0.68.0", "0.30.4"): ("13.0.88", "validation/generated/c2_device.json")}
_KEYS = ("versions", "provenance", "environment", "env")


def _version_tuple(text):
    nums = re.findall(r"\d+", str(text))[:3]
    return tuple(int(x) for x in nums)


def record_of(path):
    """The version record of a card data file: its ``versions`` / ``provenance`` / ``environment``
    / ``env`` dicts merged (a JSON file), or an ``env.txt``'s ``== packages`` list and its
    ``Python`` / ``numba`` / ``numpy`` / ``numba-cuda`` version lines."""
    if path.endswith(".txt"):
        out, in_pkgs = {}, False
        for ln in open(path).read().splitlines():
            if ln.startswith("== "):
                in_pkgs = ln.strip() == "== packages"
                continue
            m = re.match(r"([\w.-]+)\s+(\d[\w.+]*)\s*$", ln)
            if in_pkgs and m:
                out[f"pkg_{m.group(1)}"] = m.group(2)
            m = re.match(r"(?i)(python|numba|numpy|numba-cuda) (\d+\.\d+\.\d+)\b", ln)
            if m:       # "Python 3.12.3" (device_run.sh), "numba-cuda 0.30.4" (the bottleneck runs)
                out[m.group(1).lower().replace("-", "_")] = m.group(2)
        for name in ("numba", "numba-cuda", "numpy"):
            if f"pkg_{name}" in out:
                out[name.replace("-", "_")] = out[f"pkg_{name}"]
        return out
    with open(path) as fh:
        d = json.load(fh)
    out = {}
    for k in _KEYS:
        if isinstance(d.get(k), dict):
            out.update(d[k])
    return out


def card_ran_lto(record):
    """(True/False/None, why) for one version record (see the module docstring)."""
    nc = record.get("numba_cuda")
    if not nc:
        return None, "no numba-cuda version recorded"
    if _version_tuple(nc) < LTO_DEFAULT_SINCE:
        return False, f"numba-cuda {nc} < 0.16 (LTO off by default)"
    njl = record.get("pkg_nvidia-nvjitlink")
    if njl:
        return True, f"numba-cuda {nc} >= 0.16 with nvidia-nvjitlink {njl} recorded"
    key = (str(record.get("python", "")).split()[0] if record.get("python") else "",
           str(record.get("numpy", "")), str(record.get("numba", "")), str(nc))
    if key in IMAGES:
        ver, src = IMAGES[key]
        return True, (f"numba-cuda {nc} >= 0.16; no nvidia-nvjitlink entry recorded, but Python/numpy/numba/numba-cuda "
                      f"{'/'.join(key)} are the card image whose list ({src}) has nvidia-nvjitlink {ver}")
    return None, f"numba-cuda {nc}: nvJitLink's presence is not recorded and the image {key} is not known"


def use_card_lto(paths, choice="record"):
    """Set ``SIMGPU_LTO`` for this process (before the first compile) from the data files' records
    (``choice`` "record") or as given ("on" / "off"); returns what was decided and why, for the
    comparison's JSON.  SystemExit when the records disagree or say nothing."""
    from simgpu import settings
    if choice == "record" and not paths:
        return {"lto": None, "why": "no card data named: simgpu's default (SIMGPU_LTO, numba-cuda's rule)"}
    if choice in ("on", "off"):
        decided, why = choice == "on", {"given": f"--lto {choice}"}
    else:
        answers = {os.path.relpath(p, ROOT): card_ran_lto(record_of(p)) for p in paths}
        values = {a for a, _ in answers.values()}
        if None in values or len(values) != 1:
            raise SystemExit("cannot tell whether the card ran numba-cuda's LTO program: "
                             + "; ".join(f"{p}: {w}" for p, (_, w) in answers.items()) + " (give --lto on|off)")
        decided, why = values.pop(), {p: w for p, (_, w) in answers.items()}
    os.environ["SIMGPU_LTO"] = "on" if decided else "off"
    settings.reload()
    return {"lto": decided, "why": why}
