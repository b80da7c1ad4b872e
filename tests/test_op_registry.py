"""Every IR op has a type rule, semantics and a cost, and every table speaks only of ops the
registry lists (simgpu/ir/ops.py)."""
import ast
import glob
import os

from simgpu.exec.interp import HANDLERS
from simgpu.exec.ops import VALUE_OPS
from simgpu.ir.infer import TYPE_RULES, TYPE_RULES_ANY
from simgpu.ir.ops import ALL, GROUPS
from simgpu.sass.costs import DEFAULT_MATH_COST, OPS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_op_has_a_type_rule():
    """infer.py types every registered op, and types nothing else."""
    rules = set(TYPE_RULES) | set(TYPE_RULES_ANY)
    assert ALL - rules == set()
    assert rules - ALL == set()


def test_every_op_has_semantics():
    """The executor computes every registered op: as a value op or with a handler."""
    sem = set(VALUE_OPS) | set(HANDLERS)
    assert ALL - sem == set()
    assert sem - ALL == set()


def test_every_op_has_a_cost():
    """The cost estimate has a row for every registered op; the math functions are costed by
    name in costs.MATH, with a documented default routine for the rarer ones."""
    assert ALL - set(OPS) - {"math"} == set()
    assert set(OPS) - ALL == set()
    assert DEFAULT_MATH_COST[0] == "sfu" and DEFAULT_MATH_COST[1] > 1


def test_groups_do_not_overlap():
    """An op is in exactly one group."""
    names = [op for ops in GROUPS.values() for op in ops]
    assert len(names) == len(set(names))


def test_the_frontend_emits_only_registered_ops():
    """Every op name the frontend emits (lw.emit("op", ...)) is registered."""
    emitted = set()
    for path in glob.glob(os.path.join(ROOT, "simgpu", "frontend", "*.py")):
        for node in ast.walk(ast.parse(open(path).read())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "emit"
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                emitted.add(node.args[0].value)
    assert emitted and emitted - ALL == set()
