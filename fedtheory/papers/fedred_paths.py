"""The paths of Jiang, Rodomanov & Stich (ICML 2024)'s statements (:attr:`fedtheory.papers.inventory.Statement.paths`):
per statement about DANE, DANE+ or FedRed, the options of the algorithms that its own claims do not run, each with
why (``benchmarks/mutation/coverage.py --check-paths`` compares them with the runs). Kept apart from the inventory
(:mod:`fedtheory.papers.fedred`) so that stays a readable list of the paper's statements; a statement's dict
lists exactly its claims' unrun options, each reason true of that statement.
"""
from __future__ import annotations

__all__ = ["PATHS"]


# ---------------------------------------------------------------------------------------------------------
# Paths (Statement.paths): the options of DANE, DANE+ and FedRed that a statement's own claims do not run, each
# with why: "outside" the statement's hypotheses, or admitted and "unrun" (with what else runs it). Each
# statement's dict lists exactly its claims' unrun options (benchmarks/mutation/coverage.py --check-paths).
# ---------------------------------------------------------------------------------------------------------

_OUT_DANE_COMPARISON = ("outside: exact DANE runs in this statement's claims only as a yardstick (Alg. 2 with p = 1 "
                        "and 1/eta = 0 is DANE; Theorem 4 and Corollary 5 compare with exact DANE's rounds at lam "
                        "= 2 delta_A), not as the statement's algorithm")
_OUT_DANEPLUS_COMPARISON = ("outside: DANE+-GD runs in this statement's claims only as Table 1's comparison "
                            "(fedred.nonconvex.L_scaling), not as the statement's algorithm (FedRed-GD)")
_OUT_DANEPLUS_ALG2 = ("outside: DANE+ is Algorithm 1; it runs in Algorithm 2's claims only in "
                      "fedred.rounds.selection_law, which checks DANE+'s selection law for Algorithm 1 (cited too)")
_OUT_FEDRED_COMPARISON = ("outside: FedRed-GD runs in this statement's claims only as Table 1's comparison "
                          "(fedred.nonconvex.L_scaling), not as the statement's algorithm (DANE+-GD)")
# DANE+ (Algorithm 1)
_OUT_CV1 = ("outside: the statement is about control variate (1), h_{i,r} = grad f(x^r) - grad f_i(x^r); (B.84) "
            "and its weight m are Appendix B.3's other control variate (Corollary 32)")
_OUT_B84 = "outside: Corollary 32 is about control variate (B.84); control variate (1) is Theorems 1-4's"
_OUT_B84_STANDARD = ("outside: control variate (B.84) is defined with standard averaging (DANEPlus refuses a "
                     "selected model with it: the invariant sum_i w_i h_i = 0 needs the average)")
_UNRUN_B84_LAM = ("unrun: the claim checks Corollary 32 at its tuned lam (fedtheory's reconstruction sqrt(L mu), "
                  "docs/fedred.md); lam=None resolves to 2 delta_A, control variate (1)'s choice, whose resolution "
                  "Theorems 3, 4, 23 and 24's claims run")
_UNRUN_B84_LOCAL = ("unrun: Corollary 32 is read with exact local solves, as its claim's statement says (Lemma 31's "
                    "recurrence (B.85) is lost, and with it what it asks of inexact ones); Alg. 1's inexact local "
                    "solvers, rules and floors are run by Lemmas 20/22's claims and certified by "
                    "fedred.rounds.dane_reference (Algorithm 1)")
_OUT_STANDARD = ("outside: the statement assumes standard averaging x^{r+1} = sum_i w_i x_{i,r+1} (the proof "
                 "applies Lemma 14 to the average); a single selected model is the non-convex theory's (Theorem 1)")
_OUT_SELECTED = ("outside: the statement is about a selected local model x^{r+1} = x_{i_r,r+1} (Lemma 28's descent "
                 "holds per client); the average of the local models is not one of them")
_UNRUN_L19_SERVER = ("unrun: Lemma 19 is about the local output alone (the (mu + lam)-strong convexity of F_{i,r}); "
                     "the server's rule only decides which x^r are visited; its claim runs standard averaging and "
                     "the randomized selection")
_UNRUN_L19_CV = ("unrun: F_{i,r}'s strong convexity does not depend on the control variate h_{i,r}; (B.84) and its "
                 "m are run by Corollary 32's claim (fedred.daneplus.cv_b84)")
