"""Choosing another CUDA toolchain ($SIMGPU_TOOLCHAIN, sass/toolchain.py): ptxas, libNVVM and
libdevice come from the chosen folder, the versions say so, and the validation scripts record
both the toolchain simgpu compiled with and the card's.

The tests that compile need a second toolchain installed: the folder named by
$SIMGPU_TEST_TOOLCHAIN, or /work/tc13 (``pip install --no-deps --target /work/tc13
nvidia-nvvm==13.0.88 nvidia-cuda-nvcc==13.0.88``); they are skipped without one.  NVVM is
loaded once per process, so they compile in a child process."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from simgpu import settings
from simgpu.errors import SimGPUError
from simgpu.sass import toolchain
from simgpu.sass.toolchain import ToolNotFoundError

ROOT = Path(__file__).resolve().parents[1]


def _second_toolchain():
    for cand in (os.environ.get("SIMGPU_TEST_TOOLCHAIN"), "/work/tc13"):
        if cand and os.path.isfile(os.path.join(cand, "nvidia", "cu13", "bin", "ptxas")):
            return cand
    return None


TC = _second_toolchain()
needs_second = pytest.mark.skipif(TC is None, reason="no second CUDA toolchain installed ($SIMGPU_TEST_TOOLCHAIN)")


def _fake_toolchain(root, tools=("ptxas",)):
    b = root / "nvidia" / "cu13" / "bin"
    b.mkdir(parents=True)
    for t in tools:
        exe = b / t
        exe.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.1'\n")
        exe.chmod(0o755)
    return b


def test_tools_come_from_the_chosen_folder(tmp_path):
    """ptxas comes from the folder's nvidia/cu13/bin; nvdisasm, which it lacks, from the
    default search; the settings' own SIMGPU_PTXAS still wins."""
    b = _fake_toolchain(tmp_path)
    with settings.override(toolchain=str(tmp_path), ptxas=None, nvdisasm=None):
        assert toolchain.find_tool("ptxas") == str(b / "ptxas")
        assert toolchain.tool_version("ptxas") == "V13.0.1"
        assert toolchain.find_tool("nvdisasm") != str(b / "nvdisasm")
        files = toolchain.selected_toolchain()
        assert files["root"] == str(tmp_path) and files["nvvm"] is None and files["nvdisasm"] is None
    with settings.override(toolchain=str(tmp_path), ptxas=str(b / "ptxas") + "x"):
        with pytest.raises(ToolNotFoundError, match="not an executable"):
            toolchain.find_tool("ptxas")


def test_a_folder_without_ptxas_or_no_folder_is_an_error(tmp_path):
    _fake_toolchain(tmp_path, tools=("nvdisasm",))
    with settings.override(toolchain=str(tmp_path), ptxas=None), pytest.raises(ToolNotFoundError,
                                                                               match="has no ptxas"):
        toolchain.find_tool("ptxas")
    with settings.override(toolchain=str(tmp_path / "absent")), pytest.raises(SimGPUError, match="not a folder"):
        toolchain.selected_toolchain()


def test_default_has_no_toolchain_folder():
    with settings.override(toolchain=None):
        assert toolchain.selected_toolchain() is None


_CHILD = r'''
import json, math, sys
import numpy as np
from numba import cuda
from simgpu import settings
from simgpu.sass import compile_kernel, toolchain
from simgpu.errors import SimGPUError

def k(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = math.sin(a[i]) + math.cos(a[i])

args = (np.zeros(10, np.float32), np.zeros(10, np.float32))
ck = compile_kernel(k, args, gpu="H200", use_cache=False)
from numba.cuda.cuda_paths import get_cuda_paths
out = {"versions": ck.versions, "ptx_head": ck.ptx[:400], "registers": ck.resources.registers,
       "libdevice": get_cuda_paths()["libdevice"].info, "nvvm_lib": toolchain.nvvm_library()}
try:                        # another toolchain's NVVM in the same process: refused
    with settings.override(toolchain=sys.argv[1]):
        compile_kernel(k, args, gpu="H200", use_cache=False)
    out["second"] = "compiled"
except SimGPUError as e:
    out["second"] = str(e)
print(json.dumps(out))
'''


def _child(env_toolchain, other):
    env = {k: v for k, v in os.environ.items() if k != "SIMGPU_TOOLCHAIN"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    if env_toolchain:
        env["SIMGPU_TOOLCHAIN"] = env_toolchain
    proc = subprocess.run([sys.executable, "-c", _CHILD, other], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@needs_second
def test_the_chosen_toolchain_compiles_and_says_so(tmp_path):
    """With SIMGPU_TOOLCHAIN the kernel's PTX is the chosen NVVM's (its build ID in the PTX
    header is the chosen ptxas's build), ptxas and libdevice are the chosen folder's, and the
    versions recorded with the kernel name them; the default process uses the installed wheels.
    Choosing another NVVM after one was loaded is refused, not ignored."""
    fake = tmp_path / "other"         # another toolchain: the same ptxas, another libnvvm
    (fake / "nvidia" / "cu13" / "bin").mkdir(parents=True)
    (fake / "nvidia" / "cu13" / "bin" / "ptxas").symlink_to(os.path.join(TC, "nvidia", "cu13", "bin", "ptxas"))
    (fake / "nvidia" / "cu13" / "lib").mkdir()
    (fake / "nvidia" / "cu13" / "lib" / "libnvvm.so.4").write_bytes(b"")
    chosen = _child(TC, str(fake))
    default = _child(None, TC)
    v, d = chosen["versions"], default["versions"]
    assert v["toolchain"] == os.path.abspath(TC) and d["toolchain"] is None
    assert v["ptxas"] != d["ptxas"] and v["nvvm"] != d["nvvm"]
    build = re.search(r"compiler\.(\d+)", v["ptxas"]).group(1)
    assert f"CL-{build}" in chosen["ptx_head"]          # NVVM of the same release as the ptxas
    assert v["ptxas"].split()[0] in v["nvvm"]          # e.g. "2.0 V13.0.88 cuda_13.0...."
    assert chosen["libdevice"].startswith(os.path.abspath(TC))
    assert chosen["nvvm_lib"].startswith(os.path.abspath(TC))
    assert not default["libdevice"].startswith(os.path.abspath(TC))
    assert "loaded once per process" in chosen["second"] and "loaded once per process" in default["second"]


@needs_second
def test_validation_scripts_record_both_versions(tmp_path):
    """compare_registers.py --toolchain records the chosen toolchain's versions and the card's
    (from the measurement file's provenance) beside its rows."""
    out = tmp_path / "regs.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("SIMGPU_TOOLCHAIN", None)
    proc = subprocess.run([sys.executable, str(ROOT / "validation" / "compare_registers.py"), "--only",
                           "^copy_f32_coalesced_L2$", "--no-ir", "--toolchain", TC, "--json", str(out)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    d = json.loads(out.read_text())
    assert d["rows"] and d["rows"][0]["name"] == "copy_f32_coalesced_L2"
    simgpu_side = d["toolchains"]["simgpu"]
    assert simgpu_side["toolchain"] == os.path.abspath(TC)
    assert simgpu_side["ptxas"].startswith("V13.0") and "V13.0" in simgpu_side["nvvm"]
    card = d["toolchains"]["card"]
    assert card and all(c.get("cuda_version") == "13.0" for c in card.values())
