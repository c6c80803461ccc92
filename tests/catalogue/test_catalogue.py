"""The named problem catalogue: shipped arrays are intact, regeneration and constants agree within stated
tolerances on any BLAS kernel, export/import round-trips, packaging works."""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from fedtheory import catalogue
from fedtheory.algorithms import GradientDescent
from fedtheory.cli import main as cli_main
from fedtheory.run import run

REPO = Path(__file__).resolve().parents[2]
NAMES = catalogue.names()
#: Instances whose arrays are shipped (NAME.npz); the cross-device ones (``"ship_arrays": false``) are generated
#: from their seed and checked against a recorded fingerprint (tests/test_scale.py).
SHIPPED = [n for n in NAMES if catalogue.spec(n).ship_arrays]


def test_catalogue_is_not_empty_and_problems_folder_points_at_it():
    assert len(NAMES) >= 10
    # problems/ (the top-level catalogue of docs/design.md) and the package data are the same folder, not copies.
    assert (REPO / "problems").resolve() == catalogue.CATALOGUE_DIR.resolve()
    for name in NAMES:
        assert (catalogue.CATALOGUE_DIR / f"{name}.cert.json").is_file(), f"{name} has no certificate"


def test_catalogue_covers_the_benchmark_families():
    tags = {t for n in NAMES for t in catalogue.spec(n).tags}
    families = {catalogue.spec(n).family for n in NAMES}
    assert {"quad-delta", "quad-kappa", "quad-outlier", "quad-convex", "logistic", "nonconvex", "online"} <= families
    assert {"sklearn", "dirichlet", "synthetic", "convex", "outlier", "stream"} <= tags
    # The delta sweep spans delta_A/mu from 0 to 30 at fixed client mu and L.
    sweep = [catalogue.read_certificate(n)["constants"] for n in catalogue.names("quad-kappa100-delta*")]
    assert len(sweep) >= 6 and min(c["delta_A"] for c in sweep) < 1e-12 and max(c["delta_A"] for c in sweep) >= 30


@pytest.mark.parametrize("name", NAMES)
def test_instance_verifies_within_tolerance(name):
    """Shipped arrays match their checksums; the generator reproduces them on this machine to ARRAY_RTOL and
    the constants to CONSTANT_RTOL (CI runs this under several OpenBLAS kernels)."""
    result = catalogue.verify(name)
    assert result.ok, str(result)
    assert result.stored_ok and result.array_distances and result.constant_distances


@pytest.mark.parametrize("name", SHIPPED)
def test_load_uses_the_shipped_arrays(name):
    problem = catalogue.load(name)
    shipped = catalogue.read_arrays(name)
    arrays = catalogue.problem_arrays(problem)
    assert set(arrays) == set(shipped)
    for key, arr in arrays.items():  # stored arrays: bitwise is the right comparison
        assert arr.dtype == shipped[key].dtype and arr.tobytes() == shipped[key].tobytes(), key


@pytest.mark.parametrize("name", [n for n in NAMES if catalogue.spec(n).generator == "fedtheory.problems.quadratic"])
def test_quadratic_certificates_match_the_requested_constants(name):
    """The recorded constants are the ones the instance's JSON spec asked for (an independent check of the record)."""
    params = catalogue.spec(name).params
    c = catalogue.read_certificate(name)["constants"]
    scale = params["L"]
    assert c["n_clients"] == params["n_clients"] and c["dim"] == params["dim"]
    assert abs(c["mu"] - params["mu"]) <= 1e-9 * scale
    assert abs(c["L"] - params["L"]) <= 1e-9 * scale
    for key in ("delta_A", "delta_B"):
        if key in params:
            assert abs(c[key] - params[key]) <= 1e-9 * scale
    if "delta_A" not in params and "delta_B" not in params:
        # identical Hessians: the rounding policy reports exact zeros (and records its tolerance)
        assert c["delta_A"] == 0.0 and c["delta_B"] == 0.0
        record = catalogue.read_certificate(name)
        assert 0 < record["rounding_tolerance"]["delta_A"] <= 64 * max(1, params["dim"] / 64) * 2.3e-16 * scale
    if params.get("zeta2", 0.0) == 0.0:
        assert c["zeta2"] == 0.0
    else:
        assert math.isclose(c["zeta2"], params["zeta2"], rel_tol=1e-9)
    assert c["mu"] <= c["mu_f"] <= c["L_f"] <= c["L"] * (1 + 1e-12)


