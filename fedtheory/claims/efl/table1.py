"""EFL, Table 1 (the comparison of rounds to accuracy eps): the claim that EFL's bound is tighter, recorded false
under the reading "an order comparison over every family of instances" (along L = delta = 1/eps the ratio of the
rows diverges as eps -> 0), with the rows' comparison at fixed constants derived next to it, and the EFL row
against Theorem 1's closed form.
"""
from __future__ import annotations

import math

import numpy as np

from ...theory import efl as th
from ..registry import Evidence, claim
from ..tolerances import EXACT_REL, ITERATE_REL

__all__ = ["printed_table1", "theorem1_rounds_to"]

PAPER = "efl"


# ---------------------------------------------------------------------------------------------------------
# Table 1: 'EFL achieves tighter bound', on the printed rows
# ---------------------------------------------------------------------------------------------------------

def printed_table1(*, G: float, mu: float, S: float, eps: float, L: float, delta: float) -> dict[str, float]:
    """The three mu-strongly-convex rows of Table 1 as printed (orders, constants dropped):
    SCAFFOLD G^2/(mu S eps) + G/(mu sqrt(eps)) + L/mu, MIME G^2/(mu S eps) + delta/mu,
    EFL G^2/(mu S eps) + L/(mu sqrt(eps))."""
    stat = G * G / (mu * S * eps)
    return {"SCAFFOLD": stat + G / (mu * math.sqrt(eps)) + L / mu, "MIME": stat + delta / mu,
            "EFL": stat + L / (mu * math.sqrt(eps))}


#: The accuracies along which the O(.) of Table 1 is about (eps -> 0): six decades, enough for the log-log slope
#: of a ratio growing like eps^(-1/2) to be within 0.01 of 1/2 at the last pair of points.
_EPS_FAMILY = tuple(10.0 ** -k for k in range(2, 14, 2))
#: A ratio of two orders is bounded (one is O(the other)) iff its log-log slope in 1/eps tends to 0; the
#: refutation needs the slope along the family to stay at least this far above 0 (the exact slope of the
#: counterexample family is 1/2).
_DIVERGENCE_SLOPE = 0.25


def _tighter_instances(thorough: bool):
    # Families along which eps -> 0 (the limit the O(.) is about) with the smoothness growing as L = eps^(-power)
    # and the Hessian dissimilarity delta = L (the largest the row allows): with power = 1 EFL's row exceeds
    # SCAFFOLD's and MIME's by a factor growing like eps^(-1/2), whatever constants the O(.) hides.
    yield dict(G=1.0, mu=1.0, S=1.0, power=1.0)
    yield dict(G=10.0, mu=0.1, S=10.0, power=1.0)
    if thorough:
        yield dict(G=1.0, mu=1.0, S=100.0, power=1.5)
        yield dict(G=0.1, mu=0.01, S=1.0, power=1.0)


def _ratio_slope(G: float, mu: float, S: float, power: float) -> dict[str, float]:
    """The log-log slopes, in 1/eps, of EFL's row over SCAFFOLD's and over MIME's between the last two points of
    the family L = delta = eps^(-power), and the ratios themselves."""
    rows = [printed_table1(G=G, mu=mu, S=S, eps=e, L=e ** -power, delta=e ** -power) for e in _EPS_FAMILY]
    out: dict[str, float] = {}
    for other in ("SCAFFOLD", "MIME"):
        r = [row["EFL"] / row[other] for row in rows]
        out[f"slope_vs_{other}"] = math.log(r[-1] / r[-2]) / math.log(_EPS_FAMILY[-2] / _EPS_FAMILY[-1])
        out[f"ratios_vs_{other}"] = r
    return out


@claim(cites=("Table 1",),
       id="efl.statements.table1.tighter", paper=PAPER,
       reference="§3.2 ('EFL achieves tighter bound comparing with methods which assume mu-strongly convex'; "
                 "caption: 'preserves the optimal statistical rates ... while improves the optimization')",
       statement="Table 1's EFL row is O(the SCAFFOLD row) and O(the MIME row) (the mu-SC methods): EFL's bound "
                 "is at most theirs up to constants, for every G, mu, S, eps -> 0, L and Hessian dissimilarity "
                 "delta <= L",
       kind="counterexample", expected="violated", instances=_tighter_instances,
       false_kind="reading",
       reading="'tighter' as an order comparison over every family of (L, delta, eps): along L = delta = 1/eps, "
               "eps -> 0, EFL's row over SCAFFOLD's and over MIME's grows like eps^(-1/2), so no hidden constants "
               "make it tighter; read at fixed L, G, mu, S as eps -> 0, the three rows share the leading term "
               "G^2/(mu S eps) and EFL's is tighter than SCAFFOLD's second term iff L < G, and never than MIME's "
               "delta/mu (efl.statements.table1.tighter.corrected): not tighter, not refuted in its leading order")
