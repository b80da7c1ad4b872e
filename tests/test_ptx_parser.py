"""The PTX parser on real numba-cuda output and hand-written PTX; CFG, IPDOM and layout."""
import numpy as np
import pytest

from simgpu._compat import patch_numpy_for_numba

patch_numpy_for_numba()
from numba import cuda, float32  # noqa: E402

from simgpu.ptx.parser import PTXSyntaxError, parse  # noqa: E402
from simgpu.ptx.program import analyse, ipdom_of, link, loop_nested_order  # noqa: E402
from simgpu.ptx.runner import compile_numba  # noqa: E402


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def reduce(a, out):
    s = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.grid(1)]
    cuda.syncthreads()
    stride = 64
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@pytest.fixture(scope="module")
def saxpy_module():
    x = np.zeros(4, np.float32)
    ptx, _ = compile_numba(saxpy, (np.float32(1), x, x, x))
    return parse(ptx), ptx


def instrs(fn):
    return [s for s in fn.body if not isinstance(s, tuple)]


def test_header_and_params(saxpy_module):
    """.version/.target/.address_size are read; the entry has 1 + 3*7 params (a float32
    scalar, then meminfo, parent, nitems, itemsize, data, shape, stride per 1-d array)."""
    mod, _ = saxpy_module
    assert mod.target == ("sm_90",) and mod.address_size == 64 and mod.version
    (entry,) = [f for f in mod.functions.values() if f.kind == "entry"]
    assert len(entry.params) == 22
    assert entry.params[0].type == "f32" and all(p.type == "u64" for p in entry.params[1:])
    assert entry.regs["%f4"] == "f32" and entry.regs["%rd26"] == "b64" and "%p1" in entry.regs


def test_instruction_records(saxpy_module):
    """Opcode/modifier/type split, guard, operands and .loc source lines of real PTX."""
    mod, ptx = saxpy_module
    (entry,) = [f for f in mod.functions.values() if f.kind == "entry"]
    ins = instrs(entry)
    fma = next(i for i in ins if i.opcode == "fma")
    assert fma.mods == ("rn",) and fma.types == ("f32",)
    assert all(o[0] == "reg" for o in fma.operands) and len(fma.operands) == 4
    assert mod.source(fma.loc).endswith("test_ptx_parser.py:{}".format(
        saxpy.__code__.co_firstlineno + 3))
    bra = next(i for i in ins if i.opcode == "bra")
    assert bra.guard is not None and bra.guard[1] is False and bra.operands[0][0] == "sym"
    tid = next(i for i in ins if i.opcode == "mov" and i.operands[1][0] == "sreg")
    assert tid.operands[1][1:] == ("%tid", "x")
    ld = next(i for i in ins if i.opcode == "ld" and "param" in i.mods)
    assert ld.operands[1][0] == "addr" and ld.operands[1][1][0] == "sym"
    st = next(i for i in ins if i.opcode == "st")
    assert ptx.splitlines()[st.line - 1].strip().startswith("st.")