def _copy_catalogue(tmp_path: Path, names: list[str]) -> Path:
    root = tmp_path / "cat"
    root.mkdir()
    for name in names:
        for suffix in (".json", ".cert.json", ".npz"):
            shutil.copy(catalogue.CATALOGUE_DIR / f"{name}{suffix}", root / f"{name}{suffix}")
    return root


def test_a_changed_instance_is_detected(tmp_path):
    name = "quad-kappa10-delta1"
    root = _copy_catalogue(tmp_path, [name])
    assert catalogue.verify(name, root).ok
    spec_path = root / f"{name}.json"
    data = json.loads(spec_path.read_text())
    data["seed"] += 1
    spec_path.write_text(json.dumps(data))
    result = catalogue.verify(name, root)
    assert not result.ok and not result.spec_ok and not result.arrays_ok
    assert result.array_distances["A"] > 1e-3 and result.array_distances["b"] > 1e-3
    assert "MISMATCH" in str(result) and "regenerated arrays differ" in str(result)
    # Re-recording a changed instance needs an explicit overwrite (after a version bump).
    with pytest.raises(FileExistsError, match="bump the version"):
        catalogue.write_certificate(name, root)
    catalogue.write_certificate(name, root, overwrite=True)
    assert catalogue.verify(name, root).ok


def _rewrite_shipped(root: Path, name: str, change) -> None:
    """Change the shipped arrays of ``name`` and re-record their checksums (a consistent but different file)."""
    arrays = catalogue.read_arrays(name, root)
    change(arrays)
    np.savez_compressed(root / f"{name}.npz", **arrays)
    cert_path = root / f"{name}.cert.json"
    record = json.loads(cert_path.read_text())
    record["arrays"], record["arrays_sha256"] = catalogue.array_checksums(arrays)
    cert_path.write_text(json.dumps(record))


def test_regeneration_drift_above_the_tolerance_is_reported(tmp_path):
    """Shipped arrays 1e-9 (relative) away from what the generator makes: intact, but a real difference."""
    name = "quad-kappa10-delta1"
    root = _copy_catalogue(tmp_path, [name])

    def nudge(arrays):
        arrays["b"] = arrays["b"] * (1 + 1e-9)
    _rewrite_shipped(root, name, nudge)
    result = catalogue.verify(name, root)
    assert result.stored_ok and not result.arrays_ok and not result.ok
    assert 0.5e-9 < result.array_distances["b"] < 2e-9 and result.array_distances["A"] <= catalogue.ARRAY_RTOL


def test_corrupt_shipped_arrays_are_rejected(tmp_path):
    name = "quad-kappa10-delta1"
    root = _copy_catalogue(tmp_path, [name])
    arrays = catalogue.read_arrays(name, root)
    arrays["b"] = arrays["b"].copy()
    arrays["b"][0, 0] += 1e-12
    np.savez_compressed(root / f"{name}.npz", **arrays)  # checksums not re-recorded: corrupt
    with pytest.raises(ValueError, match="checksums"):
        catalogue.load(name, root)
    result = catalogue.verify(name, root)
    assert not result.stored_ok and not result.ok and "corrupt" in str(result)


def test_constant_drift_is_reported_separately_from_arrays(tmp_path):
    name = "quad-kappa10-delta1"
    root = _copy_catalogue(tmp_path, [name])
    cert_path = root / f"{name}.cert.json"
    record = json.loads(cert_path.read_text())
    record["constants"]["delta_A"] *= 1 + 1e-6
    cert_path.write_text(json.dumps(record))
    result = catalogue.verify(name, root)
    assert result.stored_ok and result.arrays_ok and not result.constants_ok
    assert result.constant_distances["delta_A (shipped)"] == pytest.approx(1e-6, rel=1e-3)


