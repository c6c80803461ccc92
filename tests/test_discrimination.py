"""The discrimination harness (benchmarks/mutation/discrimination.py) can fail: known claims reject the broken
variants of their algorithm, a deliberately weak claim is reported as not discriminating, and the algorithms
are restored after every broken run."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from fedtheory.algorithms import GradientDescent
from fedtheory.claims.registry import Evidence, claim, declaration, with_check
from fedtheory.problems.quadratic import QuadraticProblem

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks" / "mutation"))

import discrimination as disc  # noqa: E402
from variants import VARIANTS  # noqa: E402


@pytest.mark.parametrize("cid", ["classic.gd.contraction", "fedred.dane.lyapunov"])
def test_known_claims_reject_every_required_variant(cid: str):
    row = disc.run_claim(cid)
    assert row["baseline"] == "holds" and row["families"]
    required = {k: c for k, c in row["cells"].items() if c["role"] == "required"}
    assert required and all(c["cell"] in disc.REJECT for c in required.values()), required
    assert disc.discriminates(row)


def _weak_claim(bound: float):
    """GD on a quadratic for 3 rounds, asserting ||x_3 - x*|| <= bound (1e9: a bound no variant breaks)."""
    fields = declaration(id="test.weak", paper="classic", reference="a test", statement="weak", kind="bound",
                         instances=lambda thorough: [0], expected="holds", derived=False, notes="", space=None,
                         cites=(), pep=None)

    def check(seed: int) -> Evidence:
        rng = np.random.default_rng(seed)
        A = np.stack([np.diag(rng.uniform(0.1, 1.0, 4)) for _ in range(3)])
        p = QuadraticProblem(A, rng.standard_normal((3, 4)))
        gd = GradientDescent()
        state = gd.init(p, np.ones(4))
        for _ in range(3):
            state, _ = gd.round(p, state, np.random.default_rng(0))
        err = float(np.linalg.norm(state.x - p.certificate.x_star))
        return Evidence(str(seed), err, bound, err <= bound)

    return with_check(fields, check)


def test_a_weak_claim_is_reported_as_not_discriminating():
    row = disc.evaluate_variants(_weak_claim(1e9))
    assert row["families"] == ["GradientDescent"]
    assert all(c["cell"] == "." for c in row["cells"].values() if c["role"] == "required")
    assert not disc.discriminates(row)


def test_the_round_is_restored_after_the_broken_runs():
    before = GradientDescent.__dict__["round"]
    disc.evaluate_variants(_weak_claim(1e9))
    assert GradientDescent.__dict__["round"] is before


def test_inert_variants_do_not_count_as_discrimination():
    row = {"cells": {"A.frozen": {"cell": "~", "role": "required"}, "A.half": {"cell": "X", "role": "factor"}}}
    assert not disc.discriminates(row)
    row["cells"]["A.ascent"] = {"cell": "E", "role": "required"}
    assert disc.discriminates(row)
    row["cells"]["A.drift"] = {"cell": ".", "role": "required"}
    assert not disc.discriminates(row)


def test_every_family_has_the_required_variants():
    for family, variants in VARIANTS.items():
        names = {v.name for v in variants if v.role == "required"}
        assert {"frozen", "ascent"} <= names, family


def test_a_flag_needs_a_bound_or_rate_claim():
    with pytest.raises(ValueError, match="non_discriminating"):
        claim(id="test.flag", paper="classic", reference="x", statement="s", kind="identity",
              instances=lambda thorough: [1], non_discriminating="a reason")


@pytest.mark.parametrize("kind, scope", [("identity", "step"), ("bound", "everything")])
def test_a_scope_is_one_of_the_stated_ones_and_only_for_bounds_and_rates(kind: str, scope: str):
    with pytest.raises(ValueError, match="scope"):
        claim(id="test.scope", paper="classic", reference="x", statement="s", kind=kind,
              instances=lambda thorough: [1], scope=scope)


def test_a_step_claim_is_not_judged_on_a_state_not_carried_and_a_local_claim_only_on_local_variants():
    row = {"scope": "step", "cells": {"F.frozen": {"cell": "X", "role": "required"},
                                      "F.state_not_carried": {"cell": ".", "role": "required"},
                                      "F.local_x": {"cell": ".", "role": "local"}}}
    assert disc.judged_on(row) == "required" and disc.discriminates(row)
    row["scope"] = "run"  # the same cells about runs: a state not carried must be rejected
    assert not disc.discriminates(row)
    row["scope"] = "local"  # about the local step: the frozen server's rejection does not count
    assert disc.judged_on(row) == "local" and not disc.discriminates(row)
    row["cells"]["F.local_x"]["cell"] = "X"
    assert disc.discriminates(row)
    row["cells"]["F.local_x"]["cell"] = "~"  # no live local variant: nothing was shown
    assert not disc.discriminates(row)


@pytest.mark.parametrize("cid", ["fedelasticnet.statements.lemma_b5", "docofl.appendix.lemma_c2"])
def test_claims_about_the_local_step_reject_the_local_variants(cid: str):
    row = disc.run_claim(cid)
    local = {k: c["cell"] for k, c in row["cells"].items() if c["role"] == "local"}
    assert local and disc.judged_on(row) == "local" and disc.discriminates(row), local


def test_a_claim_that_never_runs_the_round_is_judged_on_the_local_variants():
    row = {"cells": {"A.frozen": {"cell": "~", "role": "required"}, "A.local_x": {"cell": "X", "role": "local"}}}
    assert disc.judged_on(row) == "local" and disc.discriminates(row)
    row["cells"]["A.local_y"] = {"cell": ".", "role": "local"}
    assert not disc.discriminates(row)
    row["cells"]["A.frozen"]["cell"] = "X"  # the claim runs the round: the local variants are shown only
    assert disc.judged_on(row) == "required" and disc.discriminates(row)


def test_a_local_solver_claim_rejects_the_local_variants_and_the_solver_is_restored():
    from fedtheory.algorithms import DANEPlus

    before = DANEPlus.__dict__["local_models"]
    row = disc.run_claim("fedred.daneplus.local_accuracy.derived")
    assert DANEPlus.__dict__["local_models"] is before
    assert disc.judged_on(row) == "local"
    local = {k: c for k, c in row["cells"].items() if c["role"] == "local"}
    assert local and all(c["cell"] in disc.REJECT for c in local.values()), local
    assert disc.discriminates(row)
def test_feddyn_local_correction_flipped_changes_only_the_local_solve():
    """The local variant solves each client's problem with the correction's sign flipped: from g_k = 0 it is the
    faithful round; from g_k != 0 the local solutions are those of L_k + <g_k, theta> + prox, checked against
    the problem's own solver."""
    from variants import feddyn_local_correction_flipped

    from fedtheory.algorithms import FedDyn
    from fedtheory.algorithms.federated import Draw

    rng = np.random.default_rng(0)
    A = np.stack([np.diag(rng.uniform(0.5, 2.0, 3)) for _ in range(4)])
    p = QuadraticProblem(A, rng.standard_normal((4, 3)))
    alg = FedDyn(alpha=2.0)
    draw = Draw(clients=np.arange(4))
    state = alg.init(p, np.ones(3))
    orig = FedDyn.round_given
    same, _ = feddyn_local_correction_flipped(orig, alg, p, state, draw)
    assert np.array_equal(same.x, orig(alg, p, state, draw)[0].x)
    state, _ = orig(alg, p, state, draw)  # now g_k != 0
    broken, _ = feddyn_local_correction_flipped(orig, alg, p, state, draw)
    G = state.G.peek()
    want = p.solve_local(G, np.broadcast_to(state.x, (4, 3)), 2.0)  # argmin L_k + <g_k, theta> + prox
    assert np.allclose(state.x + broken.last_upload, want, rtol=1e-12, atol=1e-12)
    assert not np.allclose(broken.x, orig(alg, p, state, draw)[0].x)


