"""simgpu's stand-in for the CUDA device runtime (libcudadevrt) functions numba-cuda calls.

numba-cuda compiles ``cuda.cg.this_grid()`` to a call of the extern
``cudaCGGetIntrinsicHandle(scope)`` and ``grid.sync()`` to ``cudaCGSynchronize(handle, flags)``;
when it loads the module, numba links libcudadevrt (a static library of machine code) that
defines them.  simgpu cannot link machine code, so it links these PTX definitions instead:

* the PTX executor never runs them -- it executes a call of one of these names as an
  intrinsic (simgpu/ptx/devrt.py): the handle is a constant, the grid barrier holds every
  thread of the grid until all have arrived (exact, whatever the schedule);
* ptxas assembles them with the kernel, so the call costs real SASS: a block barrier, a fence,
  one atomic add per block on a global arrival counter, one poll of it, a fence and a block
  barrier -- the shape of the grid barrier of CUDA's cooperative groups, written here from
  that description (the poll loop is counted once per call: the executor does not spin).

Only the functions a kernel declares are linked (:func:`devrt_ptx`).
"""
from __future__ import annotations

import re

#: scope argument of cudaCGGetIntrinsicHandle (cudaCGScope): 1 = grid, 2 = multi-grid
SCOPE_GRID, SCOPE_MULTI_GRID = 1, 2

WORKSPACE = "__simgpu_cg_grid_arrived"

_WORKSPACE_DECL = f".global .align 4 .u32 {WORKSPACE};\n"

_HANDLE = f"""
.visible .func  (.param .b64 func_retval0) cudaCGGetIntrinsicHandle(
	.param .b32 cudaCGGetIntrinsicHandle_param_0
)
{{
	.reg .b64 	%rd<2>;
	mov.u64 	%rd1, {WORKSPACE};
	st.param.b64 	[func_retval0+0], %rd1;
	ret;
}}
"""

_SYNC = """
.visible .func  (.param .b32 func_retval0) NAME(
	.param .b64 NAME_param_0,
	.param .b32 NAME_param_1
)
{
	.reg .pred 	%p<4>;
	.reg .b32 	%r<16>;
	.reg .b64 	%rd<2>;
	ld.param.u64 	%rd1, [NAME_param_0];
	bar.sync 	0;
	mov.u32 	%r1, %tid.x;
	mov.u32 	%r2, %tid.y;
	mov.u32 	%r3, %tid.z;
	or.b32  	%r4, %r1, %r2;
	or.b32  	%r4, %r4, %r3;
	setp.ne.s32 	%p1, %r4, 0;
	@%p1 bra 	$L__NAME_done;
	mov.u32 	%r5, %nctaid.x;
	mov.u32 	%r6, %nctaid.y;
	mul.lo.s32 	%r5, %r5, %r6;
	mov.u32 	%r6, %nctaid.z;
	mul.lo.s32 	%r5, %r5, %r6;
	mov.u32 	%r7, %ctaid.x;
	mov.u32 	%r8, %ctaid.y;
	or.b32  	%r7, %r7, %r8;
	mov.u32 	%r8, %ctaid.z;
	or.b32  	%r7, %r7, %r8;
	setp.eq.s32 	%p2, %r7, 0;
	sub.s32 	%r9, -2147483647, %r5;
	selp.b32 	%r10, %r9, 1, %p2;
	membar.gl;
	atom.global.add.u32 	%r11, [%rd1], %r10;
$L__NAME_poll:
	ld.volatile.global.u32 	%r12, [%rd1];
	xor.b32  	%r13, %r12, %r11;
	and.b32  	%r13, %r13, -2147483648;
	setp.eq.s32 	%p3, %r13, 0;
	@%p3 bra 	$L__NAME_poll;
	membar.gl;
$L__NAME_done:
	bar.sync 	0;
	mov.u32 	%r14, 0;
	st.param.b32 	[func_retval0+0], %r14;
	ret;
}
"""

#: name -> PTX definition
DEFINITIONS = {
    "cudaCGGetIntrinsicHandle": _HANDLE,
    "cudaCGSynchronize": _SYNC.replace("NAME", "cudaCGSynchronize"),
    "cudaCGSynchronizeGrid": _SYNC.replace("NAME", "cudaCGSynchronizeGrid"),
}
#: the grid barriers among them
GRID_SYNC = frozenset(("cudaCGSynchronize", "cudaCGSynchronizeGrid"))
FUNCTIONS = frozenset(DEFINITIONS)

#: CUDA system calls that ptxas resolves itself (no definition linked) and simgpu.ptx executes:
#: print(), the device heap (NRT's allocations), assert() in linked CUDA C++
SYSCALLS = frozenset(("vprintf", "malloc", "free", "__assertfail"))

_EXTERN = re.compile(r"^[ \t]*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?([\w$]+)", re.M)


def called(ptx):
    """The device-runtime functions `ptx` declares extern (in order of name)."""
    return sorted(set(_EXTERN.findall(ptx)) & FUNCTIONS)


def devrt_ptx(names):
    """A PTX module (no header: merge_ptx adds none) defining the device-runtime functions
    `names`, or "" for none."""
    names = [n for n in names if n in DEFINITIONS]
    if not names:
        return ""
    return "\n".join([_WORKSPACE_DECL] + [DEFINITIONS[n] for n in sorted(names)])


def uses_grid_sync(ptx):
    """Whether the PTX calls a grid barrier of the device runtime."""
    return any(re.search(rf"\b{n}\b", ptx) for n in GRID_SYNC)