def test_distances():
    assert catalogue.array_distance(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 4e-16])) <= 2.3e-16
    assert catalogue.array_distance(np.zeros(2), np.zeros(3)) == math.inf
    assert catalogue.array_distance(np.array([1, 2]), np.array([1, 3])) == math.inf
    assert catalogue.array_distance(np.array("ridge"), np.array("ridge")) == 0.0
    assert catalogue.constant_distance(0.0, 1e-15, abs_tol=1e-14) == 0.0  # both rounding-level zeros
    assert catalogue.constant_distance(0.0, 1e-13, abs_tol=1e-14) == 1.0
    assert catalogue.constant_distance(None, None) == 0.0 and catalogue.constant_distance(None, 1.0) == math.inf


def test_spec_lookup_errors():
    with pytest.raises(KeyError, match="no catalogue instance"):
        catalogue.spec("no-such-instance")
    with pytest.raises(ValueError, match="version"):
        catalogue.spec("quad-kappa10-delta1@v99")
    assert catalogue.spec("quad-kappa10-delta1@v1").citation == "quad-kappa10-delta1@v1"
    with pytest.raises(ValueError, match="seed"):
        catalogue.InstanceSpec.from_dict({"name": "x", "version": 1, "generator": "a.b", "params": {"seed": 1},
                                          "seed": 0})
    with pytest.raises(ValueError, match="missing keys"):
        catalogue.InstanceSpec.from_dict({"name": "x"})
    with pytest.raises(ValueError, match="dotted path"):
        catalogue.resolve_generator("quadratic")


@pytest.mark.parametrize("name", ["quad-kappa100-delta10", "quad-diag-n1000-d50", "quad-convex-delta0p1"])
def test_export_import_round_trip(tmp_path, name):
    path = catalogue.export_npz(name, tmp_path / f"{name}.npz")
    original = catalogue.load(name)
    # Readable without fedtheory: plain arrays and JSON strings, no pickles.
    with np.load(path, allow_pickle=False) as npz:
        record = json.loads(str(npz["certificate_json"]))
        assert record["arrays_sha256"] == catalogue.read_certificate(name)["arrays_sha256"]
        for key, arr in catalogue.problem_arrays(original).items():
            assert npz[f"array/{key}"].tobytes() == arr.tobytes()
        assert npz["array/x_star"].tobytes() == original.certificate.x_star.tobytes()
    imported = catalogue.import_npz(path)
    assert imported.spec == catalogue.spec(name)
    c0, c1 = original.certificate, imported.problem.certificate
    assert c0.x_star.tobytes() == c1.x_star.tobytes() and c0.f_star == c1.f_star
    assert run(GradientDescent(), imported.problem, 20, seed=3).same_numbers(run(GradientDescent(), original, 20,
                                                                                   seed=3))


def test_tampered_export_is_rejected(tmp_path):
    path = catalogue.export_npz("quad-kappa10-delta1", tmp_path / "x.npz")
    with np.load(path) as npz:
        payload = {k: npz[k] for k in npz.keys()}
    payload["array/b"] = payload["array/b"].copy()
    payload["array/b"][0, 0] += 1e-12
    np.savez(tmp_path / "bad.npz", **payload)
    with pytest.raises(ValueError, match="checksums"):
        catalogue.import_npz(tmp_path / "bad.npz")
    np.savez(tmp_path / "other.npz", a=np.zeros(2))
    with pytest.raises(ValueError, match="not a fedtheory export"):
        catalogue.import_npz(tmp_path / "other.npz")