_UNRUN_L19_LOCAL = ("unrun: Lemma 19's inequality is the (mu + lam)-strong convexity of F_{i,r}, the same quadratic "
                    "form at any point (its claim is non-discriminating), so the local solver only chooses the "
                    "point; the claim runs K local GD steps and the exact solve, and every other local solver, rule "
                    "and floor of Alg. 1 is run by Lemmas 20/22's claims")
_UNRUN_L28_LAM = ("unrun: Lemma 28 holds for any lam >= delta_B; its claim runs Theorem 29's lam = 2 delta_B, and "
                  "Lemma 27's claims (the sandwich it applies to F_{i,r}(x_{i,r+1}) <= F_{i,r}(x^r)) run lam = 1.2, "
                  "2 and 3 delta_B")
_UNRUN_NC_WEIGHTS = ("unrun: fedtheory's non-convex family (fedtheory/problems/nonconvex.py) has equal weights; "
                     "unequal weights are run on quadratics by the convex statements' claims (Lemmas 11, 19-22, 35, "
                     "Theorems 4, 23, 24, 33, 36, Corollaries 21, 25, 32)")
_UNRUN_PER_POINT = ("unrun: the lemma holds at every point x and every x^r (its claims evaluate it at the local "
                    "models and at random points around them); the local solver and the server's rule only decide "
                    "which points are visited; every local solver and floor of Alg. 1 is run by Lemma 20's claims "
                    "and standard averaging by the convex chain's")
_UNRUN_TOL_FLOOR = ("unrun: tol_floor is fedtheory's floating-point floor of the stopping rules (stop once ||grad "
                    "F|| <= tol_floor ||grad f(x^0)||, docs/fedred.md), no parameter of the paper; the claims keep "
                    "its default 1e-12, and another floor is run by Lemma 20/22's claims and certified by "
                    "fedred.rounds.dane_reference (Algorithm 1)")
_UNRUN_ANY_LOCAL_CONVEX = ("unrun: the bound is in the realized local errors of the local outputs, so any local "
                           "solver is admitted; the claims run local GD with the statement's rule, and every local "
                           "solver and stopping rule of Alg. 1 (exact, GD, fast GD; relative, absolute, K steps, "
                           "the authors' rule and semi-implicit step) is run by Lemma 22 "
                           "(fedred.appendix.daneplus_inexact_recursion.derived), the recursion the proof sums")
_UNRUN_ANY_LOCAL_NONCONVEX = ("unrun: any local output with F_{i,r}(x_{i,r+1}) <= F_{i,r}(x^r) is admitted; the "
                              "claims run local GD from x^r at step 1/(L_i + lam) (K steps returning the "
                              "min-gradient iterate, or the absolute rule), which never increases F_{i,r}; the "
                              "other solvers and rules of Alg. 1 are run by Lemma 20/22's claims and certified by "
                              "fedred.rounds.dane_reference (Algorithm 1)")
_OUT_LOCAL_GD = ("outside: the corollary counts the steps of local GD (or fast GD) at step 1/(L_i + lam); the "
                 "exact solve, another step and the authors' semi-implicit step are not what it counts")
_OUT_COR30_RULE = ("outside: the corollary's local work is K local GD steps returning the min-gradient iterate "
                   "(Corollary 2) or local GD until ||grad F_{i,r}||^2 <= e (Corollary 30); the other rules are "
                   "Theorems 3/4's and the authors' code's")
_UNRUN_COR30_TOL = ("unrun: tol is sqrt(e) for the corollary's accuracy e; the default sqrt(2) is one more value of "
                    "e, and the claims run e = 1e-2 ||grad f(x^0)||^2")
_OUT_CONSTANT_ACCURACY = ("outside: the corollary's accuracy e is the same every round; a decaying tolerance is "
                          "Theorem 3's absolute rule")
_UNRUN_COR2_K = ("unrun: local_steps = 10,000 (the default) is one more value of K (or of the absolute rule's cap); "
                 "the claims run K = 1 to 50 and a cap of 10^6 that the rule never reaches")
_OUT_COR25_SOLVER = ("outside: the corollary counts the local (fast) GD steps that meet Theorem 24's rule; an exact "
                     "solve takes no steps to count")
_UNRUN_COR25_FGD = ("unrun: the fast-GD count of Corollary 25 is run by fedred.daneplus_gd.inexact (Corollary 5, "
                    "which restates it); this claim counts local GD's steps")
_OUT_RELATIVE_RULE = ("outside: the corollary counts the steps to Theorem 24's relative rule ||grad F_{i,r}|| <= "
                      "e_r ||x - x^r||; the absolute rule (and its decay), K fixed steps and the authors' rule are "
                      "other statements'")
