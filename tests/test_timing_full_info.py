"""timing.trace._full_info: a group's per-warp memory facts spread over all the recorder's warps,
including an atomic's per-warp unit tuples (simgpu demo's histogram crashed on them)."""
import numpy as np

from simgpu.timing.trace import _full_info


def test_arrays_and_per_warp_tuples_are_spread_to_their_warps():
    info = {"sectors": np.array([3, 5]), "unit_load": [((7, 2.0),), ((7, 1.0), (9, 4.0))]}
    out = _full_info(info, np.array([1, 3]), 4)
    assert out["sectors"].tolist() == [0, 3, 0, 5]
    assert out["unit_load"] == [(), ((7, 2.0),), (), ((7, 1.0), (9, 4.0))]


def test_all_warps_present_is_returned_as_is():
    info = {"active": np.array([32, 32])}
    assert _full_info(info, np.array([0, 1]), 2) is info
