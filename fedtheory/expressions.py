"""Arithmetic expressions over named constants, e.g. ``"2/(mu_f+L_f)"`` over a problem's certificate.

Used by benchmark sweeps (a grid value ``"=1/L_f"``, :mod:`fedtheory.bench`) and by the figures (an x axis
``"delta_A/mu_f"``, :mod:`fedtheory.plotting`). It lives in its own module so that both import it and neither
imports the other for it: the layers run one way (bench -> plotting -> expressions).
"""
from __future__ import annotations

import ast
import math
import operator
from typing import Any, Callable, Mapping

__all__ = ["evaluate_expression"]

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.Pow: operator.pow}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg, ast.UAdd: operator.pos}
_FUNCS: dict[str, Callable[..., float]] = {"sqrt": math.sqrt, "log": math.log, "min": min, "max": max,
                                           "ceil": math.ceil, "floor": math.floor, "int": int}


def evaluate_expression(expr: str, names: Mapping[str, float]) -> float:
    """Evaluate an arithmetic expression (``+ - * / **``, numbers, ``sqrt log min max ceil floor int``) over
    ``names`` (e.g. certificate constants). No other Python is accepted."""

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise ValueError(f"unknown name {node.id!r} in expression {expr!r}; available: "
                                 f"{', '.join(sorted(names))}")
            value = names[node.id]
            if value is None:
                raise ValueError(f"{node.id} is undefined for this problem (expression {expr!r})")
            return value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](ev(node.operand))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS \
                and not node.keywords:
            return _FUNCS[node.func.id](*(ev(a) for a in node.args))
        raise ValueError(f"unsupported syntax in expression {expr!r}")

    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"cannot parse expression {expr!r}: {exc.msg}") from exc
    return ev(tree)
