"""Importing a user's module by name, as ``python -m`` would: the current directory comes first on the path.

A console script (``fedtheory conform mymodule:make``) runs with the script's folder on ``sys.path``, not the
current directory, so a module next to the user would not be found although ``python -m fedtheory`` finds it.
"""
from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

__all__ = ["import_user_module"]


def import_user_module(name: str) -> ModuleType:
    """Import ``name`` (``"package.module"``) with the current directory on ``sys.path``, as ``python -m`` does.

    ModuleNotFoundError names the module and the directory searched first.
    """
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and name.startswith(exc.name):
            raise ModuleNotFoundError(f"no module named {exc.name!r} (searched the current directory {cwd} "
                                      "first, then the installed packages)", name=exc.name) from None
        raise
