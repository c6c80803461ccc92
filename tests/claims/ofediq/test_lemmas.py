"""OFedIQ, Lemmas 2-4 (fedtheory/claims/ofediq/lemmas.py) on drawn instances; a search over Lemma 3's stated
range finds a violation."""
from __future__ import annotations

from hypothesis import find, given, settings
from hypothesis import strategies as st

from fedtheory.claims import REGISTRY


@given(K=st.integers(1, 12), D=st.integers(1, 5), loss=st.sampled_from(["ridge", "logistic"]),
       seed=st.integers(0, 10**6))
def test_lemma2_drawn(K, D, loss, seed):
    assert REGISTRY["ofediq.lemma2"].check(dict(K=K, D=D, loss=loss, seed=seed)).holds


_drift_inst = st.builds(
    lambda L, D, frac, xs, ys, seed: dict(L=L, D=D, frac=frac, seed=seed, x_scale=xs, y_scale=ys),
    st.integers(2, 10), st.integers(1, 4), st.floats(0.01, 0.999), st.floats(0.01, 10), st.floats(0.1, 100),
    st.integers(0, 10**6))


def _scaled_drift(inst):
    from fedtheory.problems.online import online_ridge

    base = online_ridge(1, inst["L"], inst["D"], heterogeneity=1.0, lam=0.0, seed=inst["seed"])
    return dict(L=inst["L"], frac=inst["frac"], x=(base.features[:, 0] * inst["x_scale"]).tolist(),
                y=(base.labels[:, 0] * inst["y_scale"]).tolist())


@given(_drift_inst)
def test_lemma3_proof_version_holds(inst):
    assert REGISTRY["ofediq.lemma3.stated.corrected"].check(_scaled_drift(inst)).holds


def test_lemma3_as_stated_fails_somewhere_in_its_range():
    """hypothesis search over the stated range (any beta > 0, eta < 1/(2 beta), L >= 2) finds a violation."""
    bad = find(_drift_inst, lambda inst: not REGISTRY["ofediq.lemma3.stated"].check(_scaled_drift(inst)).holds,
               settings=settings(max_examples=500, derandomize=True, database=None))
    assert not REGISTRY["ofediq.lemma3.stated"].check(_scaled_drift(bad)).holds
    # and the recorded minimal counterexample is violated too
    assert not REGISTRY["ofediq.lemma3.stated"].check(next(iter(REGISTRY["ofediq.lemma3.stated"].instances(False)))).holds


@given(L=st.integers(2, 12), D=st.integers(1, 4), seed=st.integers(0, 10**6))
def test_lemma4_drawn(L, D, seed):
    assert REGISTRY["ofediq.lemma4"].check(dict(L=L, D=D, seed=seed)).holds


@given(L=st.integers(2, 10), D=st.integers(1, 4), frac=st.floats(0.01, 0.99), fs=st.floats(1e-2, 10.0),
       ls=st.floats(0.1, 100.0), seed=st.integers(0, 10**6))
def test_lemma3_proof_bound_is_never_a_sixth_attained(L, D, frac, fs, ls, seed):
    # the non_discriminating reason of ofediq.lemma3.stated.corrected: drift <= eta^2 L(L-1)/2 sum ||grad||^2
    # (Cauchy-Schwarz), a sixth of the proof's 3 eta^2 L(L-1) sum ||grad||^2, on any stream of the class
    c = REGISTRY["ofediq.lemma3.stated.corrected"]
    ev = c.check(c.space.build(dict(L=L, D=D, feature_scale=fs, label_scale=ls, frac=frac, seed=seed)))
    assert ev.holds and ev.tightness <= 1 / 6 * (1 + 1e-12)
