"""fedtheory's options that reproduce the FedRed/DANE+ authors' reference code (issue 18).

The authors' code is mlolab/S-DANE, ``src/optimizers/fedred.py``, class ``FedRed`` (Jiang, Rodomanov & Stich
2024). Each variant is checked against an independent replay written here with plain per-client loops in the
code's own form -- its sign of the control variate (c_i = grad f_i(x^r) - grad f(x^r), subtracted), its
semi-implicit step z+ = (c_i - g + z/lr + lam x^r)/(1/lr + lam), its post-step stopping test -- on gradients
computed here from the problem's raw data (A_i, b_i or the logistic samples), not through fedtheory's oracles
or local solvers. Then each option at the paper's value is checked to reduce to the existing algorithm.

Tolerance (all comparisons): the replay and the implementation evaluate the same formulas in a different
order (the replay's per-client ``A_i @ z`` against batched matvecs, z/lr + ... against z - s grad F), so each
local step differs by a few ulps of the iterate scale. The local maps are non-expansive (steps <= 1/(L + lam)),
so the difference grows at most linearly in the total number of steps: here <= ~500 steps x ~10 eps x scale
~ 1e-12 relative. Stopping decisions compare two such numbers; the replay records the relative margin of each
decision and asserts it exceeds 1e-8, so no decision is within rounding of its threshold (otherwise a
different BLAS could flip it and the step counts would legitimately differ).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fedtheory.algorithms import Draw
from fedtheory.algorithms.dane import DANEPlus
from fedtheory.algorithms.fedprox import FedProx
from fedtheory.algorithms.fedred import FedRed, FedRedDraw
from fedtheory.algorithms.gd import GradientDescent
from fedtheory.algorithms.scaffnew import Scaffnew
from fedtheory.algorithms.scaffold import Scaffold
from fedtheory.problems.logistic import LogisticProblem
from fedtheory.problems.quadratic import quadratic
from fedtheory.problems.rescaled import rescaled_clients
from fedtheory.run import run

TOL = 1e-12  # see the module docstring
MARGIN = 1e-8  # smallest relative distance of a stopping decision from its threshold


# ------------------------------------------------------------------------------------------------------
# Instances with gradients computed here from their raw data
# ------------------------------------------------------------------------------------------------------

class RawQuadratic:
    """f_i(x) = 1/2 x^T A_i x - b_i^T x from the generated problem's stored A_i, b_i."""

    def __init__(self):
        self.problem = quadratic(4, 5, mu=0.5, L=20.0, delta_A=2.0, zeta2=4.0, seed=3)
        self.A = np.array(self.problem.A)
        self.b = np.array(self.problem.b)
        self.w = np.full(4, 0.25)
        self.L = 20.0

    def grad(self, i, x):
        return self.A[i] @ x - self.b[i]


class RawLogistic:
    """f_i(x) = (1/m_i) sum_j log(1 + exp(-y_j a_j^T x)) + reg/2 ||x||^2, clients of unequal sizes, w_i = m_i/M."""

    def __init__(self):
        rng = np.random.default_rng(11)
        sizes = [7, 12, 5, 9]
        self.a = [rng.standard_normal((m, 4)) + 0.3 * i for i, m in enumerate(sizes)]
        self.y = [np.where(rng.random(m) < 0.5, -1.0, 1.0) for m in sizes]
        self.reg = 0.1
        self.problem = LogisticProblem(self.a, self.y, reg=self.reg, weights="size")
        self.w = np.array(sizes, dtype=float) / sum(sizes)
        self.L = max(np.linalg.norm(a, 2) ** 2 / (4 * len(a)) for a in self.a) + self.reg

    def grad(self, i, x):
        t = self.y[i] * (self.a[i] @ x)
        s = 1.0 / (1.0 + np.exp(t))  # sigma(-t)
        return -(self.a[i] * (self.y[i] * s)[:, None]).mean(axis=0) + self.reg * x


