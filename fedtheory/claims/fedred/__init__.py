"""Claims of Jiang, Rodomanov & Stich (ICML 2024), "Federated Optimization with Doubly Regularized Drift Correction"
(DANE, DANE+, FedRed, FedRed-GD/SGD): one module per family of its numbered statements (docs/design.md, "Claims").

Ids: ``fedred.<topic>`` for the paper's statements (constants as fedtheory reconstructs them from the paper,
docs/fedred.md), ``fedred.appendix.<topic>`` for the appendix's lemmas and proof chains, and ``....derived``
(``derived=True``) for fedtheory's derived inequalities, which are not the paper's claims.
"""
import sys as _sys

from ...autoload import load_submodules

load_submodules(_sys.modules[__name__], globals())
