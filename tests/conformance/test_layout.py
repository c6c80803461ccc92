"""The kit's layout (docs/conformance.md, "Layout"): one package per family, declared where it is checked, and a
family list that needs nothing optional."""
from __future__ import annotations

import pkgutil
import subprocess
import sys

from fedtheory.conformance import FAMILIES, families
from fedtheory.conformance.families import default_hyper, properties_of
from fedtheory.conformance.power import CORRECT, WRONG


def test_families_are_exactly_the_packages():
    packages = {m.name for m in pkgutil.iter_modules(families.__path__) if m.ispkg}
    assert packages == set(FAMILIES)
    for family in FAMILIES:
        for part in ("properties", "variants", "native"):
            families.load(family, part)
        assert isinstance(default_hyper(family), dict)


def test_every_property_is_declared_in_its_family_package():
    for family in FAMILIES:
        props = properties_of(family)
        assert props, family
        for p in props:
            assert p.family == family and p.id.startswith(family + ".")
            assert p.check.__module__ == f"fedtheory.conformance.families.{family}.properties", p.id


def test_power_set_is_listed_by_the_families():
    assert {v.family for v in WRONG + CORRECT} <= set(FAMILIES)
    # the power set only grows: every gap class found adds wrong variants (docs/conformance.md lists them)
    assert len(WRONG) >= 92 and len(CORRECT) >= 21


def test_family_list_needs_no_hypothesis_and_a_check_says_what_is_missing():
    code = ("import sys; sys.modules['hypothesis'] = None\n"
            "from fedtheory.conformance import FAMILIES\n"
            "assert 'fedavg' in FAMILIES\n"
            "try:\n    from fedtheory.conformance import check\nexcept ImportError as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "fedtheory conform needs hypothesis: pip install 'fedtheory[test]'"
