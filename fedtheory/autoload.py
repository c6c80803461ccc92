"""Import every submodule of a package and re-export what each declares in ``__all__``.

Algorithm and claim modules register themselves on import; auto-loading means adding a module is the whole
of adding an algorithm or a claim (no central list to keep in sync).
"""
from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def load_submodules(package: ModuleType, namespace: dict) -> list[str]:
    exported: list[str] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for name in getattr(module, "__all__", []):
            namespace[name] = getattr(module, name)
            exported.append(name)
    return exported