def test_cli_list_show_verify_export(tmp_path, capsys):
    assert cli_main(["problems", "list", "quad-kappa100-*"]) == 0
    out = capsys.readouterr().out
    assert "quad-kappa100-delta10@v1" in out and "quad-kappa10-delta1" not in out
    assert cli_main(["problems", "show", "quad-kappa10-delta1"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["certificate"]["constants"]["L"] == pytest.approx(10.0, rel=1e-12)
    assert cli_main(["problems", "verify", "quad-kappa10-*"]) == 0
    assert "OK" in capsys.readouterr().out
    target = tmp_path / "exp.npz"
    assert cli_main(["problems", "export", "quad-kappa10-delta1", "--format", "npz", "--out", str(target)]) == 0
    assert catalogue.import_npz(target).spec.name == "quad-kappa10-delta1"
    assert cli_main(["problems", "show", "nope"]) == 2
    assert "no catalogue instance" in capsys.readouterr().err


def _build_package(src: Path, tmp_path: Path) -> tuple[Path, list[str]]:
    """What an install puts on sys.path: setuptools' build_py output when setuptools is importable (fast, no
    network), else the files of a wheel built by pip. Returns (site folder, installed file names)."""
    site = tmp_path / "site"
    try:
        import setuptools  # noqa: F401
    except ImportError:
        build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                                str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=300)
        assert build.returncode == 0, build.stderr[-2000:]
        wheel = next((tmp_path / "dist").glob("fedtheory-*.whl"))
        zipfile.ZipFile(wheel).extractall(site)
    else:
        build = subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
                                "--build-lib", str(site)], cwd=src, capture_output=True, text=True, timeout=300)
        assert build.returncode == 0, build.stderr[-2000:]
    return site, [p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()]


def test_installed_package_finds_the_catalogue(tmp_path):
    """Build the package from a copy of the sources and load the catalogue from the build, not the checkout."""
    src = tmp_path / "src"
    src.mkdir()
    for item in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / item, src / item)
    shutil.copytree(REPO / "fedtheory", src / "fedtheory", ignore=shutil.ignore_patterns("__pycache__"))
    site, members = _build_package(src, tmp_path)
    # the documentation pages ship inside the package (fedtheory/docs links to docs/): claims cite them
    assert "fedtheory/docs/design.md" in members and "fedtheory/docs/tutorials/verify-your-own-theorem.md" in members
    for name in NAMES:
        assert f"fedtheory/catalogue_data/{name}.json" in members
        assert f"fedtheory/catalogue_data/{name}.cert.json" in members
        assert (f"fedtheory/catalogue_data/{name}.npz" in members) == (name in SHIPPED)
    code = ("import fedtheory.catalogue as c, sys; from pathlib import Path; "
            "assert Path(c.__file__).resolve().is_relative_to(Path(sys.argv[1]).resolve()), c.__file__; "
            "assert c.CATALOGUE_DIR.resolve().is_relative_to(Path(sys.argv[1]).resolve()); "
            "names = c.names(); r = c.verify(names[0]); assert r.ok, str(r); print(len(names))")
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run([sys.executable, "-c", code, str(site)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert int(proc.stdout.strip()) == len(NAMES)


# ----- the catalogue machinery on hypothesis-drawn instances -----

from hypothesis import HealthCheck, given, settings  # noqa: E402

from fedtheory.strategies import quadratic_params  # noqa: E402


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(params=quadratic_params(max_clients=6, max_dim=5))
def test_any_quadratic_spec_certifies_verifies_and_round_trips(tmp_path, params):
    """Record -> verify -> export -> import round-trips any feasible quadratic request (bitwise on this machine:
    the same arrays through the same code)."""
    params = dict(params)
    seed = params.pop("seed")
    root = tmp_path / f"cat{seed}-{abs(hash(json.dumps(params, sort_keys=True))) % 10**8}"
    root.mkdir()
    name = "drawn"
    (root / f"{name}.json").write_text(json.dumps({"name": name, "version": 1, "params": params, "seed": seed,
                                                   "generator": "fedtheory.problems.quadratic"}))
    catalogue.write_certificate(name, root)
    assert catalogue.verify(name, root).ok
    problem = catalogue.load(name, root)
    record = catalogue.read_certificate(name, root)
    assert record["constants"]["mu"] == pytest.approx(problem.certificate.mu, rel=0, abs=0)
    imported = catalogue.import_npz(catalogue.export_npz(name, root / "x.npz", root))
    for key, arr in catalogue.problem_arrays(problem).items():
        assert imported.arrays[key].tobytes() == arr.tobytes()
    assert imported.problem.certificate.x_star.tobytes() == problem.certificate.x_star.tobytes()
