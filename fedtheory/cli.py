"""The ``fedtheory`` command: ``verify``, ``bench`` and ``problems`` (one module per subcommand in
:mod:`fedtheory.commands`, each providing ``register(subparsers)`` that sets ``func`` on its parser)."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import Sequence

from . import __version__, commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fedtheory", description=__doc__.split("\n")[0])
    # the installed distribution's version (fedtheory.__version__ reads the package metadata)
    parser.add_argument("--version", action="version", version=f"fedtheory {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{commands.__name__}.{info.name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