_UNRUN_COR25_CAP = ("unrun: local_steps only caps the relative rule, whose step count the corollary bounds; the "
                    "claim caps at 10^5, never reached (the default 10,000 is another cap)")
# FedRed (Algorithms 2 and 3)
_UNRUN_P_DEFAULT = ("unrun: p=None is fedtheory's balanced choice min(1, (lam + mu) eta), one value of p in (0, 1], "
                    "which the statement admits; the claims pass p explicitly at several values, and p=None runs in "
                    "Lemma 11's claim and fedred.fedred_gd.vs_daneplus_gd (Table 1)")
_OUT_ALG2_LINEARIZED = "outside: the prox-linear step (solver='linearized') is Algorithm 3's (FedRed-GD)"
_OUT_SGD_ALG3 = ("outside: FedRed-SGD (stochastic=True) is Algorithm 3's; the local solves of Algorithm 2 take no "
                 "stochastic gradient")
_OUT_ALG3_INEXACT = ("outside: Algorithm 3 is the prox-linear step (solver='linearized'); local (fast) GD and its "
                     "local_steps, local_tol are Algorithm 2's inexact local solvers (fedred.local_solvers.derived)")
_OUT_ALG3 = ("outside: the statement is about Algorithm 3 (FedRed-GD, the prox-linear step); exact and inexact "
             "local solves, and their local_steps, local_tol, are Algorithm 2's (fedred.local_solvers.derived, "
             "Theorems 33/34)")
_OUT_ALG2_EXACT = ("outside: the statement is about Algorithm 2 with exact local solves (local stationary points); "
                   "the inexact local solvers, their local_steps, local_tol, are run by fedred.local_solvers.derived "
                   "(Algorithm 2), and Algorithm 3's prox-linear step by Theorems 36/37's claims")
_OUT_FR_STANDARD = ("outside: the convex statement assumes standard averaging x~_{k+1} = sum_i w_i x_{i,k+1}; the "
                    "randomized selection is the non-convex theory's (Theorems 34, 37)")
_OUT_FR_RANDOM = ("outside: the non-convex statement assumes the randomized selection of one local model; the "
                  "average is the convex theory's (Theorems 33, 36)")
_UNRUN_RESET_NC = ("unrun: fedtheory's pathwise form of the non-convex bound restarts the local descent at x~ "
                   "after each communication (the reset, which the authors' code does), and does not apply without "
                   "it; reset=False is run by Lemma 35's and Theorem 33's claims and certified by "
                   "fedred.rounds.fedred_reference (Algorithm 2)")
_UNRUN_RESET_CONVEX = ("unrun: the convex analysis holds with or without the reset; the claim resets, and "
                       "reset=False is run by Lemma 35's claim (the one-step recurrence the theorem telescopes)")
_UNRUN_SGD_CONVEX = ("unrun: the claim takes exact gradients (sigma = 0, the bound checked in exact expectation "
                     "over the coin); FedRed-SGD (Assumption 1) is run by fedred.fedred_sgd.noise_floor (Theorem 9, "
                     "which restates Theorem 36)")
_UNRUN_SGD_NC = ("unrun: the pathwise bound is for exact gradients (sigma = 0); FedRed-SGD is run by "
                 "fedred.fedred_sgd.noise_floor (Theorem 9) and certified by fedred.rounds.fedred_gd_reference "
                 "(Algorithm 3)")
_UNRUN_L11_SGD = ("unrun: Lemma 11 holds for any linear term g; its claim recomputes g from the full local "
                  "gradients, which FedRed-SGD replaces by a draw the check does not see; FedRed-SGD's step is "
                  "certified by fedred.rounds.fedred_gd_reference (Algorithm 3)")
_UNRUN_T34_ETA = ("unrun: eta = 1/L (the default) is one value of eta > 0, which the pathwise bound admits; the "
                  "claim runs eta = eta_delta/delta_B at three values, and eta=None's resolution to 1/L is run by "
                  "Lemma 35's and Theorem 36's claims")

