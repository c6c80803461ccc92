"""OFedIQ, Table I (fedtheory/claims/ofediq/table1.py) at the paper's example."""
from __future__ import annotations

from fedtheory.claims import REGISTRY


def test_table1_alpha_matches_corollary_for_the_papers_example() -> None:
    ev = REGISTRY["ofediq.statements.table1"].check(dict(K=1000, D=34826, b=1134, s=17, L=1, p=0.5151, T=10 ** 8, w2=1.0, sigma2=1.0,
                                     beta=1.0))
    assert ev.holds and ev.details["proof_variance_inequality"]