def check_table1_tighter(d: dict) -> Evidence:
    """Counterexample family: L = delta = eps^(-1) with G, mu, S fixed and eps = 1e-2 .. 1e-12. The rows are
    orders with their constants hidden; "EFL = O(SCAFFOLD)" would bound their ratio by a constant as eps -> 0, but
    EFL / SCAFFOLD = (G^2/(S eps) + eps^(-3/2)) / (G^2/(S eps) + G eps^(-1/2) + eps^(-1)) ~ eps^(-1/2) / (G^2/S + 1)
    diverges (the same against MIME). Measured: the smaller of the two log-log slopes in 1/eps at the end of the
    family (1/2 exactly in the limit); the statement holds only if it is at most 0 up to the refutation margin."""
    out = _ratio_slope(**d)
    slope = min(out["slope_vs_SCAFFOLD"], out["slope_vs_MIME"])
    eps = _EPS_FAMILY[-1]
    lib = th.table1_rounds(G2=d["G"] ** 2, mu=d["mu"], S=d["S"], eps=eps, L=eps ** -d["power"],
                           delta=eps ** -d["power"])
    rows = printed_table1(G=d["G"], mu=d["mu"], S=d["S"], eps=eps, L=eps ** -d["power"], delta=eps ** -d["power"])
    transcribed = all(math.isclose(rows[k], lib[k], rel_tol=EXACT_REL) for k in rows)
    return Evidence(", ".join(f"{k}={v:g}" for k, v in d.items()) + ", L = delta = eps^-power, eps -> 0", slope,
                    _DIVERGENCE_SLOPE, slope <= _DIVERGENCE_SLOPE and transcribed,
                    details={**out, "eps": list(_EPS_FAMILY), "library_transcription_ok": transcribed})


def _tighter_corrected_instances(thorough: bool):
    # the fixed-constant counterexample first: smoothness large against the gradient bound
    yield dict(G=1.0, mu=1.0, S=1.0, eps=0.01, L=10.0, delta=10.0)
    yield dict(G=10.0, mu=0.1, S=10.0, eps=1e-3, L=1.0, delta=0.5)
    rng = np.random.default_rng(8)
    for _ in range(200 if thorough else 30):
        L = float(10 ** rng.uniform(-1, 2))
        yield dict(G=float(10 ** rng.uniform(-1, 2)), mu=float(L * 10 ** rng.uniform(-3, 0)),
                   S=float(rng.integers(1, 100)), eps=float(10 ** rng.uniform(-6, -0.01)), L=L,
                   delta=float(L * rng.uniform(0, 1)))


@claim(cites=("Table 1",),
       id="efl.statements.table1.tighter.corrected", paper=PAPER,
       reference="derived by fedtheory from the printed rows",
       statement="(derived by fedtheory) on Table 1's printed rows, for eps < 1: the statistical terms G^2/(mu S eps) "
                 "of EFL, SCAFFOLD and MIME coincide; EFL's row <= SCAFFOLD's iff L (1 - sqrt(eps)) <= G; EFL's "
                 "row > MIME's whenever delta <= L",
       kind="identity", derived=True, instances=_tighter_corrected_instances)
def check_table1_tighter_corrected(d: dict) -> Evidence:
    rows = printed_table1(**d)
    G, mu, eps, L = d["G"], d["mu"], d["eps"], d["L"]
    stat = G ** 2 / (mu * d["S"] * eps)
    # each row minus its optimisation terms, from the library's transcription of the table
    lib = th.table1_rounds(G2=G ** 2, mu=mu, S=d["S"], eps=eps, L=L, delta=d["delta"])
    firsts = (lib["EFL"] - L / (mu * math.sqrt(eps)), lib["SCAFFOLD"] - G / (mu * math.sqrt(eps)) - L / mu,
              lib["MIME"] - d["delta"] / mu)
    same_stat = all(math.isclose(f, stat, rel_tol=ITERATE_REL, abs_tol=ITERATE_REL * max(lib.values())) for f in firsts)
    predicted = d["L"] * (1 - math.sqrt(d["eps"])) <= d["G"]
    # comparisons at the floating-point resolution of the rows (ties are measure-zero on these draws)
    margin = rows["SCAFFOLD"] - rows["EFL"]
    scaffold_ok = (margin >= 0) == predicted or abs(margin) <= ITERATE_REL * rows["SCAFFOLD"]
    mime_ok = d["delta"] > d["L"] or rows["EFL"] > rows["MIME"]
    ok = same_stat and scaffold_ok and mime_ok
    return Evidence(", ".join(f"{k}={v:g}" for k, v in d.items()), float(ok), 1.0, bool(ok),
                    details={"efl_le_scaffold": margin >= 0, "predicted": predicted, "efl_gt_mime": rows["EFL"] >
                             rows["MIME"]})


# ---------------------------------------------------------------------------------------------------------
# Table 1's EFL row against Theorem 1's closed form
# ---------------------------------------------------------------------------------------------------------

