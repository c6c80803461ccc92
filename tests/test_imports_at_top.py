"""Imports read top-down (docs/design.md, "Conventions the tests hold"): an import inside a function is either of
an optional dependency, or of a fedtheory module that imports one when it is imported (``fedtheory.torch``
imports torch), or it carries the comment ``# here, not at the top: <reason>`` (a heavy library that
``import fedtheory.claims`` would pay for, a standard module of a later Python, an optional extra reached through
a lazy attribute). The comment may sit on the import or on the line above a run of imports.

The optional dependencies are derived, not typed again: every requirement of pyproject.toml's extras that is not a
base dependency, and every package of :data:`fedtheory.optional.EXTRAS`.
"""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import pytest

import fedtheory
from fedtheory.optional import EXTRAS

ROOT = Path(fedtheory.__file__).resolve().parent.parent
PACKAGE = ROOT / "fedtheory"
#: The comment that explains a function-level import: the marker followed by a reason.
REASON = re.compile(r"#.*here, not at the top:\s*\S")
#: Run inside a third-party framework's venv, where importing the framework lazily is their purpose; their own
#: rules are in tests/test_architecture.py (docs/design.md, "Add a framework driver").
EXEMPT = ("fedtheory.conformance.drivers", "fedtheory.conformance.remote_worker")


def normalise(name: str) -> str:
    """A distribution or import name compared the way package indexes do (PEPit ~ pepit, jupyter-client ~
    jupyter_client)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def requirement_name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9_.-]+", requirement.strip()).group(0)


def optional_packages(pyproject: Mapping, extras: Iterable[str]) -> frozenset[str]:
    """The normalised names of the optional dependencies: the extras' requirements (fedtheory's own and the base
    dependencies left out) and the packages of ``extras`` (:data:`fedtheory.optional.EXTRAS`)."""
    project = pyproject["project"]
    base = {normalise(requirement_name(r)) for r in project["dependencies"]}
    names = {normalise(requirement_name(r)) for reqs in project["optional-dependencies"].values() for r in reqs}
    return frozenset((names - base - {"fedtheory"}) | {normalise(e) for e in extras})


@lru_cache(maxsize=None)
def _distributions() -> Mapping[str, list[str]]:
    return metadata.packages_distributions()


def is_optional(name: str, optional: frozenset[str]) -> bool:
    """``name`` (an absolute import) is of an optional dependency, by its import name or installed distribution."""
    top = name.partition(".")[0]
    return normalise(top) in optional or any(normalise(d) in optional for d in _distributions().get(top, ()))


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = (module if is_package else module.rpartition(".")[0]).split(".")
    return ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))


def imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """What an import statement may import: ``import a.b`` -> a.b; ``from p import x`` -> p and p.x (x may be a
    submodule)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    source = _resolve(node, module, is_package)
    return [source] + [f"{source}.{a.name}" for a in node.names]