class RawLogisticCodeWeights(RawLogistic):
    """The code's client weighting on the same data: client i's gradient is n m_i/M times its mean-loss gradient
    (the l2 term included) and the server averages plainly; fedtheory: ``rescaled_clients``."""

    def __init__(self):
        super().__init__()
        n = len(self.w)
        self.scale = n * self.w
        self.problem = rescaled_clients(self.problem)
        self.L = float(np.max(self.scale)) * self.L
        self.w = np.full(n, 1.0 / n)

    def grad(self, i, x):
        return self.scale[i] * super().grad(i, x)


INSTANCES = {"quadratic": RawQuadratic, "logistic": RawLogistic, "logistic_code_weights": RawLogisticCodeWeights}


def _close(a, b):
    return np.linalg.norm(a - b) <= TOL * max(1.0, np.linalg.norm(b))


# ------------------------------------------------------------------------------------------------------
# The replay of the code's FedRed.step (full participation, full batches, constant step, outer_lr = 1)
# ------------------------------------------------------------------------------------------------------

class CodeReplay:
    """The code's state: server model, control variates in the code's sign, last local iterates, step count."""

    def __init__(self, inst, x0, *, lr, lam, control_variate, stopping, K=None, m=None):
        self.inst, self.lr, self.lam = inst, lr, lam
        self.cv_type, self.stopping, self.K, self.m = control_variate, stopping, K, m
        self.x = np.array(x0, dtype=float)
        self.c = None
        self.iterates = None
        self.r = 0
        self.total_local_steps = 0
        self.margins = []

    def _gradient_cv(self):
        n = len(self.inst.w)
        g = [self.inst.grad(i, self.x) for i in range(n)]
        avg = sum(self.inst.w[i] * g[i] for i in range(n))
        return [g[i] - avg for i in range(n)]

    def step(self, K_round=None):
        n = len(self.inst.w)
        if self.cv_type == 0:  # no control variate (FedProx / FedAvg)
            self.c = [np.zeros_like(self.x) for _ in range(n)]
        elif self.cv_type == 1 or self.c is None:  # type 1 every round; type 2 starts like type 1
            self.c = self._gradient_cv()
        else:  # type 2: c_i <- c_i + m (x^{r} - x_{i,r})
            self.c = [self.c[i] + self.m * (self.x - self.iterates[i]) for i in range(n)]
        K_fixed = K_round if K_round is not None else self.K
        iterates, counts = [], []
        for i in range(n):
            z, k = self.x.copy(), 0
            while True:
                g = self.inst.grad(i, z)
                z_new = (self.c[i] - g + z / self.lr + self.lam * self.x) / (1.0 / self.lr + self.lam)
                k += 1
                if self.stopping:
                    lhs = np.sum((g - self.c[i] + self.lam * (z_new - self.x)) ** 2)
                    rhs = 2 * self.lam ** 2 * np.sum((z_new - self.x) ** 2) / (self.r + 1) ** 2 + 1e-6
                    self.margins.append(abs(lhs - rhs) / rhs)
                    z = z_new
                    if lhs < rhs:
                        break
                else:
                    z = z_new
                    if k >= K_fixed:
                        break
            iterates.append(z)
            counts.append(k)
        self.iterates = iterates
        self.x = sum(self.inst.w[i] * iterates[i] for i in range(n))
        self.r += 1
        steps = max(counts) if self.stopping else K_fixed
        self.total_local_steps += steps
        return steps, counts


def _x0(inst):
    return np.linspace(-1.0, 1.0, inst.problem.dim)


