"""Communication metrics computed from transmitted vectors (non-zeros, binned Shannon entropy)."""
from .communication import (
                            PAPER_BIN,
                            EntropyMetrics,
                            binned_entropy,
                            cumulative,
                            gaussian_binned_entropy,
                            laplace_binned_entropy,
                            nnz,
                            round_entropy,
                            threshold,
)

__all__ = ["PAPER_BIN", "EntropyMetrics", "binned_entropy", "cumulative", "gaussian_binned_entropy", "laplace_binned_entropy", "nnz",
           "round_entropy", "threshold"]
