"""docs/design.md matches the code: every path, module, name and command it cites exists, and its claim example
is a claim that is registered, declared with keywords ``@claim`` takes and imports that resolve.

What counts as a citation is what design.md writes in backticks: a path (with a slash, or a ``.py``/``.md`` file;
``<paper>``-style placeholders stand for any one name), a dotted name (a module or an attribute: ``Evidence.holds``,
``algorithms.recording``, ``fedtheory.optional.require``), an identifier (a name defined somewhere in the package:
a function, class, attribute, field or parameter; ``cites``, ``narrower=``, ``@claim`` and ``example()`` forms
included), ``NAME = value`` (the constant has that value), and a command (``fedtheory verify --list``: the
subcommand and its options exist). Other spans (quoted values, prose fragments) are not citations.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
from functools import lru_cache
from pathlib import Path

import pytest

from fedtheory.claims import REGISTRY, claim
from fedtheory.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"
#: Where a cited path may live: a path is cited relative to any folder of these (``fedred/corollary21.py`` is
#: ``fedtheory/claims/fedred/corollary21.py``).
TREES = ("fedtheory", "tests", "benchmarks", "docs", "examples", ".ci")
IDENTIFIER = re.compile(r"^@?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?:=|\(.*\))?$")


def spans() -> list[str]:
    """The backticked spans of design.md's prose (its code block is checked by the example test below)."""
    prose = re.sub(r"```.*?```", "", DESIGN.read_text(), flags=re.S)
    return [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", prose)]  # a span may wrap a line


@lru_cache(maxsize=1)
def repo_paths() -> tuple[str, ...]:
    out: list[str] = [p.name for p in ROOT.iterdir() if p.is_file()]  # README.md, pyproject.toml, ...
    for tree in TREES:
        for path in (ROOT / tree).rglob("*"):
            if "__pycache__" not in path.parts:
                out.append(path.relative_to(ROOT).as_posix() + ("/" if path.is_dir() else ""))
    return tuple(out)


def path_exists(cited: str) -> bool:
    # <paper> and * stand for any one name
    pattern = re.sub(r"<[^>]+>|\\\*", "[^/]+", re.escape(cited).replace("\\<", "<").replace("\\>", ">"))
    regex = re.compile(r"(^|/)" + pattern + ("" if cited.endswith("/") else "/?") + "$")
    return any(regex.search(p) for p in repo_paths())


@lru_cache(maxsize=1)
def modules() -> dict[str, Path]:
    out = {}
    for path in (ROOT / "fedtheory").rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


@lru_cache(maxsize=1)
def defined_names() -> frozenset[str]:
    """Every name the package defines: functions, classes, assignments, class fields, parameters, attributes."""
    names: set[str] = set()
    for path in modules().values():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)
    return frozenset(names)