# ------------------------------------------------------------------------------------------------------
# (1) DANE+ with the code's stopping rule, semi-implicit step and step counting
# ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(INSTANCES))
def test_daneplus_authors_stopping_matches_replay(kind):
    inst = INSTANCES[kind]()
    lr, lam, R = 1.0 / inst.L, 1.0, 6
    alg = DANEPlus(lam=lam, solver="gd", stopping="authors", local_step=lr, step_convention="semi_implicit")
    code = CodeReplay(inst, _x0(inst), lr=lr, lam=lam, control_variate=1, stopping=True)
    state = alg.init(inst.problem, _x0(inst))
    rng = np.random.default_rng(0)
    for _ in range(R):
        state, log = alg.round(inst.problem, state, rng)
        steps, counts = code.step()
        assert _close(state.x, code.x)
        assert log.extra["local_steps_max"] == steps  # the code's per-round count: max over clients
        assert log.extra["local_not_converged"] == 0  # the safety cap never bound
        # K_i gradients per client; the first (at x^r) is the control variate's, charged once
        assert log.local_grad_evals == sum(counts)
    assert min(code.margins) > MARGIN
    assert code.total_local_steps > 2 * R  # the rule did run several steps, so the test is not vacuous
    trace = run(alg, inst.problem, R, x0=_x0(inst))
    # the code's returned running total (the trace's round 0 is the start, without extras)
    assert trace.local_steps_max[1:].cumsum()[-1] == code.total_local_steps


# ------------------------------------------------------------------------------------------------------
# (2) the code's "Scaffold" (lam = 0) and its fixed-K DANE+ (lam > 0): K steps, last iterate
# ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(INSTANCES))
@pytest.mark.parametrize("lam", [0.0, 0.7])
def test_fixed_steps_last_iterate_matches_replay(kind, lam):
    inst = INSTANCES[kind]()
    lr, K, R = 0.8 / inst.L, 5, 6
    if lam == 0.0:
        alg = DANEPlus.authors_scaffold(K, lr)
    else:
        alg = DANEPlus(lam=lam, solver="gd", stopping="steps", local_steps=K, local_output="last", local_step=lr,
                       step_convention="semi_implicit")
    code = CodeReplay(inst, _x0(inst), lr=lr, lam=lam, control_variate=1, stopping=False, K=K)
    state = alg.init(inst.problem, _x0(inst))
    rng = np.random.default_rng(0)
    n = inst.problem.n_clients
    for _ in range(R):
        state, log = alg.round(inst.problem, state, rng)
        code.step()
        assert _close(state.x, code.x)
        assert log.extra["local_steps_max"] == K
        assert log.local_grad_evals == n * K


@pytest.mark.parametrize("kind", sorted(INSTANCES))
def test_code_fedprox_config_is_daneplus_with_scaffnew_variate(kind):
    """The code's experiment configs run 'Fedprox' with control_variate=2 (a Scaffnew-type variate with
    m = p/lr, p = 1/4); it is DANE+ with CV (B.84), K steps and the last iterate."""
    inst = INSTANCES[kind]()
    lr, lam, K, R = 0.8 / inst.L, 0.5, 4, 6
    m = 0.25 / lr
    alg = DANEPlus(lam=lam, control_variate="scaffnew", m=m, solver="gd", stopping="steps", local_steps=K,
                   local_output="last", local_step=lr, step_convention="semi_implicit")
    code = CodeReplay(inst, _x0(inst), lr=lr, lam=lam, control_variate=2, stopping=False, K=K, m=m)
    state = alg.init(inst.problem, _x0(inst))
    for _ in range(R):
        state, _ = alg.round(inst.problem, state, np.random.default_rng(0))
        code.step()
        assert _close(state.x, code.x)


# ------------------------------------------------------------------------------------------------------
# (3) the code's Scaffnew: h^0 = grad f_i(x^0) - grad f(x^0), Geometric(p) local steps per round
# ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(INSTANCES))
def test_scaffnew_authors_matches_replay(kind):
    inst = INSTANCES[kind]()
    lr, p = 0.9 / inst.L, 0.3
    alg = Scaffnew(step=lr, p=p, h_init="gradient", round_unit="communication")
    code = CodeReplay(inst, _x0(inst), lr=lr, lam=0.0, control_variate=2, stopping=False, m=p / lr)
    n = inst.problem.n_clients
    state = alg.init(inst.problem, _x0(inst))
    for K in (3, 1, 5, 2, 1, 4):  # a recorded sequence of the code's geometric draws
        state, log = alg.round_given(inst.problem, state, Draw(clients=np.arange(n), local_steps=K))
        code.step(K_round=K)
        assert _close(state.x, code.x)
        assert log.extra["local_steps"] == K and log.local_grad_evals == n * K and log.communicated


