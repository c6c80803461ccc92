"""The conformance kit's registry: :func:`prop` declares a property at its check, in its family's package.

Like :mod:`fedtheory.claims.registry` for the claims: the family modules import this module (never the
``families`` package, which loads them), so the kit imports no module that imports it back.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from ..kit import Property

__all__ = ["REGISTRY", "prop"]

#: family -> its properties in the order they are declared (filled by :func:`prop` as family modules load).
REGISTRY: dict[str, list[Property]] = {}


def prop(*, id: str, family: str, reference: str, statement: str,  # noqa: A002 -- the property's id
         cases: Callable[[Mapping[str, Any]], Any], expensive: bool = False,
         core: bool = False, examples: int | None = None) -> Callable:
    """Declare the decorated ``check(impl, case, hyper, rtol) -> Outcome`` as a property of ``family``, which must
    be the package ``fedtheory/conformance/families/<family>/`` it is declared in."""
    if not id.startswith(family + "."):
        raise ValueError(f"a property id is '<family>.<name>', got {id!r} for family {family!r}")

    def register(check: Callable) -> Callable:
        package = f"{__package__}.{family}"
        if not check.__module__.startswith(package + "."):
            raise ValueError(f"family={family!r}: a property of {family!r} is declared in {package}, "
                             f"not in {check.__module__}")
        if any(p.id == id for p in REGISTRY.get(family, [])):
            raise ValueError(f"property {id!r} is declared twice")
        REGISTRY.setdefault(family, []).append(Property(id, family, reference, statement, cases, check, expensive,
                                                        core, examples))
        return check
    return register
