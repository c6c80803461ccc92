"""Optional dependencies: imported when a feature needs them, with a one-line hint naming the extra to install.

The base install (``pip install fedtheory``) runs the claims ledger and every command's ``--help``; what needs more
names its extra. The command line turns :class:`MissingExtra` into that one line and exit status 2, with no
traceback.
"""
from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["EXTRAS", "MissingExtra", "require"]

#: The import name of each optional package, the extra that installs it, and how to install it.
EXTRAS: dict[str, tuple[str, str]] = {
    "hypothesis": ("test", "pip install 'fedtheory[test]'"),
    "torch": ("torch", "pip install torch==2.13.0 'fedtheory[torch]' (the CPU build first)"),
    "mnist1d": ("experiments", "pip install torch==2.13.0 'fedtheory[experiments]' (the CPU build first)"),
    "flwr": ("flower", "pip install 'fedtheory[flower]'"),
    "pfl": ("pfl", "pip install torch==2.13.0 'fedtheory[pfl]'"),
    "PEPit": ("worst-case", "pip install 'fedtheory[worst-case]'"),
    "dask": ("scale", "pip install 'fedtheory[scale]'"),
    "distributed": ("scale", "pip install 'fedtheory[scale]'"),
    "pandas": ("bench", "pip install 'fedtheory[bench]'"),
    "pyarrow": ("bench", "pip install 'fedtheory[bench]'"),
}


class MissingExtra(ImportError):
    """An optional package is not installed; the message is one line naming what needs it and how to install it."""


def require(module: str, needed_by: str) -> ModuleType:
    """Import ``module`` (an optional dependency of ``needed_by``, e.g. ``"fedtheory conform"``), or raise
    :class:`MissingExtra` with the install line of its extra."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.partition(".")[0]
        _, how = EXTRAS.get(top, ("", f"pip install {top}"))
        raise MissingExtra(f"{needed_by} needs {top}, which is not installed: {how}") from exc
