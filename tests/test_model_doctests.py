"""The worked examples in the model's docstrings are true."""
import doctest
import importlib

import pytest

MODULES = ["occupancy", "waves", "roofline", "tiling", "matmul", "gemm", "attention", "tricks", "tpu"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"simgpu.model.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
