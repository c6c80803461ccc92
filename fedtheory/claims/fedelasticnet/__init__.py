"""Claims of Kim, Woo, Seo & Kim, "Communication-Efficient and Drift-Robust Federated Learning via Elastic Net" (FedElasticNet), one module per family of its numbered statements (docs/design.md, "Claims")."""
import sys as _sys

from ...autoload import load_submodules

load_submodules(_sys.modules[__name__], globals())
