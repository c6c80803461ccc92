"""Client participation: who takes part in a round, as an explicit draw that tests can enumerate.

Three schemes, each a frozen dataclass with

* ``draw(n_clients, rng) -> np.ndarray``: the sorted indices of the participating clients (int64);
* ``outcomes(n_clients) -> Iterator[(indices, probability)]``: every possible outcome with its exact
  probability (probabilities sum to one), so a test computes an exact expectation instead of Monte Carlo;
* ``inclusion_probabilities(n_clients) -> np.ndarray``: Pr[i participates] for every client;
* ``validate(n_clients)``: raises ValueError when the scheme cannot run with ``n_clients`` clients.

Schemes
-------
* :class:`Full` -- every client, every round.
* :class:`UniformSubset` -- ``size`` clients drawn uniformly without replacement (each of the C(n, S)
  subsets with probability 1 / C(n, S); Pr[i in S] = S/n). This is the sampling SCAFFOLD's (Karimireddy et al.
  2020, Alg. 1), FedDyn's (Acar et al. 2021, Alg. 1) and FedElasticNet's Theorem 3.1 (Kim et al., App. B.2)
  analyse.
* :class:`Bernoulli` -- client i participates independently with probability ``p_i`` (a scalar or one value per
  client); the round may have no participant at all (probability prod_i (1 - p_i)), which algorithms treat
  as a round where nothing happens.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Iterator, Union

import numpy as np

from .validation import check_int, check_probability

__all__ = ["Participation", "Full", "UniformSubset", "Bernoulli", "as_participation", "mask_of",
           "MAX_ENUMERATED_OUTCOMES", "SPARSE_DRAW_MIN_CLIENTS"]

#: From this many clients on, a scalar-p Bernoulli draw samples the participant count and then the participants
#: (O(S) instead of one uniform per client: at 10^6 clients the per-client coins cost more than a round).
SPARSE_DRAW_MIN_CLIENTS = 1 << 16
#: Enumeration refuses to list more outcomes than this (2^n for Bernoulli, C(n, S) for subsets).
MAX_ENUMERATED_OUTCOMES = 1 << 16


def _check_enumerable(count: int, what: str) -> None:
    if count > MAX_ENUMERATED_OUTCOMES:
        raise ValueError(f"{what} has {count} outcomes, more than MAX_ENUMERATED_OUTCOMES="
                         f"{MAX_ENUMERATED_OUTCOMES}; enumerate on a smaller problem")


@dataclass(frozen=True)
class Full:
    """Every client participates in every round."""

    def validate(self, n_clients: int) -> None:
        check_int("n_clients", n_clients, low=1)

    def draw(self, n_clients: int, rng: np.random.Generator) -> np.ndarray:
        # No randomness is consumed, so full participation leaves the generator's stream untouched.
        return np.arange(n_clients, dtype=np.int64)

    def outcomes(self, n_clients: int) -> Iterator[tuple[np.ndarray, float]]:
        yield np.arange(n_clients, dtype=np.int64), 1.0

    def inclusion_probabilities(self, n_clients: int) -> np.ndarray:
        return np.ones(n_clients)

    def expected_participants(self, n_clients: int) -> float:
        return float(n_clients)


@dataclass(frozen=True)
class UniformSubset:
    """``size`` clients drawn uniformly at random without replacement, independently every round."""

    size: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", check_int("participation.size", self.size, low=1))

    def validate(self, n_clients: int) -> None:
        n_clients = check_int("n_clients", n_clients, low=1)
        if self.size > n_clients:
            raise ValueError(f"participation.size must be in [1, n_clients] = [1, {n_clients}], got {self.size}")

    def draw(self, n_clients: int, rng: np.random.Generator) -> np.ndarray:
        self.validate(n_clients)
        return np.sort(rng.choice(n_clients, size=self.size, replace=False)).astype(np.int64)

    def outcomes(self, n_clients: int) -> Iterator[tuple[np.ndarray, float]]:
        self.validate(n_clients)
        count = math.comb(n_clients, self.size)
        _check_enumerable(count, f"UniformSubset(size={self.size}) of {n_clients}")
        prob = 1.0 / count
        for subset in itertools.combinations(range(n_clients), self.size):
            yield np.asarray(subset, dtype=np.int64), prob

    def inclusion_probabilities(self, n_clients: int) -> np.ndarray:
        self.validate(n_clients)
        return np.full(n_clients, self.size / n_clients)

    def expected_participants(self, n_clients: int) -> float:
        return float(self.size)


@dataclass(frozen=True)
class Bernoulli:
    """Client i participates independently with probability ``p[i]`` (``p`` a scalar or per-client tuple)."""

    p: Union[float, tuple[float, ...]]

    def __post_init__(self) -> None:
        if np.ndim(self.p) == 0:
            object.__setattr__(self, "p", check_probability("participation.p", self.p))
        else:
            values = tuple(check_probability(f"participation.p[{i}]", v) for i, v in enumerate(self.p))
            if not values:
                raise ValueError("participation.p must be a probability or a non-empty sequence of them")
            object.__setattr__(self, "p", values)

    def _probs(self, n_clients: int) -> np.ndarray:
        if isinstance(self.p, tuple):
            if len(self.p) != n_clients:
                raise ValueError(f"participation.p has {len(self.p)} entries but the problem has {n_clients} "
                                 "clients")
            return np.asarray(self.p, dtype=np.float64)
        return np.full(n_clients, float(self.p))

    def validate(self, n_clients: int) -> None:
        self._probs(check_int("n_clients", n_clients, low=1))

    def draw(self, n_clients: int, rng: np.random.Generator) -> np.ndarray:
        """Sorted participants. With a scalar p and at least :data:`SPARSE_DRAW_MIN_CLIENTS` clients the draw
        costs O(expected participants), not O(n): the number of participants is Binomial(n, p) and, given it,
        the Bernoulli set is a uniform subset of that size, so drawing k ~ Binomial(n, p) and then k clients
        without replacement has exactly the same distribution (a different random stream: below the threshold
        the one-coin-per-client stream of earlier versions is kept bitwise)."""
        if not isinstance(self.p, tuple) and n_clients >= SPARSE_DRAW_MIN_CLIENTS:
            check_int("n_clients", n_clients, low=1)
            k = int(rng.binomial(n_clients, self.p))
            return np.sort(rng.choice(n_clients, size=k, replace=False)).astype(np.int64)
        probs = self._probs(n_clients)
        return np.flatnonzero(rng.random(n_clients) < probs).astype(np.int64)

    def outcomes(self, n_clients: int) -> Iterator[tuple[np.ndarray, float]]:
        probs = self._probs(n_clients)
        _check_enumerable(2 ** n_clients, f"Bernoulli participation of {n_clients} clients")
        for mask in itertools.product((False, True), repeat=n_clients):
            m = np.asarray(mask, dtype=bool)
            prob = float(np.prod(np.where(m, probs, 1.0 - probs)))
            if prob > 0.0:
                yield np.flatnonzero(m).astype(np.int64), prob

    def inclusion_probabilities(self, n_clients: int) -> np.ndarray:
        return self._probs(n_clients)

    def expected_participants(self, n_clients: int) -> float:
        return float(self._probs(n_clients).sum())


Participation = Union[Full, UniformSubset, Bernoulli]


def as_participation(value: Any) -> Participation:
    """Normalise a participation argument: a scheme instance, ``None`` (full) or ``"full"``."""
    if value is None or value == "full":
        return Full()
    if isinstance(value, (Full, UniformSubset, Bernoulli)):
        return value
    raise TypeError(f"participation must be Full(), UniformSubset(size) or Bernoulli(p), got {value!r}")


def mask_of(indices: np.ndarray, n_clients: int) -> np.ndarray:
    """Boolean participation mask of length ``n_clients`` from sorted indices."""
    m = np.zeros(n_clients, dtype=bool)
    m[indices] = True
    return m
