"""Exact worst cases by performance estimation (fedtheory.pep) against closed forms and the ledger.

Tolerance: the SDPs are solved by CLARABEL (interior point); fedtheory.pep states its accuracy as
``SOLVER_REL_ACCURACY`` = 1e-6 relative, with margin over the largest error measured against the closed forms
below (6e-8, GD's grid; Scaffnew's grid 7e-9). cvxpy's default SCS is off by up to 1.05e-6 on GD's four
points, above this tolerance. Every gap asserted here is far above it (the smallest is 1e-3).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("PEPit", reason="the worst-case extra (PEPit) is part of the test extra; see pyproject.toml")

from fedtheory import pep  # noqa: E402
from fedtheory.claims import REGISTRY  # noqa: E402
from fedtheory.worstcase import adversarial_search, pep_worst_case  # noqa: E402

TOL = pep.SOLVER_REL_ACCURACY
CLAIMS = REGISTRY


def gd_closed_form(mu: float, L: float, gamma: float) -> float:
    return max((1 - gamma * mu) ** 2, (1 - gamma * L) ** 2)


GD_GRID = [(mu, L, fraction * 2 / L) for mu in (0.01, 0.1, 0.5) for L in (1.0, 10.0)
           for fraction in (0.1, 0.5, 0.9, 0.99)]


@pytest.mark.parametrize("mu, L, gamma", [(0.1, 1.0, 1.0), (0.1, 1.0, 1.9), (0.5, 2.0, 0.3), (1.0, 10.0, 0.15)])
def test_gd_reproduces_its_closed_form(mu, L, gamma):
    assert pep.gd_contraction(mu, L, gamma) == pytest.approx(gd_closed_form(mu, L, gamma), rel=TOL)


def test_the_stated_accuracy_holds_over_a_grid():
    """SOLVER_REL_ACCURACY is what the solver achieves: GD's closed form over 24 (mu, L, gamma), both branches."""
    errors = [abs(pep.gd_contraction(mu, L, g) / gd_closed_form(mu, L, g) - 1) for mu, L, g in GD_GRID]
    assert max(errors) <= TOL


def scaffnew_closed_form(mu: float, gamma: float, p: float) -> float:
    """Scaffnew's exact worst Lyapunov factor for gamma <= 1/L: max(1 - p^2, (1 - gamma mu)^2). The skip branch
    contracts the models as a GD step ((1 - gamma mu)^2 at f_i = mu/2 ||x||^2) and keeps h; the communication
    branch resets the h part, which keeps a fraction 1 - p^2 of its weight (p of the time, with weight (gamma/p)^2)."""
    return max(1 - p * p, (1 - gamma * mu) ** 2)


SCAFFNEW_GRID = [(gamma_L, p) for gamma_L in (0.1, 0.3, 0.5, 1.0) for p in (0.1, 0.2, 0.3, 0.5, 0.8, 1.0)]


@pytest.mark.parametrize("n", [2, 3])
def test_scaffnew_worst_case_is_its_closed_form_and_theorem_3_6_is_tight_iff_p2_below_gamma_mu(n):
    """The PEP value equals max(1 - p^2, (1 - gamma mu)^2) over the grid; Theorem 3.6's 1 - min(gamma mu, p^2)
    equals it exactly when p^2 <= gamma mu and is strictly above it otherwise (then by (1 - gamma mu) -
    max(1 - p^2, (1 - gamma mu)^2) > 0, at least 1e-3 on this grid)."""
    mu, L = 0.1, 1.0
    grid = SCAFFNEW_GRID if n == 2 else SCAFFNEW_GRID[::5]
    for gamma_L, p in grid:
        gamma = gamma_L / L
        value = pep.proxskip_lyapunov(mu, L, gamma, p, n)
        assert value == pytest.approx(scaffnew_closed_form(mu, gamma, p), rel=TOL), (gamma, p)
        bound = 1 - min(gamma * mu, p * p)
        if p * p <= gamma * mu:
            assert value == pytest.approx(bound, rel=TOL), (gamma, p)
        else:
            assert value < bound - 1e-3, (gamma, p)


@pytest.mark.parametrize("zeta2", [0.0, 1.0])
def test_fedavg_with_one_local_step_is_gd(zeta2):
    """K = 1: x1 = x0 - gamma mean_i grad f_i(x0) = x0 - gamma grad f(x0), whatever the heterogeneity."""
    assert pep.fedavg_round(0.1, 1.0, 0.5, 1, 2, zeta2) == pytest.approx(gd_closed_form(0.1, 1.0, 0.5), rel=TOL)


@pytest.mark.parametrize("K", [2, 3])
def test_fedavg_without_heterogeneity_contracts_by_rho_to_the_K(K):
    """zeta2 = 0: every client minimises at x*, K local GD steps contract by rho^K, rho = max|1 - gamma a|, and
    identical quadratics attain it; the average of the clients cannot do worse."""
    rho = max(abs(1 - 0.5 * 0.1), abs(1 - 0.5 * 1.0))
    assert pep.fedavg_round(0.1, 1.0, 0.5, K, 2, 0.0) == pytest.approx(rho ** (2 * K), rel=TOL)