def test_scaffnew_communication_round_draws_coins_after_each_step():
    """K = the index of the first heads in a sequence of Bernoulli(p) coins, one uniform per coin."""
    problem = RawQuadratic().problem
    alg = Scaffnew(step=0.04, p=0.2, round_unit="communication")
    state = alg.init(problem, np.zeros(problem.dim))
    for seed in range(20):
        draw = alg.draw(problem, state, np.random.default_rng(seed))
        u = np.random.default_rng(seed).random(200)
        assert draw.local_steps == int(np.argmax(u < 0.2)) + 1
    with pytest.raises(ValueError, match="round_unit"):
        list(alg.outcomes(problem, state))
    trace = run(alg, problem, 15, seed=4)
    assert np.all(trace.local_steps[1:] >= 1)
    assert np.array_equal(trace.local_grad_evals[1:], problem.n_clients * trace.local_steps[1:])


# ------------------------------------------------------------------------------------------------------
# The code's FedProx and FedRed-GD need no option (the docs table says so; checked here)
# ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(INSTANCES))
def test_code_fedprox_and_fedred_are_existing_algorithms(kind):
    inst = INSTANCES[kind]()
    lr, lam, K = 0.8 / inst.L, 0.6, 4
    prox = FedProx(prox=lam, solver="gd", local_steps=K, local_step=lr / (1 + lam * lr))
    code = CodeReplay(inst, _x0(inst), lr=lr, lam=lam, control_variate=0, stopping=False, K=K)
    state = prox.init(inst.problem, _x0(inst))
    for _ in range(5):
        state, _ = prox.round(inst.problem, state, np.random.default_rng(0))
        code.step()
        assert _close(state.x, code.x)
    # FedRed-GD: a code round of K Geometric(p) steps is K - 1 iterations without and one with communication
    fedred = FedRed(lam=lam, eta=lr, p=0.3, solver="linearized")
    code = CodeReplay(inst, _x0(inst), lr=lr, lam=lam, control_variate=1, stopping=False)
    state = fedred.init(inst.problem, _x0(inst))
    for K in (2, 1, 4, 3):
        for coin in [False] * (K - 1) + [True]:
            state, _ = fedred.round_given(inst.problem, state, FedRedDraw(communicate=coin))
        code.step(K_round=K)
        assert _close(state.x, code.x)


# ------------------------------------------------------------------------------------------------------
# Options at the paper's values reduce to the existing algorithms
# ------------------------------------------------------------------------------------------------------

def test_authors_scaffold_with_one_step_is_gd_and_scaffold():
    """K = 1: x - lr (grad f_i(x) - grad f_i(x) + grad f(x)) averaged is a GD step, as is SCAFFOLD's."""
    inst = RawQuadratic()
    lr = 0.04
    x0 = _x0(inst)
    xs = [run(a, inst.problem, 8, x0=x0).x_final for a in
          (DANEPlus.authors_scaffold(1, lr), GradientDescent(step=lr), Scaffold(local_steps=1, local_step=lr))]
    assert _close(xs[0], xs[1]) and _close(xs[2], xs[1])