# ----- the catalogue of subtle variants, variant errors, and the per-statement table -------------------------------

import statements  # noqa: E402
from slip_catalogue import FAMILIES, SLIPS  # noqa: E402
from slips import Slip, SlipPatch, broken_function  # noqa: E402


def test_every_slip_applies_once_and_every_family_has_at_least_eight():
    for s in SLIPS:
        broken = broken_function(s)  # ValueError unless the snippet occurs exactly once
        assert broken is not s.cls.__dict__[s.method], s.name
    assert len({s.name for s in SLIPS}) == len(SLIPS)
    for fam in FAMILIES:
        assert sum(s.family == fam for s in SLIPS) >= 8, fam
    assert {s.family for s in SLIPS} == set(FAMILIES)


def test_a_slip_whose_snippet_is_gone_is_refused():
    s = Slip("test_gone", "GD", "fedtheory.algorithms.gd:GradientDescent", "round", "no such code", "x", "sign", "-")
    with pytest.raises(ValueError, match="occurs 0 times"):
        broken_function(s)


def _raising_slip() -> Slip:
    # the slip indexes past the end of the client axis: it raises where the faithful round does not
    return Slip("test_raises", "GD", "fedtheory.algorithms.gd:GradientDescent", "round",
                "g = problem.grad(state.x)", "g = problem.grad(state.x)[problem.dim + 5]", "sign", "a crash")


