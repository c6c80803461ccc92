"""The verdicts (docs/conformance.md, "Verdicts"): no family can pass with nothing checked.

* Every family's verdict is "inconclusive" (exit status 3 of ``fedtheory conform``), never "pass", when its
  properties do not apply -- driven through the real search with every property's check replaced by "not
  applicable", as an implementation the kit cannot read would make them.
* Every family but the compressors declares core properties, and each of them applies to fedtheory's own
  implementation with its state hidden in an object the kit cannot read: a pass always rests on the
  implementation's own output compared with the paper's.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from fedtheory.commands.conform import EXIT_CODES
from fedtheory.conformance import FAMILIES, check, families, kit
from fedtheory.conformance.families.registry import REGISTRY
from fedtheory.conformance.search import INCONCLUSIVE, PASS

STATELESS = {"fedavg", "fedprox", "fedelasticnet_fedavg"}


class _Hidden:
    def __init__(self, inner):
        self.inner = inner


def hidden_state(impl):
    """``impl`` with whatever it returns as state (or nothing) wrapped in an object the kit cannot read."""
    def wrapped(x, clients, *, state=None, **kw):
        out = impl(x, clients, state=state.inner if isinstance(state, _Hidden) else state, **kw)
        x_new, st = out if isinstance(out, tuple) else (out, None)
        return x_new, _Hidden(st)
    return wrapped


@pytest.mark.parametrize("family", FAMILIES)
def test_nothing_applicable_is_inconclusive_never_pass(family, monkeypatch):
    props = families.properties_of(family)
    monkeypatch.setitem(REGISTRY, family, [replace(p, check=lambda *a: kit.not_applicable("hidden")) for p in props])
    report = check(families.load(family, "native").__dict__[family], family, max_examples=2)
    assert report.verdict == INCONCLUSIVE and not report.passed and not report.failures
    assert EXIT_CODES[report.verdict] == 3 and EXIT_CODES[PASS] == 0
    assert "not checked" in report.why_inconclusive() and "hidden" in report.table()
    assert report.as_dict()["verdict"] == INCONCLUSIVE and "**inconclusive**" in report.markdown()


@pytest.mark.parametrize("family", [f for f in FAMILIES if f != "compressor"])
def test_core_properties_apply_to_an_opaque_state(family):
    core = [p.id for p in families.properties_of(family) if p.core]
    assert core, f"{family} declares no core property"
    native = getattr(families.load(family, "native"), family)
    hyper = {"control_variate": "scaffnew", "m": 0.7} if family == "dane" else {}
    report = check(hidden_state(native), family, properties=core, max_examples=4, **hyper)
    assert report.verdict == PASS, report.table()
    assert all(r.status == "holds" for r in report.results)


def test_an_opaque_dane_b84_slip_is_no_longer_a_pass():
    """The gap this closes: DANE+ (B.84) with an opaque state used to report n.a. everywhere and pass."""
    from fedtheory.conformance.power import WRONG
    v = next(w for w in WRONG if w.name == "b84_sign_opaque_state")
    report = check(v.impl, v.family, shrink=False, **v.hyper)
    assert report.verdict == "fail"
    assert {r.prop.id.split(" @ ")[0] for r in report.failures} == {"dane.multi_round"}
    assert np.isfinite(report.failures[0].measured)
