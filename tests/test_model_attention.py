"""Attention: naive kernels vs FlashAttention (traffic, FLOPs, time) and online softmax."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from simgpu.hardware import H200
from simgpu.model.attention import (attention_reference, flash_attention, flash_block_sizes,
                                    flash_traffic_theta, naive_attention, online_attention,
                                    online_softmax, softmax)

N, D = 4096, 64


def test_naive_forward_traffic_and_flops():
    """Q K^T, softmax, P V as three kernels: 4N^2 + 4Nd elements, 4N^2 d + 5N^2 FLOPs."""
    a = naive_attention(H200, N, D)
    assert a.hbm_elements == 4 * N * N + 4 * N * D
    assert a.flops == 4 * N * N * D + 5 * N * N
    assert a.hbm_bytes == 2 * a.hbm_elements


def test_naive_backward_traffic():
    """dV, dP, dS, dQ, dK as five kernels: 7N^2 + 8Nd elements, 8N^2 d matmul FLOPs."""
    a = naive_attention(H200, N, D, direction="backward")
    assert a.hbm_elements == 7 * N * N + 8 * N * D
    assert a.flops == 8 * N * N * D + 4 * N * N


def test_flash_block_sizes_from_sram():
    """M = 227 KiB / 2 B = 116224 elements: resident tile ceil(M / 4d) = 454 rows, streamed min(454, d) = 64."""
    assert flash_block_sizes(H200, 64) == (454, 64)
    assert flash_block_sizes(H200, 128) == (227, 128)


def test_flash_forward_traffic():
    """Q read once, O and L written once, K and V read once per query tile of 454 rows."""
    f = flash_attention(H200, N, D)
    assert f.hbm_elements == 2 * N * D + N + 2 * N * D * 10
    assert naive_attention(H200, N, D).hbm_elements / f.hbm_elements > 11


def test_flash_traffic_is_theta_n2_d2_over_m():
    """With N a multiple of the query tile, K/V traffic is exactly 8 N^2 d^2 / M."""
    m = 116224
    n = 454 * 40
    kv = flash_attention(H200, n, D).hbm_elements - (2 * n * D + n)
    assert kv / flash_traffic_theta(n, D, m) == pytest.approx(8.0)


def test_flash_backward_recomputes():
    """Flash backward does one more Q K^T (2N^2 d) and softmax (5N^2) than naive, and moves far less."""
    a = naive_attention(H200, N, D, direction="backward")
    f = flash_attention(H200, N, D, direction="backward")
    assert f.flops - a.flops == 2 * N * N * D + 5 * N * N + 2 * N * D
    assert f.hbm_elements < a.hbm_elements / 9
    assert f.time_s < a.time_s


def test_bad_direction():
    with pytest.raises(ValueError):
        naive_attention(H200, N, D, direction="sideways")


@settings(max_examples=50, deadline=None)
@given(x=arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 70)), elements=st.floats(-50, 50)),
       tile=st.integers(1, 80))
def test_online_softmax_equals_softmax(x, tile):
    """The tile-by-tile softmax with a running max and rescaled sum equals the ordinary one."""
    np.testing.assert_allclose(online_softmax(x, tile), softmax(x), rtol=1e-12, atol=1e-15)


def test_online_attention_equals_reference():
    """Attention over K/V tiles with online softmax equals softmax(QK^T/sqrt(d)) V."""
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(100, 16)), rng.normal(size=(130, 16)), rng.normal(size=(130, 8))
    np.testing.assert_allclose(online_attention(q, k, v, 32), attention_reference(q, k, v), rtol=1e-12)