def test_fedavg_heterogeneity_drift():
    """With zeta2 > 0 each client drifts towards its own minimiser: the worst case grows with zeta2 and stays
    below the triangle-inequality bound (rho^K + gamma zeta (1 - rho^K)/(1 - rho))^2 (derived in docs)."""
    mu, L, gamma, K = 0.1, 1.0, 0.5, 3
    rho = max(abs(1 - gamma * mu), abs(1 - gamma * L))
    values = [pep.fedavg_round(mu, L, gamma, K, 2, z2) for z2 in (0.0, 0.25, 1.0)]
    assert values[0] < values[1] < values[2]
    for z2, v in zip((0.25, 1.0), values[1:]):
        bound = (rho**K + gamma * math.sqrt(z2) * (1 - rho**K) / (1 - rho)) ** 2
        assert v <= bound * (1 + TOL)
    assert values[2] > rho ** (2 * K) + 0.1  # heterogeneity costs more than rounding


@pytest.mark.parametrize("gamma, p", [(1.0, 0.5), (1.0, 0.2), (0.3, 0.5), (0.5, 1.0)])
def test_proxskip_lyapunov_obeys_theorem_3_6(gamma, p):
    mu, L = 0.1, 1.0
    value = pep.proxskip_lyapunov(mu, L, gamma, p)
    assert value <= (1 - min(gamma * mu, p * p)) * (1 + TOL)


def test_dane_without_dissimilarity_is_a_proximal_step():
    """delta -> 0: both clients equal f, DANE is the proximal step on f, whose worst squared contraction over
    F(mu, L) is (lam/(lam + mu))^2 (attained by f = mu/2 ||x||^2). At delta = 1e-3 the class is within O(delta)
    of that limit (measured 1e-5 relative); smaller delta makes the SDP ill-conditioned (1/(4 delta) terms)."""
    assert pep.dane_rounds(1.0, 10.0, 1e-3, 0.5) == pytest.approx((0.5 / 1.5) ** 2, rel=1e-3)


@pytest.mark.parametrize("mu, L, delta", [(1.0, 10.0, 0.5), (0.2, 5.0, 1.0), (1.0, 100.0, 2.0)])
def test_dane_obeys_b14_and_its_distance_factor(mu, L, delta):
    lam = 2 * delta
    assert pep.dane_rounds(mu, L, delta, lam, measure="lyapunov") <= 1 + TOL
    one = pep.dane_rounds(mu, L, delta, lam, 1)
    assert one <= lam / (lam + mu) * (1 + TOL)
    assert pep.dane_rounds(mu, L, delta, lam, 2) <= one * (1 + TOL)  # a second round cannot do worse


@pytest.mark.parametrize("p", [0.1, 0.5, 1.0])
def test_fedred_gd_obeys_its_contraction(p):
    mu, L, delta = 1.0, 10.0, 0.5
    lam, eta = delta, 1.0 / L
    bound = 1 - min(mu * eta, p * mu / (lam + mu))
    assert pep.fedred_gd_lyapunov(mu, L, delta, lam, eta, p) <= bound * (1 + TOL)


def test_fedred_gd_without_reset_is_its_own_formulation():
    """reset=False keeps the clients' local models at a communication: a different iteration, whose worst case
    differs (0.984859 against 0.983757 at the Lemma 35 claim's default point p = 0.5, lam = delta_A = 2), both
    below the lemma's rate 0.99; the claim's formulation passes its instance's reset through."""
    args = (1.0, 100.0, 2.0, 2.0, 0.01, 0.5)
    with_reset, without = pep.fedred_gd_lyapunov(*args), pep.fedred_gd_lyapunov(*args, reset=False)
    assert abs(without - with_reset) > 1e-3
    assert max(with_reset, without) <= (1 - min(1.0 * 0.01, 0.5 * 1.0 / 3.0)) * (1 + TOL)
    claim = CLAIMS["fedred.fedred_gd.lyapunov.derived"]
    point = claim.space.build({**TWO_CLIENTS, "mu": 1.0, "L": 100.0, "delta_A": 2.0, "p": 0.5, "lam_factor": 1.0,
                               "reset": 0, "eta_L": 1.0})
    assert claim.pep(point)[0] == pytest.approx(without, rel=TOL)


# ------------------------------------------------------------------ consistency with the ledger's measurements

#: The ledger's claims that declare a PEP formulation (``@claim(..., pep=...)``).
CLASSIC_PEP = ("classic.gd.contraction", "classic.gd.contraction_tight_any_step",
               "classic.scaffnew.expected_contraction")
FEDRED_PEP = ("fedred.dane.lyapunov", "fedred.fedred_gd.lyapunov.derived")


def pep_of(cid: str):
    """The claim's declared formulation, through the public registry."""
    formulation = CLAIMS[cid].pep
    assert formulation is not None, f"{cid} declares no pep formulation"
    return formulation


