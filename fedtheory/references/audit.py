"""Temporary entry point for the engineers writing references: runs benchmarks/certification.py (removed before
release; use `python benchmarks/certification.py`)."""
import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.argv[0] = "certification.py"
    runpy.run_path(str(Path(__file__).resolve().parents[2] / "benchmarks" / "certification.py"), run_name="__main__")
