"""The package's shape: imports run one way (no cycles, each layer imports only the layers below it), no module
over 700 lines, and no underscored name used across modules.

The import graph is read statically (``ast``) from every ``.py`` file under ``fedtheory/``:

* every ``import`` / ``from ... import`` counts, at module level and inside functions (a lazy import defers an
  optional dependency, but a lazy import of a module that imports you back is still a cycle in the design),
  and so do those under ``if TYPE_CHECKING``;
* ``from pkg import name`` is an edge to the module ``pkg.name`` when there is one, else to ``pkg``;
* ``importlib.import_module("fedtheory.x")`` counts; with an f-string (``f"fedtheory.papers.{key}"``,
  ``f"{__name__}.{key}"``) it is an edge to every module under the literal prefix, or, when the call is followed
  by an attribute (``import_module(f"fedtheory.papers.{key}").PAPER``), to those that define that name;
* a package ``__init__`` that calls ``load_submodules`` (fedtheory/autoload.py) imports each of its public
  submodules;
* importing ``a.b.c`` does not count as importing the packages ``a`` and ``a.b`` (their ``__init__`` files run,
  but they are not what the importer depends on).

A module name built at run time can hide an edge from any reader, so the graph the code *executes* is recorded as
well (:func:`executed_graph`): a fresh interpreter imports every module with ``builtins.__import__`` and
``importlib.import_module`` wrapped, recording importer -> imported for every import statement and every
``import_module`` call that runs, whatever its argument. Both graphs must be free of cycles.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import fedtheory

ROOT = Path(fedtheory.__file__).resolve().parent.parent
PACKAGE = ROOT / "fedtheory"
MAX_LINES = 700

# Known offenders (none today): an entry states the reason it is still there, and one that no longer applies
# fails the test, so these lists can only shrink.
KNOWN_CYCLE_EDGES: frozenset[tuple[str, str]] = frozenset()
KNOWN_LONG_MODULES: frozenset[str] = frozenset()
KNOWN_PRIVATE_IMPORTS: frozenset[tuple[str, str]] = frozenset()

#: The layers, lowest first: a module may import its own component and the components of lower layers only.
#: A component is the first name under fedtheory (``fedtheory.problems.quadratic`` -> ``problems``); the
#: components of one layer are independent of each other. docs/design.md ("Layout") explains them.
LAYERS: tuple[frozenset[str], ...] = tuple(frozenset(layer.split()) for layer in (
    "fedtheory validation linalg files expressions autoload trace optional user_code montecarlo",  # leaves
    "prox_l1 participation compressors",                              # numerical kernels
    "problems theory metrics papers",                                 # exact constants; bounds; inventories
    "local torch catalogue strategies testing references",            # built on the problems
    "algorithms",
    "run plotting pep",                                               # pep: exact worst cases, no claims
    "experiments",                                                    # the papers' neural experiments (runs)
    "claims bench conformance",                                       # what runs the algorithms
    "coverage",                                                       # what reads the claims: the statuses
    "worstcase report",
    "extend ledger",                                                  # the claim API; running the ledger
    "pytest_plugin commands",
    "cli",
    "__main__",
))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@dataclass
class Graph:
    files: dict[str, Path]
    edges: dict[str, set[str]] = field(default_factory=dict)
    #: (importer, imported module, private name or "" for a private module, line)
    private: list[tuple[str, str, str, int]] = field(default_factory=list)


@lru_cache(maxsize=None)
def top_level_names(path: Path) -> frozenset[str]:
    """The names a module defines at its top level (functions, classes, assignments, imports)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names)


