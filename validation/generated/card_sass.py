"""ptxas' SASS of campaign c2's kernels on the card's machine (its own ptxas and nvdisasm), per PTX
line: what the driver there compiles, to tell a SASS difference between ptxas versions from a
semantic one (issue 25 item 3).

    python3 card_sass.py PTX.json.gz OUT.json.gz [--workers 15] [--part i/n] [--only k0001,k0002]
                         [--ptxas-args "-c"]

``--ptxas-args``: more ptxas options (``-c``: relocatable code).  ``--nvjitlink LIB``: compile each
PTX as numba-cuda loads it instead, through nvJitLink (``LIB``: the path of ``libnvJitLink.so.13``;
options ``-arch=sm_90 -lineinfo``): numba-cuda 0.30's linker (cuda.core's ``Linker``) uses nvJitLink
where it is installed, and the card had nvidia-nvjitlink 13.0.88 (c2_device.json), so that, not
the ptxas command line, made the code the card ran.  No GPU is needed; this mode imports
simgpu (its nvJitLink binding, simgpu/sass/nvjitlink.py), the others do not.  ``ptxas``/``nvdisasm``
come from PATH.

PTX: {kernel: PTX text} (c2_ptx.json.xz), numbered here with one .loc per instruction
(simgpu/sass/ptxlines.py, loaded by path: simgpu's dependencies need not be installed).  OUT: {kernel: nvdisasm -g -c text, only the lines simgpu.sass.disasm.parse_nvdisasm
reads}, plus {"_versions": ...}."""
import concurrent.futures as cf
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from store import load_json  # noqa: E402

KEEP = re.compile(r'^(//-+ \.text\.|\s*\.type\s|[^\s/][^\s]*:\s*$|\s*//## File "|\s*/\*[0-9a-fA-F]{4,}\*/\s)')


def _numberer():
    import importlib.util
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for base in (root, os.getcwd()):
        path = os.path.join(base, "simgpu", "sass", "ptxlines.py")
        if os.path.exists(path):
            spec = importlib.util.spec_from_file_location("ptxlines", path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules["ptxlines"] = mod
            spec.loader.exec_module(mod)
            return mod.number_ptx_lines
    raise SystemExit("simgpu/sass/ptxlines.py not found")


NUMBER = None
EXTRA = []
NVJITLINK = None


def nvjitlink(lib):
    """(link(data, options) -> cubin bytes, "nvJitLink MAJOR.MINOR (lib)") for the libnvJitLink at
    ``lib``: simgpu's binding (simgpu/sass/nvjitlink.py; imported only for --nvjitlink)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path.insert(0, root)
    from simgpu.sass.nvjitlink import linker
    link, ver = linker(lib)
    return (lambda data, options: link([(data, "ptx")], options, "cubin")), f"{ver} ({lib})"


def one(item):
    name, text = item
    text = NUMBER(text).text
    with tempfile.TemporaryDirectory() as tmp:
        src, cub = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
        if NVJITLINK is not None:
            try:
                data = NVJITLINK[0](text, ["-arch=sm_90", "-lineinfo", *EXTRA])
            except Exception as exc:  # noqa: BLE001  (nvJitLink's error log)
                return name, f"ERROR {exc}"
            with open(cub, "wb") as f:
                f.write(data)
        else:
            with open(src, "w") as f:
                f.write(text)
            p = subprocess.run(["ptxas", "-arch=sm_90", "-lineinfo", *EXTRA, src, "-o", cub],
                               capture_output=True, text=True)
            if p.returncode:
                return name, "ERROR " + p.stderr[-500:]
        d = subprocess.run(["nvdisasm", "-g", "-c", cub], capture_output=True, text=True).stdout
    return name, "\n".join(ln for ln in d.splitlines() if KEEP.match(ln))


def main(argv):
    global NUMBER, EXTRA, NVJITLINK
    NUMBER = _numberer()
    if "--ptxas-args" in argv:
        EXTRA = argv[argv.index("--ptxas-args") + 1].split()
    if "--nvjitlink" in argv:
        NVJITLINK = nvjitlink(argv[argv.index("--nvjitlink") + 1])
    src, out = argv[0], argv[1]
    workers = int(argv[argv.index("--workers") + 1]) if "--workers" in argv else 15
    ptx = load_json(src)
    if "--part" in argv:                    # --part i/n: every n-th kernel from the i-th (files < 16 MiB)
        i, n = map(int, argv[argv.index("--part") + 1].split("/"))
        ptx = {k: v for j, (k, v) in enumerate(sorted(ptx.items())) if j % n == i}
    if "--only" in argv:
        keep = set(argv[argv.index("--only") + 1].split(","))
        ptx = {k: v for k, v in ptx.items() if k in keep}
    res = {}
    with cf.ThreadPoolExecutor(workers) as ex:
        for name, text in ex.map(one, ptx.items()):
            res[name] = text
    v = lambda c: subprocess.run(c, capture_output=True, text=True).stdout.strip().splitlines()[-1:]  # noqa: E731
    res["_versions"] = {"ptxas": v(["ptxas", "--version"]), "nvdisasm": v(["nvdisasm", "--version"]),
                        "ptxas_args": ["-arch=sm_90", "-lineinfo", *EXTRA],
                        "compiler": NVJITLINK[1] if NVJITLINK else "ptxas"}
    with gzip.open(out, "wt") as f:
        json.dump(res, f)
    print("sass of", len(res) - 1, "kernels;", sum(t.startswith("ERROR") for t in res.values() if isinstance(t, str)), "errors")


if __name__ == "__main__":
    main(sys.argv[1:])
