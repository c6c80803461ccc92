"""The fedtheory command line.

Each subcommand is one module of :mod:`fedtheory.commands` providing ``register(subparsers)``, which adds its
parser and sets ``func``. Parsers build with the base dependencies only; a subcommand that needs an optional
package imports it when it runs, and a missing one is reported in one line with the extra to install (exit 2).
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import Sequence

from . import __version__, commands
from .optional import MissingExtra

DESCRIPTION = ("Numerical verification of federated-optimization theory: run the claims ledger of five papers "
               "and the results they build on (verify), see which numbered statements it checks (coverage), check "
               "your own implementation against a paper's properties (conform), and run benchmark sweeps on the "
               "named problem catalogue (bench, problems).")


def subcommands() -> list[str]:
    """The names of the subcommands, one module of :mod:`fedtheory.commands` each."""
    return [m.name for m in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name)
            if not m.name.startswith("_")]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fedtheory", description=DESCRIPTION)
    # the installed distribution's version (fedtheory.__version__ reads the package metadata)
    parser.add_argument("--version", action="version", version=f"fedtheory {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in subcommands():
        importlib.import_module(f"{commands.__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except MissingExtra as exc:
        print(f"fedtheory {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
