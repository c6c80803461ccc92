"""``fedtheory problems``: list, show, verify, certify and export the named benchmark catalogue."""
from __future__ import annotations

import argparse
import json
import sys

from .. import catalogue


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("problems", help="List, show, verify and export the named benchmark problems.",
                       description="Named, versioned benchmark instances with recorded certificates. Cite an "
                                   "instance as NAME@vVERSION; anyone regenerates exactly the same arrays.")
    p.add_argument("--root", default=None, help="The catalogue folder (default: the catalogue shipped in the package).")
    cmds = p.add_subparsers(dest="problems_command", required=True)
    ls = cmds.add_parser("list", help="List the instances with their key constants.")
    ls.add_argument("pattern", nargs="?", default=None, help="A shell pattern, e.g. 'quad-kappa100-*'.")
    show = cmds.add_parser("show", help="Show the spec and the recorded certificate of one instance.")
    show.add_argument("name")
    ver = cmds.add_parser("verify", help="Check the shipped arrays, their regeneration and the constants against the certificates, and report the distances.")
    ver.add_argument("names", nargs="*", help="Names or patterns (default: all).")
    cert = cmds.add_parser("certify", help="Record the certificate file of an instance (for maintainers).")
    cert.add_argument("name")
    cert.add_argument("--overwrite", action="store_true",
                      help="Replace a different record (only after bumping the version in NAME.json).")
    exp = cmds.add_parser("export", help="Write the arrays and the certificate of an instance for use in other frameworks.")
    exp.add_argument("name")
    exp.add_argument("--format", choices=("npz",), default="npz")
    exp.add_argument("--out", default=None, help="The output file (default: NAME.npz).")
    p.set_defaults(func=main)


def _expand(patterns: list[str], root: str | None) -> list[str]:
    if not patterns:
        return catalogue.names(root=root)
    out: list[str] = []
    for pat in patterns:
        found = catalogue.names(pat, root=root) if any(c in pat for c in "*?[") else [pat.partition("@v")[0]]
        if not found:
            raise KeyError(f"no catalogue instance matches {pat!r}")
        out += [n for n in found if n not in out]
    return out


def main(args: argparse.Namespace) -> int:
    root = args.root
    try:
        if args.problems_command == "list":
            rows = []
            for name in catalogue.names(args.pattern, root=root):
                s = catalogue.spec(name, root)
                try:
                    c = catalogue.read_certificate(name, root)["constants"]
                except FileNotFoundError:
                    c = {}
                fmt = lambda k: "-" if c.get(k) is None else f"{c[k]:.4g}"  # noqa: E731
                rows.append((s.citation, str(c.get("n_clients", "-")), str(c.get("dim", "-")), fmt("mu"),
                             fmt("L"), fmt("mu_f"), fmt("L_f"), fmt("delta_A"), fmt("delta_B"), fmt("zeta2"),
                             s.family))
            header = ("instance", "n", "d", "mu", "L", "mu_f", "L_f", "delta_A", "delta_B", "zeta2", "family")
            widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
            print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
            for r in rows:
                print("  ".join(v.ljust(w) for v, w in zip(r, widths)))
            return 0
        if args.problems_command == "show":
            s = catalogue.spec(args.name, root)
            out = {"citation": s.citation, "spec": s.as_dict()}
            try:
                out["certificate"] = catalogue.read_certificate(s.name, root)
            except FileNotFoundError as exc:
                out["certificate"] = str(exc)
            print(json.dumps(out, indent=1))
            return 0
        if args.problems_command == "verify":
            bad = 0
            for name in _expand(args.names, root):
                result = catalogue.verify(name, root)
                bad += not result.ok
                print(result)
            return 1 if bad else 0
        if args.problems_command == "certify":
            path = catalogue.write_certificate(args.name, root, overwrite=args.overwrite)
            print(f"recorded {path}")
            return 0
        if args.problems_command == "export":
            name = args.name.partition("@v")[0]
            path = catalogue.export_npz(args.name, args.out or f"{name}.npz", root)
            print(f"wrote {path} (arrays under 'array/*', JSON under 'spec_json' and 'certificate_json')")
            return 0
    except (KeyError, ValueError, TypeError, FileNotFoundError, FileExistsError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"fedtheory problems: {msg}", file=sys.stderr)
        return 2
    raise AssertionError(args.problems_command)  # pragma: no cover