def test_hand_written_syntax():
    """Immediates (hex, 0f floats, negative), [reg+off], vector operands, p|q pairs, negated
    guards, shared arrays with .align, initialised consts, call with return and params."""
    mod = parse("""
    .version 8.0
    .target sm_90
    .address_size 64
    .const .align 4 .b32 tbl[3] = {1, 0x10, -2};
    .func (.param .b32 r) f(.param .b32 a) { .reg .b32 %x; ld.param.b32 %x, [a]; st.param.b32 [r], %x; ret; }
    .visible .entry k(.param .u64 p)
    {
        .reg .pred %p<3>; .reg .f32 %f<3>; .reg .b32 %r<5>; .reg .b64 %rd<3>;
        .shared .align 16 .b8 buf[64];
        // a comment
        mov.f32 %f1, 0f3F800000;     /* 1.0 */
        @!%p1 add.s32 %r1, %r2, -0x7;
        setp.lt.and.f32 %p1|%p2, %f1, %f2, %p0;
        ld.shared.v2.f32 {%f1, %f2}, [%rd1+-8];
        { .param .b32 a0; .param .b32 r0;
          st.param.b32 [a0+0], %r1;
          call.uni (r0), f, (a0);
          ld.param.b32 %r3, [r0+0]; }
    L1: ret;
    }""")
    assert mod.vars[0].init == [("imm", 1), ("imm", 16), ("imm", -2)] and mod.vars[0].size == 12
    k = mod.functions["k"]
    assert k.vars[0].name == "buf" and k.vars[0].align == 16 and k.vars[0].size == 64
    ins = instrs(k)
    assert ins[0].operands[1][:2] == ("fimm", 1.0)
    assert ins[1].guard == ("%p1", True) and ins[1].operands[2] == ("imm", -7)
    assert ins[2].mods == ("lt", "and") and ins[2].operands[0][0] == "pair"
    assert ins[3].operands[0][0] == "vec" and ins[3].operands[1] == ("addr", ("reg", "%rd1"), -8)
    call = next(i for i in ins if i.opcode == "call")
    assert call.operands[0] == ("list", [("sym", "r0")]) and call.operands[1] == ("sym", "f")
    assert [r.name for r in mod.functions["f"].rets] == ["r"]


def test_syntax_error_names_line():
    """A malformed instruction is a PTXSyntaxError naming the PTX line."""
    with pytest.raises(PTXSyntaxError, match="PTX line 3"):
        parse(".version 8.0\n.entry k() {\n add.s32 %r1, , ;\n}")


def test_ipdom_hand_written_cfgs():
    """Immediate post-dominators: diamond, loop with an early exit, nested if."""
    # 0 -> 1,2 ; 1,2 -> 3 ; 3 -> exit(4)
    assert ipdom_of([[1, 2], [3], [3], [4], []], 4)[:4] == [3, 3, 3, 4]
    # loop: 0 -> 1 ; 1 -> 2,4 ; 2 -> 3,4 (break) ; 3 -> 1 ; 4 -> exit 5
    assert ipdom_of([[1], [2, 4], [3, 4], [1], [5], []], 5)[:5] == [1, 4, 4, 1, 5]
    # nested: 0 -> 1,4 ; 1 -> 2,3 ; 2,3 -> 4 ; 4 -> 5(exit)
    assert ipdom_of([[1, 4], [2, 3], [4], [4], [5], []], 5)[:5] == [4, 4, 4, 4, 5]


def test_loop_nested_order_keeps_loops_contiguous():
    """Exit block 4 is a successor of the loop head 1, but is laid out after the whole loop
    {1, 2, 3}; a topological order of the rest."""
    succ = {0: [1], 1: [4, 2], 2: [3], 3: [1], 4: []}
    order = loop_nested_order(range(5), 0, lambda v: succ[v])
    assert order == [0, 1, 2, 3, 4]


def test_real_cfg_reconverges_after_branch():
    """In the reduction kernel every conditional branch block's IPDOM is laid out after it,
    and the barrier loop's blocks are contiguous in the linked program."""
    a = np.zeros(128, np.float32)
    ptx, _ = compile_numba(reduce, (a, a))
    mod = parse(ptx)
    (name,) = [n for n, f in mod.functions.items() if f.kind == "entry"]
    info = analyse(mod.functions[name])
    pos = {b: k for k, b in enumerate(info.order)}
    for b in info.blocks:
        if len(b.succs) == 2 and info.ipdom[b.id] != info.exit:
            back_edge = any(pos[s] <= pos[b.id] for s in b.succs if s != info.exit)
            if not back_edge:
                assert pos[info.ipdom[b.id]] > pos[b.id]
    linked = link({name: info}, name)
    assert len(linked.code) >= len(info.instrs)
