"""Which ledger papers and which test files can see a module: derived from the static import graph.

Rules (documented in docs/verification-power.md):
  * every ``import``/``from ... import`` statement of a file counts, including those inside functions
    (claims modules import algorithms lazily); ``from pkg import name`` is an edge to ``pkg.name`` when that
    is a module, else to ``pkg``;
  * a package ``__init__`` that auto-loads its submodules (``load_submodules``: algorithms, compressors,
    claims, ...) imports every submodule, since a registry lookup (``ALGORITHMS``, ``COMPRESSORS``) reaches
    them all;
  * a parent package's ``__init__`` is not an implicit edge (``fedtheory/__init__`` imports nothing), and a
    submodule's own import of its auto-loading parent (``claims.registry.load_all``) is not an edge either;
  * the closure of these edges from a claims module (resp. a test file) is what it can see; a claims
    module's papers are the ``paper="..."`` literals of its ``@claim`` registrations.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path


def module_name(root: Path, path: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


class ImportGraph:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.files: dict[str, Path] = {}
        for p in sorted((self.root / "fedtheory").rglob("*.py")):
            self.files[module_name(self.root, p)] = p
        for p in sorted((self.root / "tests").rglob("*.py")):  # tests/ mirrors the package in folders
            self.files[module_name(self.root, p)] = p
        self.edges = {m: self._edges(m) for m in self.files}

    def _is_package(self, mod: str) -> bool:
        return self.files.get(mod, Path("x")).name == "__init__.py"

    def _edges(self, mod: str) -> set[str]:
        path = self.files[mod]
        tree = ast.parse(path.read_text())
        pkg = mod if self._is_package(mod) else mod.rpartition(".")[0]
        out: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = pkg.split(".")
                    base_parts = base_parts[: len(base_parts) - node.level + 1]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for a in node.names:
                    cand = f"{base}.{a.name}"
                    out.add(cand if cand in self.files else base)
        if path.name == "__init__.py" and "load_submodules" in path.read_text():
            out.update(m for m in self.files if m.rpartition(".")[0] == mod)
        # A submodule importing its own auto-loading parent (registry.load_all) is the registry's lookup of
        # everything, not a dependency of that submodule's checks.
        out = {m for m in out if not (self._autoloads(m) and mod.startswith(m + "."))}
        return {m for m in out if m in self.files}

    def _autoloads(self, mod: str) -> bool:
        path = self.files.get(mod)
        return path is not None and path.name == "__init__.py" and "load_submodules" in path.read_text()

    @lru_cache(maxsize=None)  # noqa: B019 -- one graph per run, kept for the whole run
    def closure(self, mod: str) -> frozenset[str]:
        seen, stack = {mod}, [mod]
        while stack:
            for nxt in self.edges[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return frozenset(seen)

    def claim_papers(self, mod: str) -> set[str]:
        tree = ast.parse(self.files[mod].read_text())
        # module-level NAME = "literal" constants (claims modules write paper=PAPER)
        consts = {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                  and isinstance(node.value, ast.Constant) for t in node.targets if isinstance(t, ast.Name)}
        papers = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "claim":
                for kw in node.keywords:
                    if kw.arg == "paper" and isinstance(kw.value, ast.Constant):
                        papers.add(kw.value.value)
                    elif kw.arg == "paper" and isinstance(kw.value, ast.Name) and kw.value.id in consts:
                        papers.add(consts[kw.value.id])
                    elif kw.arg == "paper" and mod.split(".")[:2] == ["fedtheory", "claims"] and mod.count(".") >= 3:
                        # a paper's package (fedtheory.claims.<key>.<module>) imports its PAPER key from _shared
                        papers.add(mod.split(".")[2])
                    elif kw.arg == "paper":
                        raise ValueError(f"{mod}: cannot resolve paper={ast.unparse(kw.value)} statically")
        return papers

    def papers_for(self, target: str) -> list[str]:
        papers: set[str] = set()
        for mod in self.files:
            if mod.startswith("fedtheory.claims.") and target in self.closure(mod):
                papers |= self.claim_papers(mod)
        return sorted(papers)

    def tests_for(self, target: str) -> list[str]:
        return sorted(str(self.files[m].relative_to(self.root)) for m in self.files
                      if m.startswith("tests.") and m.rpartition(".")[2].startswith("test_")
                      and target in self.closure(m))


def file_to_module(root: Path, file: str) -> str:
    return module_name(Path(root), Path(root) / file)