def test_a_variant_that_raises_is_a_variant_error_never_a_rejection():
    row = disc.evaluate_variants(_weak_claim(1e9), variants=("test_raises",), slips=[_raising_slip()],
                                 certify=False)
    cell = row["cells"]["test_raises"]
    assert cell["cell"] == "?" and cell["bug"] and "IndexError" in cell["bug"]
    assert cell["cell"] not in disc.REJECT
    rows = [row | {"baseline": "holds"}]
    st = statements.per_statement(rows)
    assert st[0]["variant_errors"] == 1 and st[0]["rejected_own"] == 0 and st[0]["applicable"] == 0


def test_a_coarse_variant_that_fails_the_input_check_is_a_variant_error(monkeypatch):
    from variants import Variant, with_attrs

    bad = Variant("bad_step", "required", "an invalid step (fails the input check)",
                  with_attrs(step=lambda a, p: -1.0))
    monkeypatch.setitem(VARIANTS, "GradientDescent", [*VARIANTS["GradientDescent"], bad])
    row = disc.evaluate_variants(_weak_claim(1e9), variants=("GradientDescent.bad_step",), slips=[], certify=False)
    cell = row["cells"]["GradientDescent.bad_step"]
    assert cell["cell"] == "?" and "ValueError" in cell["bug"], cell


def test_a_slip_is_live_when_it_changes_only_a_logged_quantity_or_mutates_its_input():
    from fedtheory.algorithms import GradientDescent, Scaffnew
    from fedtheory.algorithms.federated import Draw

    rng = np.random.default_rng(0)
    A = np.stack([np.diag(rng.uniform(0.5, 2.0, 3)) for _ in range(4)])
    p = QuadraticProblem(A, rng.standard_normal((4, 3)))
    logged = next(s for s in SLIPS if s.name == "gd_log_grad_evals")
    with SlipPatch(logged) as patch:
        GradientDescent().round(p, GradientDescent().init(p, np.ones(3)), np.random.default_rng(0))
    assert patch.live and patch.bug is None
    aliased = next(s for s in SLIPS if s.name == "scaffnew_h_aliased")
    alg = Scaffnew(p=0.5)
    before = Scaffnew.__dict__["_iteration"]
    state = alg.init(p, np.ones(3))
    state, _ = alg.round_given(p, state, Draw(clients=np.arange(4), coin=False))
    with SlipPatch(aliased) as patch:
        alg.round_given(p, state, Draw(clients=np.arange(4), coin=True))
    assert patch.live  # the output is the faithful one, but the input state's h changed under it
    assert Scaffnew.__dict__["_iteration"] is before
    inert = next(s for s in SLIPS if s.name == "gd_explicit_step_half")  # the default step: never reached
    with SlipPatch(inert) as patch:
        GradientDescent().round(p, GradientDescent().init(p, np.ones(3)), np.random.default_rng(0))
    assert not patch.live


def test_the_slip_is_restored_and_certification_sees_the_broken_round():
    from fedtheory.algorithms import FedAvg

    before = FedAvg.__dict__["round_given"]
    row = disc.run_claim("classic.rounds.reference_identity", variants=("fedavg_delta_sign",))
    assert FedAvg.__dict__["round_given"] is before
    assert row["cells"]["fedavg_delta_sign"]["cell"] in disc.REJECT


