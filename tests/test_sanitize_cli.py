"""`simgpu sanitize FILE.py::KERNEL`, `simgpu sanitize prog.py`, `simgpu run --check prog.py`."""
import os
import textwrap

import pytest

from simgpu.cli import main
from simgpu.sass.toolchain import compiled_path_available

KERNELS = textwrap.dedent('''
    import numpy as np
    from numba import cuda
    TPB = 8

    def dot(a, b, out):
        shared = cuda.shared.array(TPB, np.float32)
        i = cuda.threadIdx.x
        shared[i] = a[i] * b[i]
        if i == 0:
            acc = np.float32(0)
            for k in range(TPB):
                acc += shared[k]
            out[0] = acc

    def args_dot():
        return (np.ones(8, np.float32), np.ones(8, np.float32), np.zeros(1, np.float32))

    def main():
        a = cuda.to_device(np.ones(8, np.float32))
        o = cuda.device_array(1, np.float32)
        cuda.jit(dot)[1, TPB](a, a, o)
        print("result", o.copy_to_host()[0])

    if __name__ == "__main__":
        main()
''')


@pytest.fixture
def prog(tmp_path):
    p = tmp_path / "kern.py"
    p.write_text(KERNELS)
    return str(p)


def test_sanitize_one_kernel_on_the_ir_path(prog, capsys):
    rc = main(["sanitize", f"{prog}::dot", "--grid", "1", "--block", "8", "--executor", "ir"])
    out = capsys.readouterr().out
    assert rc == 1
    assert f"Write access at {prog}:9" in out and f"Read access at {prog}:13" in out
    assert "ERROR SUMMARY: 1 error" in out


def test_sanitize_picks_tools(prog, capsys):
    rc = main(["sanitize", f"{prog}::dot", "--grid", "1", "--block", "8", "--executor", "ir",
               "--tools", "initcheck,synccheck"])
    out = capsys.readouterr().out
    assert rc == 0 and "ERROR SUMMARY: 0 errors" in out and "(initcheck,synccheck)" in out


def test_run_one_kernel_with_check(prog, capsys):
    rc = main(["run", f"{prog}::dot", "--grid", "1", "--block", "8", "--check", "--executor", "ir"])
    out = capsys.readouterr().out
    assert rc == 1 and "simgpu report: dot" in out and "ERROR SUMMARY: 1 error" in out


@pytest.mark.skipif(not compiled_path_available()[0], reason="whole programs run numba's compiled PTX")
@pytest.mark.parametrize("how", [["run", "--check"], ["sanitize"]])
def test_whole_program_with_check(prog, capsys, how):
    rc = main([*how, prog])
    out = capsys.readouterr().out
    assert "result 8.0" in out
    assert "Race reported between read-after-write accesses to __shared__ memory" in out
    assert "ERROR SUMMARY:" in out and "ERROR SUMMARY: 0 errors" not in out
    assert rc == 1