def test_the_claims_with_a_formulation_are_the_expected_ones():
    declared = {cid for cid, c in CLAIMS.items() if c.pep is not None}
    assert set(CLASSIC_PEP) <= declared <= set(CLASSIC_PEP) | set(FEDRED_PEP)


@pytest.mark.parametrize("cid", CLASSIC_PEP)
def test_ledger_measurements_never_exceed_the_pep_worst_case(cid):
    """Each PEP class contains the claim's instances: a measured ratio above the exact worst case would be a bug
    in one of the two."""
    claim, formulation = CLAIMS[cid], pep_of(cid)
    for instance in claim.instances(False):
        value, bound = formulation(instance)
        assert claim.check(instance).measured <= value * (1 + TOL) + 1e-12, cid


TWO_CLIENTS = dict(n_clients=2, dim=3, mu=1.0, L=10.0, delta_A=0.5, zeta2=1.0, seed=3)


def test_dane_measurement_never_exceeds_its_pep_worst_case():
    """The two-client version of the DANE claim's instance lies in the PEP's class."""
    dane = CLAIMS["fedred.dane.lyapunov"]
    formulation = pep_of(dane.id)
    point = dane.space.build(TWO_CLIENTS)
    assert dane.check(point).measured <= formulation(point)[0] * (1 + TOL)


@pytest.mark.parametrize("reset", [1, 0])
def test_fedred_measurement_never_exceeds_its_pep_worst_case(reset):
    fedred = CLAIMS["fedred.fedred_gd.lyapunov.derived"]
    formulation = pep_of(fedred.id)
    point = fedred.space.build({**TWO_CLIENTS, "p": 0.3, "lam_factor": 1.0, "reset": reset, "eta_L": 1.0})
    value, bound = formulation(point)
    assert fedred.check(point).measured <= value / bound * (1 + TOL)  # the claim reports E Phi+/(rho Phi)


def test_adversarial_search_stays_below_the_pep_worst_case():
    """The search's best ProxSkip point, re-evaluated by PEP at the same (mu, L, gamma, p, n), is not beaten."""
    claim = CLAIMS["classic.scaffnew.expected_contraction"]
    result = adversarial_search(claim, evaluations=20, seed=1)
    value, bound = pep_of(claim.id)(claim.space.build(dict(result.point)))
    assert result.ratio <= value / bound * (1 + TOL)


def test_pep_worst_case_per_claim():
    assert pep_worst_case(CLAIMS["classic.gd.contraction"]) == pytest.approx(1.0, rel=TOL)
    assert pep_worst_case(CLAIMS["efl.theorem1.bound"]) is None  # no PEP formulation
    assert pep_worst_case(CLAIMS["classic.scaffnew.expected_contraction"]) <= 1 + TOL


@pytest.mark.parametrize("cid", FEDRED_PEP)
def test_fedred_pep_worst_case_obeys_the_bound(cid):
    pep_of(cid)
    assert pep_worst_case(CLAIMS[cid]) <= 1 + TOL


def test_pep_module_imports_nothing_from_the_claims():
    """fedtheory.pep is the formulations only; the claims declare which formulation checks them (pep=)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(pep))
    modules = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any("claims" in m for m in modules), modules
    assert not hasattr(pep, "PEP_CLAIMS")


# ------------------------------------------------------------------ bad input

@pytest.mark.parametrize("call, name", [
    (lambda: pep.gd_contraction(0.0, 1.0, 0.5), "mu"),
    (lambda: pep.gd_contraction(2.0, 1.0, 0.5), "L"),
    (lambda: pep.gd_contraction(0.1, 1.0, 2.0), "gamma"),
    (lambda: pep.fedavg_round(0.1, 1.0, 0.5, 0), "K"),
    (lambda: pep.fedavg_round(0.1, 1.0, 0.5, 1, 2, -1.0), "zeta2"),
    (lambda: pep.proxskip_lyapunov(0.1, 1.0, 2.0, 0.5), "gamma"),
    (lambda: pep.proxskip_lyapunov(0.1, 1.0, 1.0, 1.5), "p"),
    (lambda: pep.dane_rounds(1.0, 10.0, 0.0, 1.0), "delta"),
    (lambda: pep.dane_rounds(1.0, 10.0, 0.5, 1.0, 2, measure="lyapunov"), "rounds"),
    (lambda: pep.dane_rounds(1.0, 10.0, 0.5, 1.0, measure="gap"), "measure"),
    (lambda: pep.fedred_gd_lyapunov(1.0, 10.0, 0.5, 1.0, 0.1, 0.0), "p"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_reset_must_be_a_bool():
    with pytest.raises(TypeError, match="reset"):
        pep.fedred_gd_lyapunov(1.0, 10.0, 0.5, 1.0, 0.1, 0.5, reset=1)


def test_results_are_finite_numbers():
    assert np.isfinite(pep.dane_rounds(1.0, 10.0, 0.5, 1.0, 2))