def top_level_imports(tree: ast.Module, module: str, is_package: bool, submodules: Iterable[str] = ()) -> list[str]:
    """Everything the module imports when it is imported: import statements outside functions (in ``try`` and
    ``if`` too, not under ``if TYPE_CHECKING``), ``require("package", ...)`` calls (fedtheory.optional), and the
    public ``submodules`` of a package that calls ``load_submodules`` (fedtheory/autoload.py)."""
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            return
        if isinstance(node, ast.If) and _type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.extend(imported(node, module, is_package))
        elif isinstance(node, ast.Call):
            called = getattr(node.func, "id", getattr(node.func, "attr", None))
            if (called == "require" and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                found.append(node.args[0].value)
            elif called == "load_submodules":
                found.extend(f"{module}.{s}" for s in submodules if not s.startswith("_"))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def parents(module: str) -> Iterator[str]:
    """The packages whose ``__init__`` runs before ``module``: a.b.c -> a.b, a."""
    while "." in module:
        module = module.rpartition(".")[0]
        yield module


def modules_needing_optional(graph: Mapping[str, list[str]], optional: frozenset[str]) -> frozenset[str]:
    """The modules of ``graph`` (module -> what it imports when imported) that import an optional dependency when
    they are imported, directly, through another such module, or through a parent package."""
    needing: set[str] = set()
    changed = True
    while changed:
        changed = False
        for mod, names in graph.items():
            if mod in needing:
                continue
            targets = [n for n in names if n in graph or not n.startswith("fedtheory")]
            if (any(p in needing for p in parents(mod))
                    or any(is_optional(n, optional) if n not in graph else n in needing for n in targets)):
                needing.add(mod)
                changed = True
    return frozenset(needing)


def _function_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found: dict[int, ast.Import | ast.ImportFrom] = {}  # by id: a nested function is walked from each enclosing one
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.update((id(c), c) for c in ast.walk(node) if isinstance(c, (ast.Import, ast.ImportFrom)))
    return sorted(found.values(), key=lambda n: n.lineno)


def explained(node: ast.Import | ast.ImportFrom, lines: list[str], function_imports: set[int]) -> bool:
    """The import carries the reason, or a comment line with it stands right above the run of imports it is in."""
    if any(REASON.search(line) for line in lines[node.lineno - 1: node.end_lineno]):
        return True
    above = node.lineno - 2
    while above >= 0 and (above + 1) in function_imports:
        above -= 1
    return above >= 0 and lines[above].lstrip().startswith("#") and bool(REASON.search(lines[above]))


def unexplained_imports(source: str, module: str, is_package: bool, optional: frozenset[str],
                        needing: frozenset[str]) -> list[tuple[int, str]]:
    """(line, statement) of every function-level import of ``source`` that is not of an optional dependency, not
    of a module in ``needing``, and without the reason."""
    tree = ast.parse(source)
    lines = source.splitlines()
    nodes = _function_imports(tree)
    starts = {line for n in nodes for line in range(n.lineno, n.end_lineno + 1)}
    bad = []
    for node in nodes:
        names = imported(node, module, is_package)
        if isinstance(node, ast.ImportFrom):  # `from p import x` is of p, or of its submodule p.x
            allowed = (is_optional(names[0], optional) or names[0] in needing
                       or all(n in needing for n in names[1:]))
        else:
            allowed = all(is_optional(n, optional) or n in needing for n in names)
        if not allowed and not explained(node, lines, starts):
            bad.append((node.lineno, lines[node.lineno - 1].strip()))
    return bad


def module_of(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


@lru_cache(maxsize=None)
def package() -> tuple[dict[str, tuple[Path, bool, str]], frozenset[str], frozenset[str]]:
    """Every module of fedtheory (name -> path, is a package, source), the optional packages, and the modules
    that import one when imported."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name, is_package = module_of(path)
        modules[name] = (path, is_package, path.read_text())
    tomllib = pytest.importorskip("tomllib", reason="pyproject.toml is read with tomllib, standard from Python 3.11")
    optional = optional_packages(tomllib.loads((ROOT / "pyproject.toml").read_text()), EXTRAS)
    children: dict[str, list[str]] = {}
    for name in modules:
        parent, _, child = name.rpartition(".")
        children.setdefault(parent, []).append(child)
    graph = {name: top_level_imports(ast.parse(src), name, is_package, children.get(name, ()))
             for name, (_, is_package, src) in modules.items()}
    return modules, optional, modules_needing_optional(graph, optional)


# ----- the rules, on small sources -----

OPTIONAL = frozenset({"torch", "hypothesis"})


def _bad(source: str, module: str = "fedtheory.claims.paper.check", needing: Iterable[str] = ()) -> list[int]:
    return [line for line, _ in unexplained_imports(source, module, False, OPTIONAL, frozenset(needing))]


def test_the_rule_flags_an_unexplained_function_level_import():
    assert _bad("import json\n") == []  # module level
    assert _bad("def f():\n    import json\n") == [2]
    assert _bad("class C:\n    def m(self):\n        def g():\n            from . import y\n") == [4]
    assert _bad("if TYPE_CHECKING:\n    import x\ntry:\n    import y\nexcept ImportError:\n    pass\n") == []


def test_what_a_module_imports_when_imported():
    source = ("import a\nif TYPE_CHECKING:\n    import b\nelse:\n    import c\ntry:\n    from . import d\n"
              "except ImportError:\n    pass\nrequire('e', 'why')\nload_submodules(sys.modules[__name__], globals())\n"
              "def f():\n    import g\n")
    assert top_level_imports(ast.parse(source), "p", True, ["s", "_private"]) == ["a", "c", "p", "p.d", "e", "p.s"]


def test_the_rule_accepts_optional_dependencies_and_modules_that_import_one():
    assert _bad("def f():\n    import torch.nn\n    from hypothesis import strategies\n") == []
    assert _bad("def f():\n    from ...torch import TorchProblem\n", needing={"fedtheory.torch"}) == []
    assert _bad("def f():\n    from ... import torch\n", needing={"fedtheory.torch"}) == []
    assert _bad("def f():\n    from ... import torch, run\n", needing={"fedtheory.torch"}) == [2]
    assert _bad("def f():\n    from ...torch import TorchProblem\n") == [2]


def test_the_rule_accepts_a_reason_on_the_import_or_above_its_run_of_imports():
    assert _bad("def f():\n    import json  # here, not at the top: a reason\n") == []
    assert _bad("def f():\n    import json  # here, not at the top:\n") == [2]   # no reason given
    assert _bad("def f():\n    import json  # not at the top\n") == [2]
    assert _bad("def f():\n    # here, not at the top: why\n    import a\n    import b\n") == []
    assert _bad("def f():\n    # here, not at the top: why\n    import a\n    x = 1\n    import b\n") == [5]
    assert _bad("def f():\n    from x import (\n        a,  # here, not at the top: why\n    )\n") == []


def test_optional_packages_are_the_extras_less_the_base_and_fedtheory():
    pyproject = {"project": {"dependencies": ["numpy>=1.24", "scipy"],
                             "optional-dependencies": {"a": ["PEPit==0.5.1", "fedtheory[b]", "numpy>=2"],
                                                       "b": ["dask[distributed]>=2024.1", "jupyter_client>=8"]}}}
    assert optional_packages(pyproject, ["flwr"]) == {"pepit", "dask", "jupyter_client", "flwr"}


def test_a_module_needs_an_optional_dependency_through_its_imports_and_its_parents():
    graph = {"fedtheory.t": ["torch"], "fedtheory.t.m": [], "fedtheory.u": ["fedtheory.t"],
             "fedtheory.v": ["numpy", "fedtheory.w"], "fedtheory.w": [], "fedtheory.x": ["fedtheory.u.missing"]}
    assert modules_needing_optional(graph, OPTIONAL) == {"fedtheory.t", "fedtheory.t.m", "fedtheory.u"}


# ----- the package -----

def test_the_derived_lists_are_the_expected_ones():
    modules, optional, needing = package()
    assert {"torch", "hypothesis", "pepit", "pandas", "pyarrow", "mnist1d", "flwr", "distributed"} <= optional
    assert not {"numpy", "scipy", "matplotlib", "sympy", "cvxpy", "scikit_learn", "tqdm", "joblib"} & optional
    assert {"fedtheory.torch", "fedtheory.torch.mnist1d", "fedtheory.conformance.kit", "fedtheory.strategies"} <= needing
    # the base install runs these: an optional package imported at their top (or below them) would break it
    base = {"fedtheory", "fedtheory.claims", "fedtheory.cli", "fedtheory.commands.verify", "fedtheory.ledger",
            "fedtheory.report", "fedtheory.experiments", "fedtheory.conformance"}
    assert base <= set(modules)
    assert not base & needing, f"these need an optional dependency when imported: {sorted(base & needing)}"


def test_function_level_imports_are_optional_or_explained():
    modules, optional, needing = package()
    bad = [f"{path.relative_to(ROOT)}:{line}: {text}"
           for name, (path, is_package, source) in modules.items() if not name.startswith(EXEMPT)
           for line, text in unexplained_imports(source, name, is_package, optional, needing)]
    assert not bad, ("imports inside functions that are neither of an optional dependency nor explained: move them "
                     "to the top of the module, or say why with `# here, not at the top: <reason>` (docs/design.md):"
                     "\n  " + "\n  ".join(bad))
