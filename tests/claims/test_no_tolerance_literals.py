"""Every tolerance, margin and Monte Carlo threshold of a check is a named constant (docs/design.md, "Verification
conventions"): the claims read ``fedtheory/claims/tolerances.py``, the conformance kit
``fedtheory/conformance/tolerances.py``, and both take the one Monte Carlo rule from ``fedtheory/montecarlo.py``.

The test reads every claim and kit module (``ast``) and fails on a numeric literal used as a tolerance. A literal is
*tolerance-sized* when 0 < |x| < 1e-2; it is *used as a tolerance* when it stands

* in a comparison (``err <= 1e-12``, ``x <= bound * (1 + 1e-9)``, ``k > -1e-7``), anywhere in either side;
* in the tolerance of ``np.isclose`` / ``np.allclose`` / ``math.isclose`` / ``np.testing.assert_allclose`` (their
  third and later positional arguments, or any keyword);
* in a keyword argument, a default or an assignment whose name says tolerance (``rtol=``, ``tol = ...``,
  ``margin``, ``slack``, ``floor``);
* as the bound of an ``Evidence`` (its third argument, or ``bound=``): a check that reports "error <= 1e-12";
* or, of any size, as the multiplier of a standard error (``4 * se``): the Monte Carlo rule is ``mc_slack(se)``;
* or, of any size, as the threshold of a z-score (``abs(z) <= 5.0``, ``min(z_mean) >= 4``; a name ``z``, ``z_*``,
  ``*_z`` or ``zs``): the threshold is ``Z_MONTE_CARLO``.

Instance data are not caught by these rules: a step size, a grid, a parameter range or a probability is an argument
of a constructor, a ``Param`` or a generator, not a side of a comparison. The few literals that are data *and* sit
where the rules look are allow-listed below, each with its reason; an entry that no longer matches fails the test,
so the list can only shrink.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import fedtheory

PACKAGE = Path(fedtheory.__file__).resolve().parent
ROOTS = (PACKAGE / "claims", PACKAGE / "conformance")
#: Where the named constants live: the only modules allowed to write them as literals.
HOMES = {PACKAGE / "claims" / "tolerances.py", PACKAGE / "conformance" / "tolerances.py",
         PACKAGE / "montecarlo.py"}
SMALL = 1e-2
TOLERANCE_NAME = re.compile(r"(^|_)(r|a|abs_|rel_)?(tol|tolerance|margin|slack|floor)(_|$)", re.IGNORECASE)
STANDARD_ERROR = re.compile(r"^(se|sem|stderr|std_err|standard_error)(_.*)?$")
Z_SCORE = re.compile(r"^(z|zs|z_.*|.*_z)$")
CLOSE_FUNCTIONS = {"isclose", "allclose", "assert_allclose"}

#: (path relative to fedtheory/, source line stripped, literal): why the literal is data, not a tolerance.
ALLOWED: dict[tuple[str, str, float], str] = {
    ("claims/fedelasticnet/algorithm3.py",
     'return Evidence(f"test quadratic lambda2=beta lambda1 in {lams}", rel, 1e-7, bool(rel <= 1e-7),', 1e-7):
        "the statement's own number: the claim measures whether the difference is 'below 1e-7 of R(theta^0) - R*'",
    ("claims/fedelasticnet/theorem3_1.py", "if abs(D) > 1e-6 * lam2 ** 2:", 1e-6):
        "selects the points compared, away from the root D = 0 where the closed form 5(l2 + b)/(2D) is ill-conditioned;"
        " it grants no slack to the comparison made at the other points",
    ("conformance/families/fedelasticnet_fedavg/variants.py",
     "done = np.max(np.abs(u_new - u)) <= 1e-15 * (1.0 + np.max(np.abs(u_new)))", 1e-15):
        "the stopping rule of an implementation under test (a power-test variant), not a tolerance of a verdict",
    ("conformance/families/fedred/variants.py", "communicate = credit >= 1.0 - 1e-12", 1e-12):
        "the communication rule of an implementation under test (a power-test variant), not a tolerance of a verdict",
}


def _is_small_number(node: ast.AST) -> bool:
    return (isinstance(node, ast.Constant) and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool) and 0 < abs(node.value) < SMALL)


def _small_literals(node: ast.AST) -> list[ast.Constant]:
    return [n for n in ast.walk(node) if _is_small_number(n)]  # type: ignore[misc]


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Call):
        return _name(node.func)
    return ""


def tolerance_literals(tree: ast.AST) -> list[ast.Constant]:
    """The numeric literals of ``tree`` that the rules of the module docstring call tolerances, each once."""
    found: dict[int, ast.Constant] = {}

    def add(nodes) -> None:
        for n in nodes:
            found[id(n)] = n

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            add(_small_literals(node))
            sides = [node.left, *node.comparators]
            if any(Z_SCORE.match(_name(n)) for side in sides for n in ast.walk(side)):
                # the threshold is a side of its own (``z <= 5.0``, ``z > -4``), not an index or a factor inside one
                bare = [side.operand if isinstance(side, ast.UnaryOp) else side for side in sides]
                add(n for n in bare if isinstance(n, ast.Constant) and isinstance(n.value, (int, float))
                    and not isinstance(n.value, bool) and n.value != 0)
        elif isinstance(node, ast.Call):
            name = _name(node.func)
            if name in CLOSE_FUNCTIONS:
                for arg in node.args[2:]:
                    add(_small_literals(arg))
                for kw in node.keywords:
                    add(_small_literals(kw.value))
            elif name == "Evidence":
                if len(node.args) >= 3:
                    add(_small_literals(node.args[2]))
                add(n for kw in node.keywords if kw.arg == "bound" for n in _small_literals(kw.value))
            add(n for kw in node.keywords if kw.arg and TOLERANCE_NAME.search(kw.arg)
                for n in _small_literals(kw.value))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None and any(TOLERANCE_NAME.search(_name(t)) for t in targets):
                add(_small_literals(node.value))
        elif isinstance(node, ast.arg) and TOLERANCE_NAME.search(node.arg):
            pass  # a default is matched through the function's defaults below
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            positional = args.posonlyargs + args.args
            for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
                if TOLERANCE_NAME.search(arg.arg):
                    add(_small_literals(default))
            for arg, default in zip(args.kwonlyargs, args.kw_defaults):
                if default is not None and TOLERANCE_NAME.search(arg.arg):
                    add(_small_literals(default))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for number, other in ((node.left, node.right), (node.right, node.left)):
                if (isinstance(number, ast.Constant) and isinstance(number.value, (int, float))
                        and STANDARD_ERROR.match(_name(other) or "")):
                    found[id(number)] = number
    return sorted(found.values(), key=lambda n: (n.lineno, n.col_offset))


def offenders() -> list[tuple[str, str, float]]:
    out = []
    for root in ROOTS:
        for path in sorted(root.rglob("*.py")):
            if path in HOMES:
                continue
            lines = path.read_text().splitlines()
            for node in tolerance_literals(ast.parse(path.read_text())):
                out.append((str(path.relative_to(PACKAGE)), lines[node.lineno - 1].strip(), node.value))
    return out


def test_no_tolerance_literal_in_a_check():
    found = offenders()
    unexplained = [f"fedtheory/{p}: {value!r} in `{line}`" for p, line, value in found
                   if (p, line, value) not in ALLOWED]
    assert not unexplained, ("tolerance literals in checks (name them in claims/tolerances.py or "
                             "conformance/tolerances.py, with why this size):\n" + "\n".join(unexplained))


def test_allow_list_entries_still_apply():
    stale = set(ALLOWED) - set(offenders())
    assert not stale, f"allow-list entries that no longer match a literal (remove them): {sorted(stale)}"


def _flagged(source: str) -> list[float]:
    return [n.value for n in tolerance_literals(ast.parse(source))]


def test_the_rules_catch_tolerances_and_leave_instance_data():
    # caught: comparisons, closeness tolerances, tolerance names, Evidence bounds, standard-error multipliers
    assert _flagged("ok = err <= 1e-12") == [1e-12]
    assert _flagged("ok = x <= bound * (1 + 1e-9)") == [1e-9]
    assert _flagged("ok = np.allclose(a, b, 1e-7)") == [1e-7]
    assert _flagged("ok = math.isclose(a, b, rel_tol=1e-10, abs_tol=1e-300)") == [1e-10, 1e-300]
    assert _flagged("tol = 1e-6 * d0") == [1e-6]
    assert _flagged("f(x, rtol=1e-8)") == [1e-8]
    assert _flagged("floor = 1e-12 * scale") == [1e-12]
    assert _flagged("def check(impl, rtol: float = 1e-8): pass") == [1e-8]
    assert _flagged("Evidence(desc, err, 1e-12, ok)") == [1e-12]
    assert _flagged("ok = mean - 4 * se <= bound") == [4]
    assert _flagged("s = 3 * standard_error") == [3]
    assert _flagged("ok = abs(z) <= 5.0") == [5.0]
    assert _flagged("ok = min(z_mean) >= 4") == [4]
    # left alone: instance data
    assert _flagged("alg = FedDyn(alpha=1.0, threshold=1e-3)") == []
    assert _flagged("space = Param('mu', 1e-3, 0.5, log=True)") == []
    assert _flagged("for eta in (1e-3, 1e-4): run(eta)") == []
    assert _flagged("ok = err <= TOL and n > 1") == []
    assert _flagged("eta = 0.5 / beta") == []
    assert _flagged("ok = abs(z) <= Z_MONTE_CARLO and z != 0") == []