#: Statement label -> {"<algorithm>:<option>=<value>": "outside: ..." | "unrun: ..."}.
PATHS: dict[str, dict[str, str]] = {
    "Algorithm 1": {
    },
    "Algorithm 2": {
        "dane+:averaging='random'": _OUT_DANEPLUS_ALG2,
        "dane+:averaging='standard'": _OUT_DANEPLUS_ALG2,
        "dane+:control_variate='scaffnew'": _OUT_DANEPLUS_ALG2,
        "dane+:lam=default": _OUT_DANEPLUS_ALG2,
        "dane+:local_step=other": _OUT_DANEPLUS_ALG2,
        "dane+:local_steps=default": _OUT_DANEPLUS_ALG2,
        "dane+:m=other": _OUT_DANEPLUS_ALG2,
        "dane+:solver='exact'": _OUT_DANEPLUS_ALG2,
        "dane+:solver='fgd'": _OUT_DANEPLUS_ALG2,
        "dane+:step_convention='semi_implicit'": _OUT_DANEPLUS_ALG2,
        "dane+:stopping='absolute'": _OUT_DANEPLUS_ALG2,
        "dane+:stopping='authors'": _OUT_DANEPLUS_ALG2,
        "dane+:stopping='relative'": _OUT_DANEPLUS_ALG2,
        "dane+:tol=other": _OUT_DANEPLUS_ALG2,
        "dane+:tol_decay=other": _OUT_DANEPLUS_ALG2,
        "dane+:tol_floor=other": _OUT_DANEPLUS_ALG2,
        "dane+:weights=equal": _OUT_DANEPLUS_ALG2,
        "fedred:p=default": _UNRUN_P_DEFAULT,
        "fedred:solver='linearized'": _OUT_ALG2_LINEARIZED,
        "fedred:stochastic=True": _OUT_SGD_ALG3,
    },
    "Algorithm 3": {
        "dane:lam=default": _OUT_DANE_COMPARISON,
        "dane:weights=unequal": _OUT_DANE_COMPARISON,
        "fedred:local_steps=other": _OUT_ALG3_INEXACT,
        "fedred:local_tol=other": _OUT_ALG3_INEXACT,
        "fedred:solver='fgd'": _OUT_ALG3_INEXACT,
        "fedred:solver='gd'": _OUT_ALG3_INEXACT,
    },
    "Corollary 2": {
        "dane+:averaging='standard'": _OUT_SELECTED,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:local_step=other": _OUT_LOCAL_GD,
        "dane+:local_steps=default": _UNRUN_COR2_K,
        "dane+:m=other": _OUT_CV1,
        "dane+:solver='exact'": _OUT_LOCAL_GD,
        "dane+:solver='fgd'": _OUT_LOCAL_GD,
        "dane+:step_convention='semi_implicit'": _OUT_LOCAL_GD,
        "dane+:stopping='authors'": _OUT_COR30_RULE,
        "dane+:stopping='relative'": _OUT_COR30_RULE,
        "dane+:tol_decay=other": _OUT_CONSTANT_ACCURACY,
        "dane+:tol_floor=other": _UNRUN_TOL_FLOOR,
        "dane+:weights=unequal": _UNRUN_NC_WEIGHTS,
        "fedred:eta=default": _OUT_FEDRED_COMPARISON,
        "fedred:lam=default": _OUT_FEDRED_COMPARISON,
        "fedred:local_steps=other": _OUT_FEDRED_COMPARISON,
        "fedred:local_tol=other": _OUT_FEDRED_COMPARISON,
        "fedred:p=default": _OUT_FEDRED_COMPARISON,
        "fedred:reset=False": _OUT_FEDRED_COMPARISON,
        "fedred:selection='standard'": _OUT_FEDRED_COMPARISON,
        "fedred:solver='exact'": _OUT_FEDRED_COMPARISON,
        "fedred:solver='fgd'": _OUT_FEDRED_COMPARISON,
        "fedred:solver='gd'": _OUT_FEDRED_COMPARISON,
        "fedred:stochastic=True": _OUT_FEDRED_COMPARISON,
        "fedred:weights=unequal": _OUT_FEDRED_COMPARISON,
    },
    "Corollary 25": {
        "dane+:averaging='fixed'": _OUT_STANDARD,
        "dane+:averaging='random'": _OUT_STANDARD,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:local_step=other": _OUT_LOCAL_GD,
        "dane+:local_steps=default": _UNRUN_COR25_CAP,
        "dane+:m=other": _OUT_CV1,
        "dane+:solver='exact'": _OUT_COR25_SOLVER,
        "dane+:solver='fgd'": _UNRUN_COR25_FGD,
        "dane+:step_convention='semi_implicit'": _OUT_LOCAL_GD,
        "dane+:stopping='absolute'": _OUT_RELATIVE_RULE,
        "dane+:stopping='authors'": _OUT_RELATIVE_RULE,
        "dane+:stopping='steps'": _OUT_RELATIVE_RULE,
        "dane+:tol_decay=other": _OUT_RELATIVE_RULE,
        "dane+:tol_floor=other": _UNRUN_TOL_FLOOR,
    },
    "Corollary 30": {
        "dane+:averaging='standard'": _OUT_SELECTED,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:local_step=other": _OUT_LOCAL_GD,
        "dane+:local_steps=default": _UNRUN_COR2_K,
        "dane+:m=other": _OUT_CV1,
        "dane+:solver='exact'": _OUT_LOCAL_GD,
        "dane+:solver='fgd'": _OUT_LOCAL_GD,
        "dane+:step_convention='semi_implicit'": _OUT_LOCAL_GD,
        "dane+:stopping='authors'": _OUT_COR30_RULE,
        "dane+:stopping='relative'": _OUT_COR30_RULE,
        "dane+:stopping='steps'": _OUT_COR30_RULE,
        "dane+:tol=default": _UNRUN_COR30_TOL,
        "dane+:tol_decay=other": _OUT_CONSTANT_ACCURACY,
        "dane+:tol_floor=other": _UNRUN_TOL_FLOOR,
        "dane+:weights=unequal": _UNRUN_NC_WEIGHTS,
    },
    "Corollary 32": {
        "dane+:averaging='fixed'": _OUT_B84_STANDARD,
        "dane+:averaging='random'": _OUT_B84_STANDARD,
        "dane+:control_variate='gradient'": _OUT_B84,
        "dane+:lam=default": _UNRUN_B84_LAM,
        "dane+:local_step=other": _UNRUN_B84_LOCAL,
        "dane+:local_steps=other": _UNRUN_B84_LOCAL,
        "dane+:solver='fgd'": _UNRUN_B84_LOCAL,
        "dane+:solver='gd'": _UNRUN_B84_LOCAL,
        "dane+:step_convention='semi_implicit'": _UNRUN_B84_LOCAL,
        "dane+:stopping='absolute'": _UNRUN_B84_LOCAL,
        "dane+:stopping='authors'": _UNRUN_B84_LOCAL,
        "dane+:stopping='steps'": _UNRUN_B84_LOCAL,
        "dane+:tol=other": _UNRUN_B84_LOCAL,
        "dane+:tol_decay=other": _UNRUN_B84_LOCAL,
        "dane+:tol_floor=other": _UNRUN_B84_LOCAL,
    },
    "Corollary 5": {
        "dane+:averaging='fixed'": _OUT_STANDARD,
        "dane+:averaging='random'": _OUT_STANDARD,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:local_step=other": _OUT_LOCAL_GD,
        "dane+:m=other": _OUT_CV1,
        "dane+:solver='exact'": _OUT_COR25_SOLVER,
        "dane+:step_convention='semi_implicit'": _OUT_LOCAL_GD,
        "dane+:stopping='absolute'": _OUT_RELATIVE_RULE,
        "dane+:stopping='authors'": _OUT_RELATIVE_RULE,
        "dane+:stopping='steps'": _OUT_RELATIVE_RULE,
        "dane+:tol_decay=other": _OUT_RELATIVE_RULE,
        "dane+:tol_floor=other": _UNRUN_TOL_FLOOR,
        "dane:lam=other": _OUT_DANE_COMPARISON,
    },
    "Lemma 11": {
        "fedred:local_steps=other": _OUT_ALG3,
        "fedred:local_tol=other": _OUT_ALG3,
        "fedred:solver='exact'": _OUT_ALG3,
        "fedred:solver='fgd'": _OUT_ALG3,
        "fedred:solver='gd'": _OUT_ALG3,
        "fedred:stochastic=True": _UNRUN_L11_SGD,
    },
    "Lemma 19": {
        "dane+:averaging='fixed'": _UNRUN_L19_SERVER,
        "dane+:control_variate='scaffnew'": _UNRUN_L19_CV,
        "dane+:m=other": _UNRUN_L19_CV,
        "dane+:local_step=other": _UNRUN_L19_LOCAL,
        "dane+:local_steps=default": _UNRUN_L19_LOCAL,
        "dane+:solver='fgd'": _UNRUN_L19_LOCAL,
        "dane+:step_convention='semi_implicit'": _UNRUN_L19_LOCAL,
        "dane+:stopping='absolute'": _UNRUN_L19_LOCAL,
        "dane+:stopping='authors'": _UNRUN_L19_LOCAL,
        "dane+:stopping='relative'": _UNRUN_L19_LOCAL,
        "dane+:tol=default": _UNRUN_L19_LOCAL,
        "dane+:tol_decay=other": _UNRUN_L19_LOCAL,
        "dane+:tol_floor=other": _UNRUN_L19_LOCAL,
    },
    "Lemma 20": {
        "dane+:averaging='fixed'": _OUT_STANDARD,
        "dane+:averaging='random'": _OUT_STANDARD,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:m=other": _OUT_CV1,
    },
    "Lemma 22": {
        "dane+:averaging='fixed'": _OUT_STANDARD,
        "dane+:averaging='random'": _OUT_STANDARD,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:m=other": _OUT_CV1,
    },
    "Lemma 26": {
        "dane+:averaging='standard'": _UNRUN_PER_POINT,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:local_step=other": _UNRUN_PER_POINT,
        "dane+:local_steps=default": _UNRUN_PER_POINT,
        "dane+:m=other": _OUT_CV1,
        "dane+:solver='exact'": _UNRUN_PER_POINT,
        "dane+:solver='fgd'": _UNRUN_PER_POINT,
        "dane+:step_convention='semi_implicit'": _UNRUN_PER_POINT,
        "dane+:stopping='absolute'": _UNRUN_PER_POINT,
        "dane+:stopping='authors'": _UNRUN_PER_POINT,
        "dane+:stopping='relative'": _UNRUN_PER_POINT,
        "dane+:tol=default": _UNRUN_PER_POINT,
        "dane+:tol_decay=other": _UNRUN_PER_POINT,
        "dane+:tol_floor=other": _UNRUN_PER_POINT,
        "dane+:weights=unequal": _UNRUN_NC_WEIGHTS,
    },
    "Lemma 27": {
        "dane+:averaging='standard'": _UNRUN_PER_POINT,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:local_step=other": _UNRUN_PER_POINT,
        "dane+:local_steps=default": _UNRUN_PER_POINT,
        "dane+:m=other": _OUT_CV1,
        "dane+:solver='exact'": _UNRUN_PER_POINT,
        "dane+:solver='fgd'": _UNRUN_PER_POINT,
        "dane+:step_convention='semi_implicit'": _UNRUN_PER_POINT,
        "dane+:stopping='absolute'": _UNRUN_PER_POINT,
        "dane+:stopping='authors'": _UNRUN_PER_POINT,
        "dane+:stopping='relative'": _UNRUN_PER_POINT,
        "dane+:tol=default": _UNRUN_PER_POINT,
        "dane+:tol_decay=other": _UNRUN_PER_POINT,
        "dane+:tol_floor=other": _UNRUN_PER_POINT,
        "dane+:weights=unequal": _UNRUN_NC_WEIGHTS,
    },
    "Lemma 28": {
        "dane+:averaging='standard'": _OUT_SELECTED,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:lam=other": _UNRUN_L28_LAM,
        "dane+:local_step=other": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:local_steps=default": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:m=other": _OUT_CV1,
        "dane+:solver='exact'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:solver='fgd'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:step_convention='semi_implicit'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:stopping='absolute'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:stopping='authors'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:stopping='relative'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:tol=other": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:tol_decay=other": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:tol_floor=other": _UNRUN_TOL_FLOOR,
        "dane+:weights=unequal": _UNRUN_NC_WEIGHTS,
    },
    "Lemma 35": {
        "fedred:local_steps=other": _OUT_ALG3,
        "fedred:local_tol=other": _OUT_ALG3,
        "fedred:p=default": _UNRUN_P_DEFAULT,
        "fedred:selection='random'": _OUT_FR_STANDARD,
        "fedred:solver='exact'": _OUT_ALG3,
        "fedred:solver='fgd'": _OUT_ALG3,
        "fedred:solver='gd'": _OUT_ALG3,
        "fedred:stochastic=True": _UNRUN_SGD_CONVEX,
    },
    "Theorem 1": {
        "dane+:averaging='standard'": _OUT_SELECTED,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:local_step=other": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:local_steps=default": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:m=other": _OUT_CV1,
        "dane+:solver='exact'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:solver='fgd'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:step_convention='semi_implicit'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:stopping='absolute'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:stopping='authors'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:stopping='relative'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:tol_decay=other": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:tol_floor=other": _UNRUN_TOL_FLOOR,
        "dane+:weights=unequal": _UNRUN_NC_WEIGHTS,
    },
    "Theorem 23": {
        "dane+:averaging='fixed'": _OUT_STANDARD,
        "dane+:averaging='random'": _OUT_STANDARD,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:local_step=other": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:local_steps=default": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:m=other": _OUT_CV1,
        "dane+:solver='exact'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:solver='fgd'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:step_convention='semi_implicit'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:stopping='authors'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:stopping='relative'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:stopping='steps'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:tol=default": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:tol_floor=other": _UNRUN_TOL_FLOOR,
    },
    "Theorem 24": {
        "dane+:averaging='fixed'": _OUT_STANDARD,
        "dane+:averaging='random'": _OUT_STANDARD,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:local_step=other": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:local_steps=other": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:m=other": _OUT_CV1,
        "dane+:solver='exact'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:solver='fgd'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:step_convention='semi_implicit'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:stopping='absolute'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:stopping='authors'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:stopping='steps'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:tol=default": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:tol_decay=other": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:tol_floor=other": _UNRUN_TOL_FLOOR,
    },
    "Theorem 29": {
        "dane+:averaging='standard'": _OUT_SELECTED,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:local_step=other": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:local_steps=default": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:m=other": _OUT_CV1,
        "dane+:solver='exact'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:solver='fgd'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:step_convention='semi_implicit'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:stopping='absolute'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:stopping='authors'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:stopping='relative'": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:tol=default": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:tol_decay=other": _UNRUN_ANY_LOCAL_NONCONVEX,
        "dane+:tol_floor=other": _UNRUN_TOL_FLOOR,
        "dane+:weights=unequal": _UNRUN_NC_WEIGHTS,
    },
    "Theorem 3": {
        "dane+:averaging='fixed'": _OUT_STANDARD,
        "dane+:averaging='random'": _OUT_STANDARD,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:local_step=other": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:local_steps=default": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:m=other": _OUT_CV1,
        "dane+:solver='exact'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:solver='fgd'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:step_convention='semi_implicit'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:stopping='authors'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:stopping='relative'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:stopping='steps'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:tol=default": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:tol_floor=other": _UNRUN_TOL_FLOOR,
    },
    "Theorem 33": {
        "fedred:local_steps=other": _OUT_ALG2_EXACT,
        "fedred:local_tol=other": _OUT_ALG2_EXACT,
        "fedred:p=default": _UNRUN_P_DEFAULT,
        "fedred:selection='random'": _OUT_FR_STANDARD,
        "fedred:solver='fgd'": _OUT_ALG2_EXACT,
        "fedred:solver='gd'": _OUT_ALG2_EXACT,
        "fedred:solver='linearized'": _OUT_ALG2_EXACT,
        "fedred:stochastic=True": _OUT_SGD_ALG3,
    },
    "Theorem 34": {
        "fedred:eta=default": _UNRUN_T34_ETA,
        "fedred:local_steps=other": _OUT_ALG2_EXACT,
        "fedred:local_tol=other": _OUT_ALG2_EXACT,
        "fedred:p=default": _UNRUN_P_DEFAULT,
        "fedred:reset=False": _UNRUN_RESET_NC,
        "fedred:selection='standard'": _OUT_FR_RANDOM,
        "fedred:solver='fgd'": _OUT_ALG2_EXACT,
        "fedred:solver='gd'": _OUT_ALG2_EXACT,
        "fedred:solver='linearized'": _OUT_ALG2_EXACT,
        "fedred:stochastic=True": _OUT_SGD_ALG3,
        "fedred:weights=unequal": _UNRUN_NC_WEIGHTS,
    },
    "Theorem 36": {
        "fedred:local_steps=other": _OUT_ALG3,
        "fedred:local_tol=other": _OUT_ALG3,
        "fedred:p=default": _UNRUN_P_DEFAULT,
        "fedred:reset=False": _UNRUN_RESET_CONVEX,
        "fedred:selection='random'": _OUT_FR_STANDARD,
        "fedred:solver='exact'": _OUT_ALG3,
        "fedred:solver='fgd'": _OUT_ALG3,
        "fedred:solver='gd'": _OUT_ALG3,
        "fedred:stochastic=True": _UNRUN_SGD_CONVEX,
    },
    "Theorem 37": {
        "fedred:local_steps=other": _OUT_ALG3,
        "fedred:local_tol=other": _OUT_ALG3,
        "fedred:p=default": _UNRUN_P_DEFAULT,
        "fedred:reset=False": _UNRUN_RESET_NC,
        "fedred:selection='standard'": _OUT_FR_RANDOM,
        "fedred:solver='exact'": _OUT_ALG3,
        "fedred:solver='fgd'": _OUT_ALG3,
        "fedred:solver='gd'": _OUT_ALG3,
        "fedred:stochastic=True": _UNRUN_SGD_NC,
        "fedred:weights=unequal": _UNRUN_NC_WEIGHTS,
    },
    "Theorem 4": {
        "dane+:averaging='fixed'": _OUT_STANDARD,
        "dane+:averaging='random'": _OUT_STANDARD,
        "dane+:control_variate='scaffnew'": _OUT_CV1,
        "dane+:local_step=other": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:local_steps=other": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:m=other": _OUT_CV1,
        "dane+:solver='exact'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:step_convention='semi_implicit'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:stopping='absolute'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:stopping='authors'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:stopping='steps'": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:tol_decay=other": _UNRUN_ANY_LOCAL_CONVEX,
        "dane+:tol_floor=other": _UNRUN_TOL_FLOOR,
        "dane:lam=other": _OUT_DANE_COMPARISON,
    },
    "Theorem 6": {
        "fedred:eta=default": _UNRUN_T34_ETA,
        "fedred:local_steps=other": _OUT_ALG2_EXACT,
        "fedred:local_tol=other": _OUT_ALG2_EXACT,
        "fedred:p=default": _UNRUN_P_DEFAULT,
        "fedred:reset=False": _UNRUN_RESET_NC,
        "fedred:selection='standard'": _OUT_FR_RANDOM,
        "fedred:solver='fgd'": _OUT_ALG2_EXACT,
        "fedred:solver='gd'": _OUT_ALG2_EXACT,
        "fedred:solver='linearized'": _OUT_ALG2_EXACT,
        "fedred:stochastic=True": _OUT_SGD_ALG3,
        "fedred:weights=unequal": _UNRUN_NC_WEIGHTS,
    },
    "Theorem 8": {
        "dane+:averaging='fixed'": _OUT_DANEPLUS_COMPARISON,
        "dane+:averaging='standard'": _OUT_DANEPLUS_COMPARISON,
        "dane+:control_variate='scaffnew'": _OUT_DANEPLUS_COMPARISON,
        "dane+:lam=default": _OUT_DANEPLUS_COMPARISON,
        "dane+:local_step=other": _OUT_DANEPLUS_COMPARISON,
        "dane+:local_steps=default": _OUT_DANEPLUS_COMPARISON,
        "dane+:m=other": _OUT_DANEPLUS_COMPARISON,
        "dane+:solver='exact'": _OUT_DANEPLUS_COMPARISON,
        "dane+:solver='fgd'": _OUT_DANEPLUS_COMPARISON,
        "dane+:step_convention='semi_implicit'": _OUT_DANEPLUS_COMPARISON,
        "dane+:stopping='absolute'": _OUT_DANEPLUS_COMPARISON,
        "dane+:stopping='authors'": _OUT_DANEPLUS_COMPARISON,
        "dane+:stopping='relative'": _OUT_DANEPLUS_COMPARISON,
        "dane+:tol=other": _OUT_DANEPLUS_COMPARISON,
        "dane+:tol_decay=other": _OUT_DANEPLUS_COMPARISON,
        "dane+:tol_floor=other": _OUT_DANEPLUS_COMPARISON,
        "dane+:weights=unequal": _OUT_DANEPLUS_COMPARISON,
        "fedred:local_steps=other": _OUT_ALG3,
        "fedred:local_tol=other": _OUT_ALG3,
        "fedred:p=default": _UNRUN_P_DEFAULT,
        "fedred:reset=False": _UNRUN_RESET_NC,
        "fedred:selection='standard'": _OUT_FR_RANDOM,
        "fedred:solver='exact'": _OUT_ALG3,
        "fedred:solver='fgd'": _OUT_ALG3,
        "fedred:solver='gd'": _OUT_ALG3,
        "fedred:stochastic=True": _UNRUN_SGD_NC,
        "fedred:weights=unequal": _UNRUN_NC_WEIGHTS,
    },
    "Theorem 9": {
        "fedred:local_steps=other": _OUT_ALG3,
        "fedred:local_tol=other": _OUT_ALG3,
        "fedred:p=default": _UNRUN_P_DEFAULT,
        "fedred:reset=False": _UNRUN_RESET_CONVEX,
        "fedred:selection='random'": _OUT_FR_STANDARD,
        "fedred:solver='exact'": _OUT_ALG3,
        "fedred:solver='fgd'": _OUT_ALG3,
        "fedred:solver='gd'": _OUT_ALG3,
    },
}