def theorem1_rounds_to(eps: float, *, mu: float, L: float, E: int, theta: float, m: float, dist0_sq: float,
                       B: float) -> int:
    """The first round tau with Theorem 1's bound (eq. 7, H_tau = 0) at most eps, for a constant B_t = B and
    E[sum_k p s] = m every round, written from the theorem:

        gamma = max{4 E^2 theta/m, 32 E (1 + theta) L/(mu m)},
        C_tau = max{gamma^2 dist0_sq, (16 E/mu)^2 tau B/m^2},   bound(tau) = C_tau/(tau E + gamma)^2.

    The bound's first branch decreases in tau and the second like 1/tau, so a doubling then bisection finds tau.
    """
    gamma = max(4 * E * E * theta / m, 32 * E * (1 + theta) * L / (mu * m))

    def bound(tau: int) -> float:
        C = max(gamma ** 2 * dist0_sq, (16 * E / mu) ** 2 * tau * B / m ** 2)
        return C / (tau * E + gamma) ** 2

    hi = 1
    while bound(hi) > eps:
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if bound(mid) > eps:
            lo = mid
        else:
            hi = mid
    return hi


def _slope(xs: np.ndarray, f) -> float:
    ys = np.array([math.log(f(x)) for x in xs])
    return float(np.polyfit(np.log(xs), ys, 1)[0])


def _rounds_instances(thorough: bool):
    yield dict(E=2, theta=1.0, m=2.0, dist0_sq=1.0, B=1.0, mu=0.1, L=1.0)
    if thorough:
        yield dict(E=5, theta=2.0, m=4.0, dist0_sq=10.0, B=0.3, mu=0.01, L=2.0)


@claim(cites=("Table 1", "Theorem 1"),
       id="efl.statements.table1.theorem1_rounds", paper=PAPER,
       reference="the EFL row G^2/(mu S eps) + L/(mu sqrt(eps)) against eq. (7)",
       statement="rounds to E||w - w*||^2 <= eps from Theorem 1's bound (H_tau = 0, constant B_t): without noise "
                 "(B = 0) they scale as L/(mu sqrt(eps)) (log-log slopes -1/2 in eps, +1 in L, -1 in mu, within "
                 "0.05), the row's optimisation term; with B > 0 they scale as 1/eps for small eps (slope -1 "
                 "within 0.05), the order of the row's statistical term. The mu-exponent of that term is measured: "
                 "-2 in the theorem's accuracy measure (the table leaves 'eps-accuracy' undefined)",
       kind="rate", instances=_rounds_instances,
       non_discriminating=("no algorithm runs: the claim measures the orders of Theorem 1's closed-form bound (its "
                           "rounds to eps), which no broken variant of EFL can move; the runs against that bound "
                           "are efl.theorem1.bound's"),
       narrower="the orders of Table 1's EFL row, computed from Theorem 1's reconstructed bound with a constant B_t")
def check_table1_rounds(d: dict) -> Evidence:
    base = {k: d[k] for k in ("E", "theta", "m", "dist0_sq")}
    eps_small = np.geomspace(1e-10, 1e-8, 5)
    noiseless = dict(base, B=0.0)
    s_eps = _slope(eps_small, lambda e: theorem1_rounds_to(e, mu=d["mu"], L=d["L"], **noiseless))
    s_L = _slope(np.geomspace(10.0, 100.0, 5) * d["L"],
                 lambda x: theorem1_rounds_to(1e-8, mu=d["mu"], L=x, **noiseless))
    s_mu = _slope(np.geomspace(0.01, 0.1, 5) * d["mu"],
                  lambda x: theorem1_rounds_to(1e-8, mu=x, L=d["L"], **noiseless))
    noisy = dict(base, B=d["B"])
    s_eps_noisy = _slope(eps_small, lambda e: theorem1_rounds_to(e, mu=d["mu"], L=d["L"], **noisy))
    s_mu_noisy = _slope(np.geomspace(0.1, 1.0, 5) * d["mu"],
                        lambda x: theorem1_rounds_to(1e-8, mu=x, L=d["L"], **noisy))
    ok = (abs(s_eps + 0.5) <= 0.05 and abs(s_L - 1) <= 0.05 and abs(s_mu + 1) <= 0.05
          and abs(s_eps_noisy + 1) <= 0.05)
    return Evidence(", ".join(f"{k}={v:g}" for k, v in d.items()), s_eps_noisy, -1.0, bool(ok),
                    details={"noiseless_slopes": {"eps": s_eps, "L": s_L, "mu": s_mu},
                             "noisy_slopes": {"eps": s_eps_noisy, "mu": s_mu_noisy},
                             "table_exponents": {"statistical term": {"eps": -1, "mu": -1},
                                                 "optimisation term": {"eps": -0.5, "L": 1, "mu": -1}}})
