"""CI runs each OpenBLAS kernel only on a CPU that has its instructions (.ci/kernels)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
AVX2_ONLY = "fpu sse sse2 ssse3 fma sse4_1 sse4_2 avx f16c avx2 bmi2"  # an AMD EPYC (Zen 3): no AVX-512
AVX512 = AVX2_ONLY + " avx512f avx512dq avx512cd avx512bw avx512vl"


def kernels(tmp_path: Path, flags: str) -> list[str]:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nvendor_id\t: X\nflags\t\t: {flags}\n\nprocessor\t: 1\nflags\t\t: {flags}\n")
    done = subprocess.run(["bash", str(ROOT / ".ci" / "kernels")], capture_output=True, text=True, check=True,
                          env={"CPUINFO": str(cpuinfo), "PATH": "/usr/bin:/bin"})
    return done.stdout.splitlines()


def test_a_cpu_without_avx512_skips_skylakex_and_says_why(tmp_path: Path) -> None:
    lines = kernels(tmp_path, AVX2_ONLY)
    assert lines[0] == "run Haswell" and lines[2] == "run Zen"
    assert lines[1].startswith("skip SkylakeX:") and "avx512f" in lines[1]


def test_a_cpu_with_avx512_runs_every_kernel(tmp_path: Path) -> None:
    assert kernels(tmp_path, AVX512) == ["run Haswell", "run SkylakeX", "run Zen"]


@pytest.mark.parametrize("flags", ["fpu sse sse2 avx", ""])
def test_a_cpu_without_avx2_runs_no_forced_kernel(tmp_path: Path, flags: str) -> None:
    assert all(line.startswith("skip ") for line in kernels(tmp_path, flags))


def test_ci_runs_the_default_kernel_and_one_thread_unconditionally() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bash .ci/kernels" in ci
    # the default kernel's ledger is README command 1's run on the base install, which every comparison reads;
    # it is kept aside before any later step (the example package's plugin run) writes its own default ledger
    keep = ci.index("cp fedtheory-claims/claims.json .ci-reference/claims.json")
    assert ci.index("{ pip install . && fedtheory verify; }") < keep < ci.index("pip install torch==")
    assert keep < ci.index("python -m pytest -q -p no:cacheprovider examples/momentum_fedavg")
    assert 'cp .ci-reference/claims.json "$out/default/claims.json"' in ci
    assert '--compare "$out/default/claims.json"' in ci
    assert '\nstart_check "OPENBLAS_NUM_THREADS=1" OPENBLAS_NUM_THREADS=1' in ci
    # the comparisons run side by side; CI must still wait for every one and fail when any fails
    assert 'wait "${pids[$i]}"' in ci and 'exit "$failed"' in ci
