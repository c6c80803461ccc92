"""``fedtheory conform PACKAGE.MODULE:FACTORY --as FAMILY``: check a third-party implementation against its
paper's properties (docs/conformance.md)."""
from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path
from typing import Any

from ..conformance.contract import ContractError, check_implementation
from ..conformance.families import FAMILIES
from ..optional import require
from ..user_code import import_user_module

#: Exit status of ``fedtheory conform`` by verdict (2 is bad input).
EXIT_CODES = {"pass": 0, "fail": 1, "inconclusive": 3}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("conform", help="Check an implementation against its paper's properties.",
                       description="Import FACTORY from PACKAGE.MODULE (the current directory is searched first, "
                                   "as with python -m), call it with no arguments to get the implementation, "
                                   "check it against the family's properties, print a table and write "
                                   "conformance.json and conformance.md. Exit status 0 if it conforms, 1 if a "
                                   "property fails, 2 on bad input, 3 if inconclusive (nothing failed but a core "
                                   "property could not be checked, e.g. on an opaque state; the report says which "
                                   "and why). Needs the test extra (hypothesis): "
                                   "pip install 'fedtheory[test]'.")
    p.add_argument("target", metavar="PACKAGE.MODULE:FACTORY",
                   help="The module to import and the function in it that returns the implementation.")
    p.add_argument("--as", dest="family", required=True, metavar="FAMILY",
                   help=f"The paper family to check against: {', '.join(FAMILIES)}.")
    p.add_argument("--hyper", action="append", default=[], metavar="NAME=VALUE",
                   help="A hyperparameter (repeatable), e.g. local_steps=5; VALUE is parsed as JSON, 'none' = None.")
    p.add_argument("--fixed", action="append", default=[], metavar="NAME",
                   help="A hyperparameter the implementation does not take (repeatable), e.g. server_step: the kit "
                        "keeps it at its value when it also draws hyperparameters in the paper's ranges.")
    p.add_argument("--rtol", type=float, default=1e-8,
                   help="The relative tolerance of identities (default %(default)g; about 1e-4 for float32 code).")
    p.add_argument("--max-examples", type=int, default=None, help="Hypothesis examples per property.")
    p.add_argument("--out", default="fedtheory-conformance", help="The output folder (default: %(default)s).")
    p.add_argument("--json", dest="json_file", metavar="FILE", default=None,
                   help="Also write the report as JSON to FILE: the verdict, every property's result and shrunk "
                        "counterexample, and the kit's version and git commit (the layout of conformance.json).")
    p.add_argument("--junit-xml", dest="junit_file", metavar="FILE", default=None,
                   help="Also write the report as JUnit XML to FILE for CI systems: one testcase per property, a "
                        "violated one as a failure with its counterexample, an unchecked core property as an "
                        "error (inconclusive), another property that does not apply as skipped.")
    p.set_defaults(func=main)


def _value(text: str) -> Any:
    if text.lower() == "none":
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def load(target: str, family: str | None = None) -> Any:
    """Import ``PACKAGE.MODULE:FACTORY`` (the current directory first, as ``python -m`` would), call the factory
    with no argument and return the implementation it makes.

    Anything that is not a factory taking no argument, or whose result the contract cannot call (for ``family``:
    :func:`fedtheory.conformance.contract.check_implementation`), raises ValueError with one sentence saying what
    was expected and what was given: bad input (exit 2), never a failed check (exit 1).
    """
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"target must be PACKAGE.MODULE:FACTORY, got {target!r}")
    mod = import_user_module(module)
    if not hasattr(mod, attr):
        raise ValueError(f"target {target!r}: module {module!r} has no attribute {attr!r}")
    factory = getattr(mod, attr)
    _require_factory(target, factory)
    try:
        impl = factory()
    except Exception as exc:  # the user's factory failed: bad input, said in one line rather than a traceback
        raise ValueError(f"calling the factory {target}() raised {type(exc).__name__}: {exc}") from None
    if family is not None:
        try:
            check_implementation(impl, family)
        except ContractError as exc:
            raise ValueError(f"the factory {target}() must return the implementation: {exc}") from None
    return impl


def _require_factory(target: str, factory: Any) -> None:
    """FACTORY must be callable with no argument; name what it is otherwise (a round function, a class whose
    constructor needs arguments, a value)."""
    hint = "FACTORY must take no argument and return the implementation (docs/conformance.md, \"The contract\")"
    if not callable(factory):
        text = repr(factory)
        raise ValueError(f"{target} is not callable (it is the {type(factory).__name__} "
                         f"{text if len(text) <= 40 else text[:37] + '...'}), so it is not a factory: {hint}")
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return
    needed = [p.name for p in signature.parameters.values() if p.default is p.empty
              and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if not needed:
        return
    name = target.partition(":")[2]
    if inspect.isclass(factory):
        raise ValueError(f"{target} is a class whose constructor needs {', '.join(needed)}: {hint}, e.g. "
                         f"def make(): return {name}(...)")
    if len(needed) >= 2:  # impl(x, clients, ...): the round itself was given
        raise ValueError(f"{target} takes {signature}, so it looks like a round function rather than a factory: "
                         f"{hint}, e.g. def make(): return {name}")
    raise ValueError(f"{target} takes {signature}: {hint}")


def _write(name: str, text: str) -> str:
    path = Path(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return name


def main(args: argparse.Namespace) -> int:
    require("hypothesis", "fedtheory conform")
    from ..conformance import check  # here, not at the top: check needs hypothesis (an optional extra)

    try:
        if args.family not in FAMILIES:
            raise ValueError(f"--as {args.family!r}: not a family of the kit; choose one of {', '.join(FAMILIES)}")
        hyper = {}
        for item in args.hyper:
            name, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"--hyper must be NAME=VALUE, got {item!r}")
            hyper[name] = _value(value)
        impl = load(args.target, args.family)
        report = check(impl, args.family, name=args.target, rtol=args.rtol, max_examples=args.max_examples,
                       fixed=tuple(args.fixed), **hyper)
    except (ValueError, ImportError, AttributeError) as exc:
        print(f"fedtheory conform: {exc}", file=sys.stderr)
        return 2
    from ..conformance.reports import junit_xml, report_json  # here, not at the top: they need hypothesis (an extra)

    print(report.table())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = json.dumps(report_json(report), indent=2)
    (out / "conformance.json").write_text(data)
    (out / "conformance.md").write_text(report.markdown())
    written = [f"{out}/conformance.json", f"{out}/conformance.md"]
    if args.json_file:
        written.append(_write(args.json_file, data))
    if args.junit_file:
        written.append(_write(args.junit_file, junit_xml(report)))
    verdict = {"pass": "conforms", "fail": f"FAILS {len(report.failures)} properties",
               "inconclusive": "INCONCLUSIVE (nothing failed, but a core property could not be checked)"}[report.verdict]
    print(f"\n{args.target} as {args.family}: {verdict}. Reports in {', '.join(written)}")
    return EXIT_CODES[report.verdict]