@pytest.mark.parametrize("kind", sorted(INSTANCES))
def test_semi_implicit_step_is_explicit_step_lr_over_one_plus_lam_lr(kind):
    inst = INSTANCES[kind]()
    lr, lam = 2.0 / inst.L, 0.8
    for stopping in ("relative", "authors"):
        a = DANEPlus(lam=lam, solver="gd", stopping=stopping, local_step=lr, step_convention="semi_implicit")
        b = dataclasses.replace(a, local_step=lr / (1 + lam * lr), step_convention="explicit")
        ta, tb = run(a, inst.problem, 5, x0=_x0(inst)), run(b, inst.problem, 5, x0=_x0(inst))
        assert _close(ta.x_final, tb.x_final)
        assert np.array_equal(ta.local_grad_evals, tb.local_grad_evals)


def test_last_iterate_is_the_min_gradient_iterate_on_quadratics():
    """With step 1/(L_i + lam), grad F_{k+1} = (I - s(A_i + lam I)) grad F_k contracts, so Cor 2's min-gradient
    iterate is the last one: local_output="last" reduces to the paper's K-step rule."""
    problem = RawQuadratic().problem
    a = DANEPlus(lam=0.6, solver="gd", stopping="steps", local_steps=6)
    b = dataclasses.replace(a, local_output="last")
    ta, tb = run(a, problem, 6, x0=np.ones(problem.dim)), run(b, problem, 6, x0=np.ones(problem.dim))
    assert _close(tb.x_final, ta.x_final)
    # the paper's variant also evaluates the gradient at the returned point (K + 1 per client, one shared)
    assert np.array_equal(ta.local_grad_evals[1:], tb.local_grad_evals[1:] + problem.n_clients)


def test_scaffnew_communication_round_is_k_iterations_of_the_step_mode():
    problem = RawQuadratic().problem
    base = Scaffnew(step=0.04, p=0.3, h_init="gradient")
    comm = dataclasses.replace(base, round_unit="communication")
    s_step, s_comm = base.init(problem, np.ones(problem.dim)), comm.init(problem, np.ones(problem.dim))
    S = np.arange(problem.n_clients)
    for K in (2, 4, 1):
        for coin in [False] * (K - 1) + [True]:
            s_step, _ = base.round_given(problem, s_step, Draw(clients=S, coin=coin))
        s_comm, _ = comm.round_given(problem, s_comm, Draw(clients=S, local_steps=K))
        assert np.array_equal(s_step.x, s_comm.x) and np.array_equal(s_step.H, s_comm.H)


def test_scaffnew_p_one_communication_rounds_are_step_rounds():
    problem = RawQuadratic().problem
    a = Scaffnew(step=0.04, p=1.0)
    b = dataclasses.replace(a, round_unit="communication")
    assert np.array_equal(run(a, problem, 10, seed=1).x_final, run(b, problem, 10, seed=1).x_final)


@pytest.mark.parametrize("kind", sorted(INSTANCES))
def test_scaffnew_gradient_init_at_optimum_is_the_fixed_point(kind):
    """h_i^0 = grad f_i(x*) - grad f(x*) = grad f_i(x*) at x^0 = x*: the ProxSkip fixed point, which stays."""
    problem = INSTANCES[kind]().problem
    alg = Scaffnew(step=0.05, p=0.5, h_init="gradient", round_unit="communication")
    xs = problem.certificate.x_star
    state = alg.init(problem, xs)
    fixed = alg.optimal_state(problem)
    scale = max(1.0, float(np.abs(fixed.H).max()))
    # grad f(x*) is the certificate's residual (Newton to ~1e-12 for logistic, rounding for quadratics)
    resid = float(np.linalg.norm(problem.grad(xs)))
    assert np.abs(state.H - fixed.H).max() <= resid + 1e-13 * scale
    state, _ = alg.round_given(problem, state, Draw(clients=np.arange(problem.n_clients), local_steps=3))
    assert np.linalg.norm(state.x - xs) <= 1e-10 * max(1.0, np.linalg.norm(xs))