def test_the_per_statement_table_counts_what_the_cells_say():
    rows = [{"id": "a", "kind": "bound", "baseline": "holds", "cites": ["p Theorem 1"], "families": ["F"],
             "cells": {"v1": {"cell": "X", "cert": "X", "role": "slip"},
                       "v2": {"cell": ".", "cert": "X", "role": "slip"},
                       "v3": {"cell": ".", "cert": "n", "role": "slip"},
                       "v4": {"cell": "~", "cert": "~", "role": "slip"},
                       "v5": {"cell": "?", "cert": "?", "role": "slip"}}},
            {"id": "b", "kind": "identity", "baseline": "holds", "cites": ["p Theorem 1", "p Lemma 2"],
             "families": ["F"], "cells": {"v3": {"cell": "E", "cert": "E", "role": "slip"},
                                          "v5": {"cell": ".", "cert": ".", "role": "slip"}}}]
    st = {s["statement"]: s for s in statements.per_statement(rows)}
    t1 = st["p Theorem 1"]
    # v1 own, v2 certified only, v3 rejected by b's own check, v4 inert, v5 live in b (not rejected) and an error in a
    assert (t1["applicable"], t1["rejected_own"], t1["rejected_certified"]) == (4, 2, 3)
    assert t1["survivors"] == ["v5"] and t1["variant_errors"] == 1 and t1["by_claim"] == {"a": 2, "b": 1}
    l2 = st["p Lemma 2"]
    assert (l2["applicable"], l2["rejected_own"], l2["survivors"]) == (2, 1, ["v5"])


def test_the_docs_tables_and_the_readme_figure_are_the_committed_results():
    import json

    from fedtheory.report.discrimination import figure

    data = json.loads((ROOT / "benchmarks" / "mutation" / "results" / "discrimination.json").read_text())
    run = [r for r in data["claims"] if r["families"] and r["baseline"] in disc.PASSING]
    assert data["summary"]["examined"] == len(data["claims"]) <= data["summary"]["selected"]
    assert statements.summary(run, len(data["claims"]), data["summary"]["selected"]) == data["summary"]
    doc = (ROOT / "docs" / "verification-power.md").read_text()
    assert statements.render_statements(run) in doc
    assert statements.render_catalogue(run, statements.load_check(ROOT)) in doc
    assert figure(data["summary"]) in doc
    assert figure(data["summary"]) in (ROOT / "README.md").read_text()


def test_a_slip_on_a_branch_the_run_never_takes_is_not_reached_and_one_it_takes_is():
    from slips import LineTrace, faithful_function

    from fedtheory.algorithms import Scaffold
    from fedtheory.algorithms.federated import Draw

    rng = np.random.default_rng(1)
    A = np.stack([np.diag(rng.uniform(0.5, 2.0, 3)) for _ in range(3)])
    p = QuadraticProblem(A, rng.standard_normal((3, 3)))
    option2 = next(s for s in SLIPS if s.name == "scaffold_option2_no_K")  # a line of option II only
    for option, reached in (("I", False), ("II", True)):
        alg = Scaffold(local_steps=2, local_step=0.1, option=option)
        with LineTrace([faithful_function(option2)]) as trace:
            alg.round_given(p, alg.init(p, np.ones(3)), Draw(clients=np.arange(3)))
        assert trace.reached(option2) is reached, option


def test_certification_rejects_a_slip_the_own_check_misses_once_a_reference_exists(monkeypatch):
    """A logged quantity off by one: the weak claim's own check cannot see it (column 1 '.'); with fedtheory's
    reference for GD (fedtheory/references/classic.py) the certified run differs (column 2 'X'); without a
    reference the cell is 'n', never a rejection."""
    from fedtheory.references import REFERENCES, has_reference

    assert has_reference("gd")
    row = disc.evaluate_variants(_weak_claim(1e9), variants=("gd_log_grad_evals",))
    assert row["certification"] == "ok"
    assert (row["cells"]["gd_log_grad_evals"]["cell"], row["cells"]["gd_log_grad_evals"]["cert"]) == (".", "X")

    monkeypatch.delitem(REFERENCES, "gd")
    row = disc.evaluate_variants(_weak_claim(1e9), variants=("gd_log_grad_evals",))
    assert row["cells"]["gd_log_grad_evals"]["cell"] == "." and row["cells"]["gd_log_grad_evals"]["cert"] == "n"