def dotted_exists(name: str) -> bool:
    """``name`` is a module (``fedtheory.x``, or the tail of one: ``algorithms.recording``), or an attribute chain
    from a module or from a class the package defines (``Evidence.holds``)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        head = ".".join(parts[:cut])
        owners = [m for m in modules() if m == head or m.endswith("." + head)]
        for module_name in owners:
            obj = importlib.import_module(module_name)
            if all_attributes(obj, parts[cut:]):
                return True
    try:  # a module of the standard library or a dependency (``html.escape``)
        if importlib.util.find_spec(parts[0]) is not None and all_attributes(importlib.import_module(parts[0]),
                                                                              parts[1:]):
            return True
    except (ImportError, ValueError):
        pass
    for module_name in modules():  # a class or function defined in some module, then its attributes
        source = modules()[module_name].read_text()
        if re.search(rf"^(class|def) {re.escape(parts[0])}\b", source, re.M):
            obj = importlib.import_module(module_name)
            if hasattr(obj, parts[0]) and all_attributes(getattr(obj, parts[0]), parts[1:]):
                return True
    return False


def all_attributes(obj: object, chain: list[str]) -> bool:
    for attr in chain:
        fields = getattr(obj, "__dataclass_fields__", {})
        if attr in fields:
            return True  # a dataclass field without a default is no class attribute
        if not hasattr(obj, attr):
            return False
        obj = getattr(obj, attr)
    return True


def command_exists(command: str) -> bool:
    """``fedtheory SUB --opt`` (or ``verify --opt``, ``--opt``): the subcommand and its options exist."""
    words = command.split()
    if words[0] == "fedtheory":
        words = words[1:]
    parser = build_parser()
    actions = {a.dest: a for a in parser._actions}
    subparsers = actions["command"].choices
    if words and words[0] in subparsers:
        options = {s for a in subparsers[words[0]]._actions for s in a.option_strings}
        return all(w in options for w in words[1:] if w.startswith("-"))
    options = {s for p in subparsers.values() for a in p._actions for s in a.option_strings}
    return not words or all(w in options for w in words if w.startswith("-")) and words[0].startswith("-")


def cited(span: str) -> str | None:
    """Why ``span`` is a citation that does not hold, or None (it holds, or it is not a citation)."""
    span = span.strip()
    if span.startswith(("python ", "pytest ", "pip ")):  # a command running a file or a tool: check the file
        files = [w for w in span.split() if w.endswith(".py")]
        return None if all(path_exists(f) for f in files) else f"no such file in {span!r}"
    if span.startswith("fedtheory ") or re.match(r"^(verify )?--[a-z]", span):
        if span.startswith("verify"):
            span = "fedtheory " + span
        return None if command_exists(span) else f"no such command or option: {span!r}"
    constant = re.match(r"^([A-Z_][A-Z0-9_]*) = (\S+)$", span)
    if constant:
        name, value = constant.groups()
        owners = [m for m, p in modules().items() if re.search(rf"^{name} = ", p.read_text(), re.M)]
        actual = [getattr(importlib.import_module(m), name) for m in owners]
        return None if any(a == ast.literal_eval(value) for a in actual) else f"{name} is {actual}, not {value}"
    if " " in span:
        return None
    if "/" in span or re.search(r"\.(py|md|toml|json|txt|cfg)$", span):
        return None if path_exists(span) else f"no such path: {span!r}"
    match = IDENTIFIER.match(span)
    if not match or span.startswith("__"):
        return None
    name = match.group(1)
    if "." in name:
        return None if dotted_exists(name) else f"no such module or attribute: {name!r}"
    if name in modules() or f"fedtheory.{name}" in modules() or name in defined_names():
        return None
    if importlib.util.find_spec(name) is not None:  # a module of the standard library or a dependency
        return None
    return f"no such name in the package: {name!r}"


def test_every_citation_of_design_md_exists():
    broken = sorted({f"`{s}`: {why}" for s in spans() if (why := cited(s))})
    assert not broken, "docs/design.md cites what the code does not have:\n  " + "\n  ".join(broken)


def test_the_checker_rejects_what_does_not_exist():
    """The checks above can fail: each shape of citation, misspelt, is caught."""
    assert cited("fedtheory/claims/tolerances.py") is None and cited("fedtheory/claims/tolerance.py")
    assert cited("fedtheory/claims/<paper>/") is None and cited("fedtheory/claim/<paper>/")
    assert cited("fedred/corollary21.py") is None and cited("docofl/lemmas_c.py")
    assert cited("docs/*.md") is None and cited("docs/*.rst") and cited("pyproject.toml") is None
    assert cited("Evidence.holds") is None and cited("Evidence.hold")
    assert cited("algorithms.recording") is None and cited("algorithms.recorder")
    assert cited("fedtheory.optional.require") is None and cited("fedtheory.optional.requires")
    assert cited("html.escape") is None and cited("html.escapes")
    assert cited("statement_coverage") is None and cited("statement_coverages")
    assert cited("narrower=") is None and cited("narrowest=")
    assert cited("Z_MONTE_CARLO = 5") is None and cited("Z_MONTE_CARLO = 4")
    assert cited("fedtheory verify --list") is None and cited("fedtheory verify --lists")
    assert cited("fedtheory conform --help") is None and cited("fedtheory conforms --help")
    assert cited("python benchmarks/certification.py") is None and cited("python benchmarks/certify.py")


def example() -> str:
    return DESIGN.read_text().split("```python\n", 1)[1].split("```", 1)[0]


def test_the_claim_example_is_a_registered_claim_declared_as_the_code_declares_it():
    code = example()
    decorator = ast.parse(code.replace("    ...\n", "    pass\n")).body
    imports = [node for node in decorator if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert imports, "the example shows where its names come from"
    exec(compile(ast.Module(body=imports, type_ignores=[]), "design.md", "exec"), {})  # noqa: S102
    function = next(node for node in decorator if isinstance(node, ast.FunctionDef))
    call = function.decorator_list[0]
    assert isinstance(call, ast.Call) and getattr(call.func, "id", "") == "claim"
    keywords = {k.arg: k.value for k in call.keywords}
    assert set(keywords) <= set(inspect.signature(claim).parameters), set(keywords) - set(
        inspect.signature(claim).parameters)
    claim_id = ast.literal_eval(keywords["id"])
    assert claim_id in REGISTRY, f"the example's claim {claim_id!r} is not registered"
    registered = REGISTRY[claim_id]
    assert registered.paper == ast.literal_eval(keywords["paper"])
    assert registered.kind == ast.literal_eval(keywords["kind"])
    assert function.name == registered.check.__name__
    # the check returns the verdict the claims use: an Evidence
    returned = [n.value for n in ast.walk(function) if isinstance(n, ast.Return)]
    assert returned and all(getattr(r.func, "id", "") == "Evidence" for r in returned if isinstance(r, ast.Call))


@pytest.mark.parametrize("span", ["docs/design.md", "tests/test_architecture.py"])
def test_paths_of_this_repository_resolve(span):
    assert cited(span) is None