# ------------------------------------------------------------------------------------------------------
# Validation
# ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, name", [
    ({"stopping": "authors", "solver": "fgd"}, "stopping"),
    ({"stopping": "authors", "solver": "gd", "local_steps": 0}, "local_steps"),
    ({"solver": "exact", "local_step": 0.1}, "local_step"),
    ({"solver": "gd", "local_step": -1.0}, "local_step"),
    ({"solver": "gd", "step_convention": "implicit"}, "step_convention"),
    ({"solver": "gd", "stopping": "steps", "local_output": "best"}, "local_output"),
    ({"solver": "gd", "stopping": "relative", "local_output": "last"}, "local_output"),
    ({"solver": "gd", "stopping": "steps", "stochastic": True, "local_output": "min_gradient"}, "local_output"),
])
def test_daneplus_bad_options_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        DANEPlus(**kwargs)


@pytest.mark.parametrize("kwargs, name", [({"h_init": "ones"}, "h_init"), ({"round_unit": "epoch"}, "round_unit")])
def test_scaffnew_bad_options_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        Scaffnew(**kwargs)


def test_scaffnew_communication_round_needs_its_step_count():
    problem = RawQuadratic().problem
    alg = Scaffnew(step=0.04, round_unit="communication")
    state = alg.init(problem, np.zeros(problem.dim))
    with pytest.raises(ValueError, match="local_steps"):
        alg.round_given(problem, state, Draw(clients=np.arange(problem.n_clients)))
    with pytest.raises(ValueError, match="local_steps"):
        alg.round_given(problem, state, Draw(clients=np.arange(problem.n_clients), local_steps=0))


# ------------------------------------------------------------------------------------------------------
# The code's client weighting (rescaled_clients): same global f, different local functions
# ------------------------------------------------------------------------------------------------------

def test_rescaled_clients_keep_the_global_objective_and_change_the_local_ones():
    inst = RawLogistic()
    base, scaled = inst.problem, rescaled_clients(inst.problem)
    X = np.random.default_rng(2).standard_normal((base.n_clients, base.dim))
    x = X[0]
    # global f and its gradient: the same function (independently: the weighted sum of the replay's gradients)
    expected = sum(inst.w[i] * inst.grad(i, x) for i in range(len(inst.w)))
    assert _close(scaled.grad(x), expected) and _close(scaled.weights @ scaled.grads(scaled.broadcast(x)), expected)
    assert scaled.certificate.x_star is base.certificate.x_star and scaled.certificate.mu_f == base.certificate.mu_f
    # local: g_i = n w_i f_i, so DANE's exact local solve differs from the paper's reading with unequal sizes
    n = base.n_clients
    for i in range(n):
        assert _close(scaled.grads(X)[i], n * inst.w[i] * inst.grad(i, X[i]))
    lin = np.zeros((n, base.dim))
    Z = scaled.solve_local(lin, X, 0.5)
    residual = scaled.grads(Z) + 0.5 * (Z - X)  # KKT of argmin g_i + lam/2 ||x - c_i||^2
    assert np.abs(residual).max() <= 1e-10
    assert np.abs(Z - base.solve_local(lin, X, 0.5)).max() > 1e-3


def test_rescaled_clients_equal_sizes_are_the_paper_reading():
    p = quadratic(4, 3, mu=0.2, L=3.0, delta_A=0.4, zeta2=1.0, seed=5)  # uniform weights: s_i = 1
    q = rescaled_clients(p)
    assert np.array_equal(q.A, p.A) and np.array_equal(q.b, p.b)
    r1 = run(DANEPlus(lam=1.0), p, 5, seed=0)
    r2 = run(DANEPlus(lam=1.0), q, 5, seed=0)
    assert r1.same_numbers(r2)  # the same arrays through the same code on one machine: bitwise


def test_rescaled_clients_bad_input():
    with pytest.raises(TypeError, match="problem"):
        rescaled_clients("not a problem")
    scaled = rescaled_clients(RawLogistic().problem)
    X = np.zeros((scaled.n_clients, scaled.dim))
    with pytest.raises(ValueError, match="l1"):
        scaled.solve_local(X, X, 1.0, l1=0.1)
