"""Claims of Dorfman, Vargaftik, Ben-Itzhak & Levy, "DoCoFL: Downlink Compression for Cross-Device Federated
Learning" (ICML 2023): one module per family of its numbered statements (docs/design.md, "Claims").
"""
import sys as _sys

from ...autoload import load_submodules

load_submodules(_sys.modules[__name__], globals())