def _resolve_from(mod: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = (mod if is_package else mod.rpartition(".")[0]).split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _dynamic_prefix(call: ast.Call, mod: str, modules_bound: dict[str, str]) -> tuple[str, bool] | None:
    """The literal module name (or f-string prefix, ``exact=False``) of ``importlib.import_module(...)``."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "import_module" and call.args):
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value, True
    while isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Add):  # "a" + b: the left operand's prefix
        arg = arg.left
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg is not call.args[0]:
        return arg.value, False
    if not isinstance(arg, ast.JoinedStr):
        return None
    prefix = ""
    for value in arg.values:
        if isinstance(value, ast.Constant):
            prefix += str(value.value)
            continue
        inner = value.value if isinstance(value, ast.FormattedValue) else None
        if isinstance(inner, ast.Name) and inner.id == "__name__":
            prefix += mod
        elif (isinstance(inner, ast.Attribute) and inner.attr == "__name__" and isinstance(inner.value, ast.Name)
              and inner.value.id in modules_bound):
            prefix += modules_bound[inner.value.id]
        else:
            break
    return prefix, False


def _module_edges(graph: Graph, mod: str) -> set[str]:
    path = graph.files[mod]
    is_package = path.name == "__init__.py"
    source = path.read_text()
    tree = ast.parse(source)
    out: set[str] = set()
    modules_bound: dict[str, str] = {}  # local name -> fedtheory module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "fedtheory":
                    out.add(alias.name)
                    modules_bound[alias.asname or alias.name] = alias.name
                    for part in alias.name.split(".")[1:]:
                        if is_private(part):
                            graph.private.append((mod, alias.name, "", node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(mod, is_package, node)
            if base.split(".")[0] != "fedtheory":
                continue
            if any(is_private(part) for part in base.split(".")):
                graph.private.append((mod, base, "", node.lineno))
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                if candidate in graph.files:
                    out.add(candidate)
                    modules_bound[alias.asname or alias.name] = candidate
                    if is_private(alias.name):
                        graph.private.append((mod, candidate, "", node.lineno))
                else:
                    out.add(base)
                    if is_private(alias.name):
                        graph.private.append((mod, base, alias.name, node.lineno))
    looked_up = {id(node.value): node.attr for node in ast.walk(tree)
                 if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            found = _dynamic_prefix(node, mod, modules_bound)
            if found and found[0].startswith("fedtheory"):
                prefix, exact = found
                attr = looked_up.get(id(node))
                out.update([prefix] if exact else [m for m in graph.files if m.startswith(prefix)
                                                   and (attr is None or attr in top_level_names(graph.files[m]))])
        # module.attribute on an imported fedtheory module: a private attribute is a private name used here
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id in modules_bound and is_private(node.attr)):
            graph.private.append((mod, modules_bound[node.value.id], node.attr, node.lineno))
    if is_package and "load_submodules(" in source:
        out.update(m for m in graph.files if m.rpartition(".")[0] == mod and not is_private(m.rpartition(".")[2]))
    return {m for m in out if m in graph.files and m != mod}


@lru_cache(maxsize=1)
def import_graph() -> Graph:
    graph = Graph(files={module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))})
    for mod in graph.files:
        graph.edges[mod] = _module_edges(graph, mod)
    return graph


#: Run in a fresh interpreter: import every module named on the command line with the import machinery wrapped, and
#: print the fedtheory -> fedtheory edges that executed (and the modules that could not be imported) as JSON.
TRACER = r"""
import builtins, importlib, importlib.util, json, sys

# autoload.load_submodules imports a package's submodules on the package's behalf: its imports are its caller's
MECHANISM = {"fedtheory.autoload"}
edges, failed = set(), {}
real_import, real_import_module = builtins.__import__, importlib.import_module


def record(importer, imported):
    if importer.split(".")[0] == imported.split(".")[0] == "fedtheory" and importer != imported:
        edges.add((importer, imported))


def traced_import(name, globals=None, locals=None, fromlist=(), level=0):
    module = real_import(name, globals, locals, fromlist, level)
    importer = (globals or {}).get("__name__") or ""
    absolute = importlib.util.resolve_name("." * level + name, globals.get("__package__")) if level else name
    for item in fromlist or ():  # from pkg import name: the module pkg.name when there is one, else pkg
        record(importer, f"{absolute}.{item}" if f"{absolute}.{item}" in sys.modules else absolute)
    if not fromlist:
        record(importer, absolute)
    return module


def traced_import_module(name, package=None):
    module = real_import_module(name, package)
    frame = sys._getframe(1)
    while frame.f_globals.get("__name__") in MECHANISM:
        frame = frame.f_back
    record(frame.f_globals.get("__name__") or "", module.__name__)
    return module


builtins.__import__, importlib.import_module = traced_import, traced_import_module
for name in sys.argv[1:]:
    try:
        real_import_module(name)
    except Exception as exc:
        failed[name] = [type(exc).__name__, getattr(exc, "name", None) or "", str(exc)]
print(json.dumps({"edges": sorted(edges), "failed": failed}))
"""


@lru_cache(maxsize=1)
def executed_graph() -> tuple[dict[str, set[str]], dict[str, list[str]]]:
    """The import edges that execute when every module is imported (``__main__`` runs the CLI, so it is left out;
    its one import is read statically), and the modules that could not be imported, with why."""
    files = import_graph().files
    modules = [m for m in files if not m.endswith("__main__")]
    done = subprocess.run([sys.executable, "-c", TRACER, *modules], capture_output=True, text=True, cwd=ROOT,
                          check=True)
    found = json.loads(done.stdout.splitlines()[-1])
    edges: dict[str, set[str]] = {m: set() for m in files}
    for importer, imported in found["edges"]:
        if importer in files and imported in files:
            edges[importer].add(imported)
    return edges, found["failed"]


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the components with more than one module (or a self-loop)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return components


def shortest_cycle(edges: dict[str, set[str]], start: str, within: set[str]) -> list[str]:
    """A shortest import cycle through ``start`` inside one strongly connected component (breadth first)."""
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(edges[node] & within):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [start] + path[::-1][1:] + [start] if len(path) > 1 else [start, node, start]
                if nxt not in parent:
                    parent[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    raise AssertionError(f"{start} is on no cycle inside {sorted(within)}")


def component(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def package_private(importer: str, module: str, name: str) -> bool:
    """A private module (``_shared``) used by a module of its own package: private to that package, not to a
    module (a paper's claims share their instance builders this way; nothing outside the package imports it)."""
    if name:
        return False
    package, _, last = module.rpartition(".")
    return is_private(last) and importer.rpartition(".")[0] == package


# ------------------------------------------------------------------------------------------------------------
# The checks
# ------------------------------------------------------------------------------------------------------------

def test_the_graph_sees_lazy_dynamic_and_autoloaded_imports():
    """The reader finds the edges the rules above promise, on modules whose imports are known."""
    edges = import_graph().edges
    assert "fedtheory.prox_l1" in edges["fedtheory.problems.quadratic"]             # from ..prox_l1 import
    assert "fedtheory.plotting" in edges["fedtheory.bench.results"]                # lazy, inside a function
    assert "fedtheory.algorithms.fedavg" in edges["fedtheory.algorithms"]          # load_submodules
    assert "fedtheory.papers.fedred" in edges["fedtheory.papers"]                  # f"{__name__}.{key}"
    assert "fedtheory.papers.fedred_paths" not in edges["fedtheory.papers"]        # ... .PAPER: it has none
    assert "fedtheory.commands.verify" in edges["fedtheory.cli"]                   # f"{commands.__name__}..."
    assert "fedtheory.problems.base" in edges["fedtheory.algorithms.federated"]    # a submodule, not the package


def test_cycle_detection_names_the_cycle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    assert strongly_connected(edges) == [["a", "b", "c"]]
    assert shortest_cycle(edges, "a", {"a", "b", "c"}) == ["a", "b", "c", "a"]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    graph = import_graph()
    edges = {m: {n for n in targets if (m, n) not in KNOWN_CYCLE_EDGES} for m, targets in graph.edges.items()}
    cycles = [" -> ".join(shortest_cycle(edges, comp[0], set(comp))) for comp in strongly_connected(edges)]
    assert not cycles, "import cycles (module-level and lazy imports both count):\n  " + "\n  ".join(cycles)


def test_the_executed_graph_sees_imports_whose_name_is_built():
    """The recorder finds a module-level import, a relative ``from . import``, and an ``import_module`` target
    built by concatenation at run time (fedtheory.conformance.power loads every family's variants)."""
    edges, _ = executed_graph()
    assert "fedtheory.prox_l1" in edges["fedtheory.problems.quadratic"]
    assert "fedtheory.algorithms.fedavg" in edges["fedtheory.algorithms"]     # load_submodules, on its behalf
    assert "fedtheory.conformance.families.fedavg.variants" in edges["fedtheory.conformance.families"]
    assert "fedtheory.algorithms.fedavg" not in edges["fedtheory.autoload"]      # ... not autoload's own


def test_every_module_imports_or_lacks_only_an_optional_dependency():
    """A module the recorder could not import hides its edges: only a missing third-party package excuses it."""
    _, failed = executed_graph()
    broken = sorted(f"{m}: {why[0]}: {why[2]}" for m, why in failed.items()
                    if why[0] != "ModuleNotFoundError" or why[1].split(".")[0] in ("fedtheory", ""))
    assert not broken, "modules that fail to import:\n  " + "\n  ".join(broken)


def test_no_executed_import_cycles():
    edges, _ = executed_graph()
    cycles = [" -> ".join(shortest_cycle(edges, comp[0], set(comp))) for comp in strongly_connected(edges)]
    assert not cycles, "import cycles that execute (imports whose module name is built at run time count):\n  " + \
        "\n  ".join(cycles)


def test_known_cycle_edges_still_exist():
    """An allowlisted edge that is gone must leave the list, so the list only shrinks."""
    stale = sorted(e for e in KNOWN_CYCLE_EDGES if e[1] not in import_graph().edges.get(e[0], set()))
    assert not stale, f"remove from KNOWN_CYCLE_EDGES: {stale}"


def test_imports_follow_the_layers():
    layer_of = {name: i for i, layer in enumerate(LAYERS) for name in layer}
    graph = import_graph()
    unplaced = sorted({component(m) for m in graph.files} - set(layer_of))
    assert not unplaced, f"place these components in LAYERS: {unplaced}"
    upward = sorted(f"{m} (layer {layer_of[component(m)]}) imports {n} (layer {layer_of[component(n)]})"
                    for m, targets in graph.edges.items() for n in targets
                    if component(m) != component(n) and layer_of[component(n)] >= layer_of[component(m)]
                    and (m, n) not in KNOWN_CYCLE_EDGES)
    assert not upward, "imports against the layering:\n  " + "\n  ".join(upward)


def test_no_module_over_700_lines():
    long = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in sorted(PACKAGE.rglob("*.py"))}
    offenders = sorted(f"{path}: {n} lines" for path, n in long.items()
                       if n > MAX_LINES and path not in KNOWN_LONG_MODULES)
    assert not offenders, f"modules over {MAX_LINES} lines (split them by concept):\n  " + "\n  ".join(offenders)
    stale = sorted(p for p in KNOWN_LONG_MODULES if long.get(p, 0) <= MAX_LINES)
    assert not stale, f"remove from KNOWN_LONG_MODULES: {stale}"


def test_no_private_name_used_across_modules():
    found = {(importer, f"{module}.{name}" if name else module): line
             for importer, module, name, line in import_graph().private}
    offenders = sorted(f"{importer}:{line} uses {target}" for (importer, target), line in found.items()
                       if (importer, target) not in KNOWN_PRIVATE_IMPORTS
                       and not package_private(importer, target, ""))
    assert not offenders, ("underscored names used across modules (make them public with a docstring, or move "
                           "them where they are used):\n  " + "\n  ".join(offenders))
    stale = sorted(KNOWN_PRIVATE_IMPORTS - set(found))
    assert not stale, f"remove from KNOWN_PRIVATE_IMPORTS: {stale}"


#: What a reference transcription (fedtheory/references/) may not import: the implementations it checks and their
#: numerical helpers (the expected side shares no helper with the code under test, docs/design.md).
UNDER_TEST = {"algorithms", "local", "compressors", "prox_l1"}


def test_references_import_nothing_they_check():
    graph = import_graph()
    shared = sorted(f"{m} imports {n}" for m, targets in graph.edges.items() if component(m) == "references"
                    for n in targets if component(n) in UNDER_TEST)
    assert not shared, "a reference must not import the code it checks:\n  " + "\n  ".join(shared)


#: The framework drivers (docs/design.md, "Add a framework driver"): one module per framework under
#: fedtheory/conformance/drivers/. Those run out of process live in the framework's venv without fedtheory.
DRIVERS = "fedtheory.conformance.drivers"
IN_PROCESS_DRIVERS = {"flower", "pfl", "sdane"}


def test_drivers_are_leaves_and_out_of_process_ones_import_no_fedtheory():
    """Nothing in the package imports a driver (importing fedtheory imports no framework), and a driver run in a
    framework's venv imports nothing of fedtheory (the venv does not have it)."""
    graph = import_graph()
    drivers = {m for m in graph.files if m.startswith(DRIVERS + ".")}
    assert {m.rpartition(".")[2] for m in drivers} >= IN_PROCESS_DRIVERS | {"flgo", "nvflare"}
    # fedtheory.conformance's lazy import_module(f"{__name__}.{_LAZY[name]}") reads as an edge to every submodule;
    # _LAZY names kit, search and instance only
    into = sorted(f"{m} imports {n}" for m, targets in graph.edges.items() for n in targets
                  if n in drivers and m not in drivers and m != "fedtheory.conformance")
    assert not into, "the drivers are leaves, imported by name only by tools and tests:\n  " + "\n  ".join(into)
    remote = sorted(m for m in drivers if m.rpartition(".")[2] not in IN_PROCESS_DRIVERS)
    for m in remote:
        source = graph.files[m].read_text()
        imported = {alias.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Import)
                    for alias in node.names} | {node.module or "." for node in ast.walk(ast.parse(source))
                                                if isinstance(node, ast.ImportFrom) and (node.level or node.module)}
        assert not any(name.startswith("fedtheory") or name.startswith(".") for name in imported), \
            f"{m} runs in the framework's venv: it may import the framework, NumPy and torch, not fedtheory"
