"""Elastic Federated Learning, EFL (Ma, Lu, Lu, Li, Yi & Cui, "Towards Heterogeneous Clients with Elastic
Federated Learning", Alg. 1 with the ST compressor of Alg. 2), in fedtheory's implementable reading (docs/efl.md,
"Deviations from the paper", gives each deviation from the print and its reason).

Round tau (1-based). The server draws s_tau^k in {0, ..., E} for every client (0 = inactive, unselected,
departed or not yet arrived) and broadcasts (b_{tau-1}, U_{tau-1}, V_{tau-1}). Every client with s_tau^k > 0:

    sync:    w^k <- w^k + b_{tau-1}   (or w^k <- w^G if it missed the previous round's broadcast)
    local:   w <- w - eta_tau [ g_k(w; xi) + lam (U_{tau-1} o w - V_{tau-1}) ],  s_tau^k times        (eq. 4)
             (the gradient of f_k + lam/2 sum_i (w - w^i)^T diag(I_i) (w - w^i), eqs. 2-3)
    update:  Delta^k = R^k + (w - w^k);  c^k = ST(Delta^k);  R^k <- Delta^k - c^k                    (eq. 5)
    fisher:  u^k = diag(I_k(w)),  v^k = u^k o w

and the server aggregates with the time-varying coefficients p_tau^k (eq. 6):

    Delta^G = R^G + sum_k p_tau^k c^k;   b_tau = ST(Delta^G);   R^G <- Delta^G - b_tau;   w^G <- w^G + b_tau
    U_tau = sum_k u^k,  V_tau = sum_k v^k   (over this round's reporters, or over a per-client cache).

Aggregation coefficients (``weighting``): ``"efl"`` p_tau^k = E p^k / s_tau^k (§4.2, the paper's scheme);
``"fedavg"`` p_tau^k = p^k (the FedAvg-weighting baseline under the same scenarios); ``"efl_ipw"``
p_tau^k = E p^k / (s_tau^k pi^k) with pi^k the client's activity probability (an extension derived by
fedtheory, not in the paper, that removes the bias of unequal inactivity). Inactive clients get p_tau^k = 0;
the p_tau^k are not renormalised (that would undo the compensation of Ma et al., Section 4.2).

Deviations from the print, each an option (fedtheory's readings where Alg. 1 is inconsistent or silent):
  * ``variant="consistent"`` (default) adds ST(Delta^G) to the server model and aggregates the compressed
    c^k. ``variant="printed"`` is Alg. 1 literally: the server aggregates the uncompressed Delta^k and adds
    the uncompressed Delta^G while clients receive ST(Delta^G); server and clients then drift apart
    (claim ``efl.sync.printed``).
  * ``scaling="server"`` applies p_tau^k after the client's error feedback (the print);
    ``scaling="client"`` pre-scales the local displacement, Delta^k = R^k + p_tau^k (w - w^k), and the
    server sums (derived by fedtheory, the paper is silent: with random s_tau^k only the latter keeps the
    fixed point; tests/test_efl.py).
  * ``q=None`` means no compression (ST = id, R = 0): ST with q = 1 is a scaled sign, not the identity.

Learning rate: eta_tau = step (``decay=None``) or step / (c + decay), where c counts rounds since the last
restart (1 at the first round). Theorem 1's schedule is step = 16 / (mu E[sum_k p_tau^k s_tau^k]) and
decay = gamma / E (:func:`fedtheory.theory.efl.theorem1_schedule`). ``restarts`` and ``restart_on_arrival``
restart the clock ("a fresh start after the shift", Ma et al., Section 4.4).

Randomness: :meth:`draw` samples s_tau^k and a noise seed at the top of the round; :meth:`round_given` is
deterministic given the draw, so exact expectations enumerate :meth:`outcomes`.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Iterable, Literal, Mapping

import numpy as np

from ..compressors.st import SparseTernary
from ..problems.base import Problem
from ..validation import check_bool, check_int, check_nonnegative, check_positive, check_real
from .base import FLOAT_BITS, RoundLog, State, register_algorithm
from .client_table import ClientTable, as_table

__all__ = ["EFL", "EFLDraw", "EFLState", "fisher_diagonal", "elastic_objective", "elastic_grad"]

Weighting = Literal["efl", "fedavg", "efl_ipw"]


# ---------------------------------------------------------------------------------------------------------
# The elastic term (eqs. 2-3)
# ---------------------------------------------------------------------------------------------------------

def elastic_objective(f_value: np.ndarray, W: np.ndarray, anchors: np.ndarray, fishers: np.ndarray,
                      lam: float) -> np.ndarray:
    """Eq. (2): f_k(w) + lam/2 sum_i (w - w^i)^T diag(I_i) (w - w^i) for stacked points W (m, d).

    ``anchors`` (N, d) are the clients' previous-round models w^i, ``fishers`` (N, d) their Fisher diagonals.
    """
    diff = W[:, None, :] - anchors[None, :, :]
    return np.asarray(f_value) + 0.5 * lam * np.einsum("mnd,nd,mnd->m", diff, fishers, diff)


def elastic_grad(f_grad: np.ndarray, W: np.ndarray, U: np.ndarray, V: np.ndarray, lam: float) -> np.ndarray:
    """Gradient of eq. (3): grad f_k(w) + lam (U o w - V), with U = sum_i u^i, V = sum_i v^i the broadcast sums."""
    return f_grad + lam * (U * W - V)


def fisher_diagonal(problem: Problem, X: np.ndarray, clients: np.ndarray) -> np.ndarray:
    """diag(I_k(X[k])) for the listed clients (Ma et al., eqs. 2-3 use I_k but give no recipe; this one is
    fedtheory's).

    Order of preference: the problem's own ``fisher_diag(X, clients)``; the Hessian diagonal of a quadratic
    (a unit-variance Gaussian likelihood has I_k = A_k); the diagonal of ``problem.hessians(X, clients)``
    (for logistic regression the NLL Hessian is the true Fisher, plus the l2 term); otherwise
    the Hessian diagonal by central differences of the gradient oracle (one loop over coordinates, vectorised
    over clients), which is the true Fisher for the canonical exponential-family losses used here.
    """
    if hasattr(problem, "fisher_diag"):
        return np.asarray(problem.fisher_diag(X, clients), dtype=np.float64)
    A = getattr(problem, "A", None)
    if isinstance(A, np.ndarray) and A.ndim in (2, 3) and A.shape[0] == problem.n_clients:
        rows = A[clients]
        return rows.copy() if rows.ndim == 2 else np.diagonal(rows, axis1=1, axis2=2).copy()
    if callable(getattr(problem, "hessians", None)):
        # Smooth problems (logistic): the Hessian of the negative log-likelihood is the true Fisher.
        return np.diagonal(problem.hessians(X, clients), axis1=1, axis2=2).copy()
    out = np.empty_like(X)
    for j in range(X.shape[1]):
        h = 1e-5 * (1.0 + np.abs(X[:, j]))
        Xp, Xm = X.copy(), X.copy()
        Xp[:, j] += h
        Xm[:, j] -= h
        out[:, j] = (problem.grads(Xp, clients)[:, j] - problem.grads(Xm, clients)[:, j]) / (2 * h)
    return out


# ---------------------------------------------------------------------------------------------------------
# State and draws
# ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class EFLState(State):
    """Server model ``x`` = w^G plus every piece of state Alg. 1 keeps.

    ``client_x`` (n, d): each client's synchronised round-start model w^k (as of its last round);
    ``client_res`` (n, d) R^k and ``server_res`` (d,) R^G: error-feedback residuals;
    ``broadcast`` (d,): b_tau = ST(Delta^G) of the last round; ``U``, ``V`` (d,): the elastic sums;
    ``u_cache``, ``v_cache`` (n, d): each client's last reported u^k, v^k (for ``uv_sum="cached"``);
    ``last_seen`` (n,): the last round a client took part in (0 = initialisation);
    ``client_end`` (n, d): each client's local end model w^k_{tau E + s} of its last round (diagnostics);
    ``tau``: rounds completed; ``clock``: rounds since the last learning-rate restart.

    The (n, d) fields are :class:`~fedtheory.algorithms.client_table.ClientTable` s in the states this class returns
    (immutable arrays whose round updates cost O(active clients x d)); ndarrays given by a caller are accepted.
    """

    client_x: np.ndarray
    client_res: np.ndarray
    server_res: np.ndarray
    broadcast: np.ndarray
    U: np.ndarray
    V: np.ndarray
    u_cache: np.ndarray
    v_cache: np.ndarray
    last_seen: np.ndarray
    client_end: np.ndarray | None = None
    tau: int = 0
    clock: int = 0


@dataclass(frozen=True)
class EFLDraw:
    """Everything random in one round: local step counts s_tau^k (0 = inactive) and the seed of the
    stochastic-gradient noise."""

    steps: np.ndarray
    noise_seed: int = 0


def _per_client(name: str, value: Any, n: int) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        return np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have one entry per client ({n}), got shape {arr.shape}")
    return arr


def _events(name: str, value: Any) -> tuple[tuple[int, int], ...]:
    """Normalise a {client: round} mapping or (client, round) pairs into a sorted tuple of pairs."""
    items = value.items() if isinstance(value, Mapping) else value
    out = []
    for pair in items:
        try:
            client, rnd = pair
        except (TypeError, ValueError):
            raise ValueError(f"{name} must map client -> round (pairs of integers), got {pair!r}") from None
        out.append((check_int(f"{name} client", client, low=0), check_int(f"{name} round", rnd, low=0)))
    clients = [c for c, _ in out]
    if len(set(clients)) != len(clients):
        raise ValueError(f"{name} lists a client twice: {sorted(clients)}")
    return tuple(sorted(out))


# ---------------------------------------------------------------------------------------------------------
# The algorithm
# ---------------------------------------------------------------------------------------------------------

@register_algorithm
@dataclass(frozen=True)
class EFL:
    """EFL (Ma et al., Alg. 1 + Alg. 2, in fedtheory's consistent reading). See the module docstring for the
    update equations.

    Parameters
    ----------
    E: maximum local steps per round (>= 1).
    step, decay: learning rate eta_tau = step, or step / (c + decay) with c the rounds since the last restart.
    lam: elastic-term strength lambda >= 0.
    q: ST sparsity in (0, 1] (both directions), or None for no compression.
    s_min, s_max: local steps of an active client are uniform on {s_min^k, ..., s_max^k}, scalars or per
        client, within [1, E] (default: always E). Equal bounds give deterministic heterogeneous compute.
    participation: probability pi^k in (0, 1] that client k is active in a round (Bernoulli, per client).
    departures: {client: tau0}: the client leaves after round tau0 (s = 0 for tau > tau0).
    arrivals: {client: tau0}: the client joins after round tau0 (s = 0 for tau <= tau0).
    restarts: rounds at which the learning-rate clock restarts; ``restart_on_arrival`` adds the arrivals.
    weighting: "efl" (p_tau^k = E p^k / s_tau^k), "fedavg" (p^k) or "efl_ipw" (E p^k / (s pi^k), fedtheory's).
    scaling: "server" or "client" placement of p_tau^k relative to error feedback.
    variant: "consistent" (fedtheory's reading, docs/efl.md) or "printed" (Alg. 1 literally).
    uv_sum: "reporters" (U, V over the last round's reporters) or "cached" (latest u^k, v^k of every client).
    """

    E: int = 5
    step: float = 0.05
    decay: float | None = None
    lam: float = 0.0
    q: float | None = None
    s_min: Any = None
    s_max: Any = None
    participation: Any = 1.0
    departures: Any = ()
    arrivals: Any = ()
    restarts: tuple[int, ...] = ()
    restart_on_arrival: bool = False
    weighting: Weighting = "efl"
    scaling: Literal["server", "client"] = "server"
    variant: Literal["consistent", "printed"] = "consistent"
    uv_sum: Literal["reporters", "cached"] = "reporters"
    name: ClassVar[str] = "efl"

    def __post_init__(self) -> None:
        check_bool("restart_on_arrival", self.restart_on_arrival)
        E = check_int("E", self.E, low=1)
        object.__setattr__(self, "E", E)
        object.__setattr__(self, "step", check_positive("step", self.step))
        if self.decay is not None:
            object.__setattr__(self, "decay", check_real("decay", self.decay, low=0.0, low_open=True))
        object.__setattr__(self, "lam", check_nonnegative("lam", self.lam))
        if self.q is not None:
            object.__setattr__(self, "q", SparseTernary(self.q).q)  # validates q in (0, 1]
        for name in ("s_min", "s_max"):
            value = getattr(self, name)
            if value is None:
                continue
            arr = np.atleast_1d(np.asarray(value))
            if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.all(arr == np.round(arr))):
                raise TypeError(f"{name} must be integer local-step counts, got {value!r}")
            if np.any(arr < 1) or np.any(arr > E):
                raise ValueError(f"{name} (local steps s_tau^k of an active client) must be in [1, E={E}], "
                                 f"got {value!r}; use participation/departures for s = 0")
            object.__setattr__(self, name, int(arr[0]) if np.ndim(value) == 0 else tuple(int(a) for a in arr))
        lo = np.atleast_1d(self.s_min if self.s_min is not None else E)
        hi = np.atleast_1d(self.s_max if self.s_max is not None else E)
        if lo.shape != hi.shape and lo.size > 1 and hi.size > 1:
            raise ValueError("s_min and s_max must have the same length")
        if np.any(np.broadcast_arrays(lo, hi)[0] > np.broadcast_arrays(lo, hi)[1]):
            raise ValueError(f"s_min must be <= s_max, got s_min={self.s_min!r}, s_max={self.s_max!r}")
        try:
            part = np.atleast_1d(np.asarray(self.participation, dtype=np.float64))
        except (TypeError, ValueError):
            raise TypeError(f"participation must be a probability in (0, 1] or one per client, got "
                            f"{self.participation!r}") from None
        if not np.all(np.isfinite(part)) or np.any(part <= 0) or np.any(part > 1):
            raise ValueError(f"participation must be in (0, 1] for every client, got {self.participation!r}")
        object.__setattr__(self, "participation",
                           float(part[0]) if np.ndim(self.participation) == 0 else tuple(float(p) for p in part))
        object.__setattr__(self, "departures", _events("departures", self.departures))
        object.__setattr__(self, "arrivals", _events("arrivals", self.arrivals))
        object.__setattr__(self, "restarts", tuple(sorted(check_int("restarts", r, low=1) for r in self.restarts)))
        for name, allowed in (("weighting", ("efl", "fedavg", "efl_ipw")), ("scaling", ("server", "client")),
                              ("variant", ("consistent", "printed")), ("uv_sum", ("reporters", "cached"))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")

    @classmethod
    def example(cls) -> "EFL":
        return cls(E=3, step=0.02, lam=0.05, q=0.5, s_min=1, s_max=3, participation=0.8)

    @classmethod
    def invalid_examples(cls) -> list[tuple[dict, str]]:
        """(kwargs, parameter name) pairs that must raise naming the parameter (conformance suite)."""
        return [({"q": 0.0}, "q"), ({"q": 1.5}, "q"), ({"E": 0}, "E"), ({"lam": -1.0}, "lam"),
                ({"s_min": 0}, "s_min"), ({"E": 2, "s_max": 3}, "s_max"), ({"participation": 0.0}, "participation"),
                ({"step": -1.0}, "step"), ({"departures": {-1: 2}}, "departures"), ({"weighting": "x"}, "weighting")]

    # ----- scenario helpers -----
    def _check_clients(self, n: int) -> None:
        for name in ("departures", "arrivals"):
            for client, _ in getattr(self, name):
                if client >= n:
                    raise ValueError(f"{name} names client {client}, unknown: clients are 0..{n - 1}")

    def step_bounds(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Per-client (s_min^k, s_max^k) of an active client."""
        lo = _per_client("s_min", self.s_min if self.s_min is not None else self.E, n).astype(np.int64)
        hi = _per_client("s_max", self.s_max if self.s_max is not None else self.E, n).astype(np.int64)
        return lo, hi

    def present(self, n: int, tau: int) -> np.ndarray:
        """Clients that belong to the federation in round tau (departure/arrival schedule)."""
        self._check_clients(n)
        mask = np.ones(n, dtype=bool)
        for client, tau0 in self.departures:
            if tau > tau0:
                mask[client] = False
        for client, tau0 in self.arrivals:
            if tau <= tau0:
                mask[client] = False
        return mask

    def learning_rate(self, clock: int) -> float:
        """eta at ``clock`` rounds since the last restart (1-based)."""
        return self.step if self.decay is None else self.step / (clock + self.decay)

    def coefficients(self, steps: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Aggregation coefficients p_tau^k (0 for inactive clients); vectorised over leading axes of steps."""
        steps = np.asarray(steps)
        active = steps > 0
        safe = np.where(active, steps, 1)
        if self.weighting == "fedavg":
            coef = np.broadcast_to(p, steps.shape).astype(np.float64)
        else:
            coef = self.E * p / safe
            if self.weighting == "efl_ipw":
                coef = coef / _per_client("participation", self.participation, p.shape[0])
        return np.where(active, coef, 0.0)

    # ----- contract -----
    def init(self, problem: Problem, x0: np.ndarray) -> EFLState:
        n, d = problem.n_clients, problem.dim
        self._check_clients(n)
        self.step_bounds(n)
        _per_client("participation", self.participation, n)
        x0 = np.array(x0, dtype=np.float64)
        # Per-client (n, d) arrays live in persistent client tables: a round updates the active clients' rows only.
        return EFLState(x=x0, client_x=ClientTable.from_array(np.tile(x0, (n, 1)), copy=False),
                        client_res=ClientTable.zeros(n, d), server_res=np.zeros(d),
                        broadcast=np.zeros(d), U=np.zeros(d), V=np.zeros(d), u_cache=ClientTable.zeros(n, d),
                        v_cache=ClientTable.zeros(n, d), last_seen=np.zeros(n, dtype=np.int64),
                        client_end=ClientTable.from_array(np.tile(x0, (n, 1)), copy=False), tau=0, clock=0)

    def draw(self, problem: Problem, state: EFLState, rng: np.random.Generator) -> EFLDraw:
        """Sample s_tau^k for every client (0 = inactive/absent) and the gradient-noise seed."""
        n = problem.n_clients
        lo, hi = self.step_bounds(n)
        steps = rng.integers(lo, hi + 1)
        active = rng.random(n) < _per_client("participation", self.participation, n)
        steps = np.where(active & self.present(n, state.tau + 1), steps, 0)
        return EFLDraw(steps=steps.astype(np.int64), noise_seed=int(rng.integers(2**63 - 1)))

    def outcomes(self, problem: Problem, state: EFLState) -> Iterable[tuple[EFLDraw, float]]:
        """Every possible s-vector of the next round with its probability (noise seed 0): exact expectations
        by enumeration. Exponential in n; meant for small instances."""
        n = problem.n_clients
        lo, hi = self.step_bounds(n)
        part = _per_client("participation", self.participation, n)
        present = self.present(n, state.tau + 1)
        per_client = []
        for k in range(n):  # enumeration of a tiny outcome space, not a hot path
            if not present[k]:
                per_client.append([(0, 1.0)])
                continue
            width = hi[k] - lo[k] + 1
            opts = [(int(s), part[k] / width) for s in range(lo[k], hi[k] + 1)]
            if part[k] < 1:
                opts.append((0, 1.0 - part[k]))
            per_client.append(opts)
        for combo in itertools.product(*per_client):
            yield EFLDraw(steps=np.array([s for s, _ in combo], dtype=np.int64)), float(np.prod([w for _, w in combo]))

    def round(self, problem: Problem, state: EFLState, rng: np.random.Generator) -> tuple[EFLState, RoundLog]:
        return self.round_given(problem, state, self.draw(problem, state, rng))

    def round_given(self, problem: Problem, state: EFLState, draw: EFLDraw) -> tuple[EFLState, RoundLog]:
        """One deterministic round of EFL given the draw (module docstring)."""
        n, d = problem.n_clients, problem.dim
        steps = np.asarray(draw.steps)
        if steps.shape != (n,) or steps.dtype.kind not in "iu":
            raise ValueError(f"s (local steps s_tau^k) must be an integer array of shape ({n},), got {steps!r}")
        if np.any(steps < 0) or np.any(steps > self.E):
            raise ValueError(f"s (local steps s_tau^k) must be in [0, E={self.E}], got {steps.tolist()}")
        tau = state.tau + 1
        restart = tau in self.restarts or (self.restart_on_arrival and any(t0 + 1 == tau for _, t0 in self.arrivals))
        clock = 1 if restart else state.clock + 1
        eta = self.learning_rate(clock)
        act = np.flatnonzero(steps > 0)
        s_act = steps[act]
        p = problem.weights
        coef = self.coefficients(steps, p)[act]
        compressor = SparseTernary(self.q) if self.q is not None else None

        # Sync: a client that took part in the previous round applies that round's broadcast; one that missed
        # it downloads the server model (the paper leaves catch-up unspecified; its Section 5.4 only notes that
        # low participation puts client residuals out of sync).
        start = np.where((state.last_seen[act] == tau - 1)[:, None],
                         as_table(state.client_x).rows(act) + state.broadcast, state.x)

        # Local SGD on the elastic objective; vectorised over clients, looping over the E time steps.
        W = start.copy()
        noise_rng = np.random.default_rng(draw.noise_seed)
        for j in range(int(s_act.max()) if act.size else 0):
            m = s_act > j
            G = problem.stochastic_grads(W[m], noise_rng, clients=act[m])
            if self.lam > 0:
                G = elastic_grad(G, W[m], state.U, state.V, self.lam)
            W[m] = W[m] - eta * G
        disp = W - start

        # Client error feedback (eq. 5); p_tau^k before (client) or after (server) compression.
        raw = disp * coef[:, None] if self.scaling == "client" else disp
        delta_k = as_table(state.client_res).rows(act) + raw
        if compressor is None:
            c_k, up_bits = delta_k, np.full(act.size, FLOAT_BITS * d, dtype=np.float64)
        else:
            c_k, up_bits = compressor.compress(delta_k) if act.size else (delta_k, np.zeros(0))
        client_res = as_table(state.client_res).draft()  # O(|act| d): the other clients' rows are not touched
        client_res[act] = delta_k - c_k
        client_res = client_res.commit()

        # Server aggregation (eq. 6) and server error feedback.
        sent = delta_k if self.variant == "printed" else c_k
        weights = np.ones(act.size) if self.scaling == "client" else coef
        delta_g = state.server_res + weights @ sent
        if compressor is None:
            b, down_bits = delta_g, float(FLOAT_BITS * d)
        else:
            b_rows, bits = compressor.compress(delta_g)
            b, down_bits = b_rows[0], float(bits[0])
        x = state.x + (delta_g if self.variant == "printed" else b)
        server_res = delta_g - b

        # Fisher diagonals at the local end models; only needed (and only sent) when lam > 0.
        U, V, u_cache, v_cache = state.U, state.V, state.u_cache, state.v_cache
        uv_bits = 0.0
        if self.lam > 0 and act.size:
            u = fisher_diagonal(problem, W, act)
            v = u * W
            u_cache, v_cache = as_table(u_cache).with_rows(act, u), as_table(v_cache).with_rows(act, v)
            if self.uv_sum == "cached":  # a sum over all n cached rows: O(n d) by the option's definition
                U, V = u_cache.peek().sum(axis=0), v_cache.peek().sum(axis=0)
            else:
                U, V = u.sum(axis=0), v.sum(axis=0)
            uv_bits = 2.0 * FLOAT_BITS * d
        elif self.lam > 0 and self.uv_sum == "reporters":
            U, V = np.zeros(d), np.zeros(d)

        client_x = as_table(state.client_x).with_rows(act, start)
        last_seen = state.last_seen.copy()  # (n,) integers: O(n), not O(n d)
        last_seen[act] = tau
        client_end = as_table(state.client_end).with_rows(act, W)
        new_state = replace(state, x=x, client_x=client_x, client_res=client_res, server_res=server_res,
                            broadcast=b, U=U, V=V, u_cache=u_cache, v_cache=v_cache, last_seen=last_seen,
                            client_end=client_end, tau=tau, clock=clock)
        down_nnz = int(np.count_nonzero(b))
        log = RoundLog(
            uplink_bits=float(up_bits.sum() + uv_bits * act.size),
            downlink_bits=float((down_bits + uv_bits) * act.size),
            uplink_nnz=int(np.count_nonzero(c_k)) + (2 * d * act.size if uv_bits else 0),
            downlink_nnz=(down_nnz + (2 * d if uv_bits else 0)) * int(act.size),
            vectors_up=float(act.size * (3 if uv_bits else 1)), vectors_down=float(act.size * (3 if uv_bits else 1)),
            local_grad_evals=int(s_act.sum()), participants=int(act.size),
            extra={"eta": eta, "coef_sum": float(coef.sum()), "ps_sum": float(coef @ s_act)})
        return new_state, log

    # ----- diagnostics -----
    @staticmethod
    def sync_error(state: EFLState) -> float:
        """max_k ||(w^k + b) - w^G|| over clients that took part in the last round: the model each of them will
        start the next round from, against the server's (0 up to round-off under the consistent reading)."""
        fresh = state.last_seen == state.tau
        if not np.any(fresh):
            return 0.0
        diff = state.client_x[fresh] + state.broadcast - state.x
        return float(np.sqrt(np.max(np.sum(diff * diff, axis=1))))
