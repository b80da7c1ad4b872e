"""One PTX arithmetic table: every arithmetic instruction form simgpu is known to meet goes
through ``simgpu.ptx.semantics`` (there is no fallback table), and a form it does not know is a
clear error naming the instruction, its PTX line and the user's source line.

Known forms: every instruction of the PTX stored under validation/, and the forms the test
suite's own kernels compile to (tests/data/ptx_forms.json, recorded by
``python -m pytest --ptx-forms DIR`` and validation/tools/ptx_forms.py)."""
import glob
import json
import os

import numpy as np
import pytest

from simgpu.errors import SimGPUError
from simgpu.ptx import compile as ptx_compile
from simgpu.ptx import semantics
from simgpu.ptx.instrs import build_arith
from simgpu.ptx.parser import parse
from simgpu.ptx.runner import run

ROOT = os.path.join(os.path.dirname(__file__), "..")


def _stored_ptx_forms():
    forms = set()
    for p in glob.glob(os.path.join(ROOT, "validation", "**", "*.ptx"), recursive=True):
        with open(p) as f:
            m = parse(f.read())
        for fn in m.functions.values():
            for ins in fn.body or []:
                if hasattr(ins, "opcode"):
                    forms.add((ins.opcode, tuple(ins.mods), tuple(ins.types)))
    return forms


# forms the error tests use on purpose (tests/test_ptx_runtime.py, below): never in the table
DELIBERATELY_UNKNOWN = {("frobnicate", (), ("b32",)), ("addc", ("cc",), ("f32",))}


def _recorded_forms():
    with open(os.path.join(ROOT, "tests", "data", "ptx_forms.json")) as f:
        return {(o, tuple(m), tuple(t)) for o, m, t in json.load(f)["forms"]} - DELIBERATELY_UNKNOWN


def test_there_is_one_arithmetic_table():
    assert not os.path.exists(os.path.join(ROOT, "simgpu", "ptx", "basic_ops.py"))
    with open(os.path.join(ROOT, "simgpu", "ptx", "instrs.py")) as f:
        assert "basic_ops" not in f.read()


@pytest.mark.parametrize("source", ["validation PTX", "the tests' kernels"])
def test_every_known_arithmetic_form_goes_through_the_table(source):
    forms = _stored_ptx_forms() if source == "validation PTX" else _recorded_forms()
    assert len(forms) > 40
    arith = [f for f in forms if ptx_compile.TABLE.get(f[0], build_arith) is build_arith]
    missing = sorted(f for f in arith if semantics.lookup(*f) is None)
    assert not missing, f"forms the semantics table does not know: {missing}"


PTX = """.version 8.0
.target sm_90
.address_size 64
.file 1 "wide_add.py"
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<12>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 24;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.v2.u32 {%r2, %r3}, [%rd3];
    ld.global.u32 %r4, [%rd3+8];
    ld.global.v2.u32 {%r5, %r6}, [%rd3+12];
    ld.global.u32 %r7, [%rd3+20];
    .loc 1 3 0
    add.cc.u32 %r8, %r2, %r5;
    addc.cc.u32 %r9, %r3, %r6;
    addc.u32 %r10, %r4, %r7;
    st.global.v2.u32 [%rd3], {%r8, %r9};
    st.global.u32 [%rd3+8], %r10;
    .loc 1 4 0
    %s
    ret;
}"""


def test_a_96_bit_add_through_the_executor():
    """add.cc / addc.cc / addc chained over three words, per lane, in one kernel."""
    rng = np.random.default_rng(3)
    a = [int(x) for x in rng.integers(0, 1 << 62, 64)] + [(1 << 96) - 1] * 32
    b = [int(x) << 40 for x in rng.integers(0, 1 << 55, 64)] + [1] * 16 + [(1 << 95)] * 16
    words = np.array([[(v >> (32 * k)) & 0xFFFFFFFF for k in range(3)] +
                      [(w >> (32 * k)) & 0xFFFFFFFF for k in range(3)]
                      for v, w in zip(a, b)], np.uint32)
    run(PTX.replace("%s", ""), "k", 1, 96, (words,))
    for k, (x, y) in enumerate(zip(a, b)):
        got = int(words[k, 0]) | int(words[k, 1]) << 32 | int(words[k, 2]) << 64
        assert got == (x + y) % (1 << 96), k


def test_an_unknown_form_names_the_instruction_and_source_line():
    bad = PTX.replace("%s", "addc.cc.f32 %r11, %r2, %r5;")
    words = np.zeros((32, 6), np.uint32)
    with pytest.raises(SimGPUError, match=r"wide_add.py:4.*unsupported PTX instruction "
                                          r"'addc.cc.f32 %r11, %r2, %r5;' \(PTX line \d+\)"):
        run(bad, "k", 1, 32, (words,))
