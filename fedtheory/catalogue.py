"""The named benchmark catalogue: versioned problem instances anyone can regenerate bit for bit.

An instance is a small JSON spec (generator, parameters, seed, version) plus a recorded *certificate file*:
the constants a theorem needs (mu, L, mu_f, L_f, delta_A, delta_B, zeta2, f*, ...) and a SHA-256 checksum of
every generated array. A paper cites ``quad-kappa100-delta10@v1``; a reader regenerates it with
:func:`load` and :func:`verify` confirms the arrays are byte-identical to the ones the certificate recorded,
so a code change that silently alters a benchmark instance fails CI (``tests/test_catalogue.py``).

Where the catalogue lives
-------------------------
The single source of truth is the package-data folder ``fedtheory/catalogue_data/`` (shipped in the wheel,
so an installed fedtheory finds it without a source checkout). The top-level ``problems/`` folder that
DESIGN.md asks for is a symbolic link to it, so both paths show the same files and cannot drift apart.
Users can keep their own catalogue elsewhere and pass ``root=`` to every function.

File layout (``NAME`` is the instance name)::

    NAME.json        {"name", "version", "generator", "params", "seed", "description", "tags", "family"}
    NAME.cert.json   {"name", "version", "spec_sha256", "constants", "arrays", "arrays_sha256", ...}

``generator`` is a dotted path to a callable taking ``**params, seed=seed`` and returning a
:class:`~fedtheory.problems.base.Problem`, e.g. ``fedtheory.problems.quadratic``.

Checksums are of the raw float64 bytes. They are exact on one platform; a different BLAS may round the
generator's linear algebra differently, in which case :func:`verify` reports the checksum mismatch separately
from the constants (which are compared to ~1e-9 relative), so the two situations can be told apart.
"""
from __future__ import annotations

import fnmatch
import hashlib
import importlib
import io
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from .problems.base import Problem

__all__ = [
    "CATALOGUE_DIR", "InstanceSpec", "Verification", "ImportedInstance", "catalogue_dir", "names", "spec",
    "build", "load", "problem_arrays", "array_checksums", "certificate_record", "read_certificate",
    "write_certificate", "verify", "export_npz", "import_npz", "constants", "natural_key",
]

#: The package-data folder holding the catalogue (``problems/`` at the repository root links here).
CATALOGUE_DIR = Path(__file__).resolve().parent / "catalogue_data"
SPEC_SUFFIX = ".json"
CERT_SUFFIX = ".cert.json"
#: Relative tolerance used to compare recorded and regenerated constants.
CONSTANT_RTOL = 1e-9
#: Constants recorded in a certificate file (scalars of :class:`~fedtheory.problems.base.Certificate`).
CONSTANT_NAMES = ("f_star", "mu", "L", "mu_f", "L_f", "delta_A", "delta_B", "zeta2", "sigma2", "kkt_residual")
_REQUIRED_SPEC_KEYS = ("name", "version", "generator", "params", "seed")


def catalogue_dir(root: str | os.PathLike | None = None) -> Path:
    """The catalogue folder: ``root`` if given, else the packaged :data:`CATALOGUE_DIR`."""
    path = CATALOGUE_DIR if root is None else Path(root)
    if not path.is_dir():
        raise FileNotFoundError(f"catalogue folder {path} does not exist")
    return path


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True)
class InstanceSpec:
    """A named, versioned problem instance: ``generator(**params, seed=seed)``."""

    name: str
    version: int
    generator: str
    params: Mapping[str, Any]
    seed: int
    description: str = ""
    tags: tuple[str, ...] = ()
    family: str = ""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "spec") -> "InstanceSpec":
        missing = [k for k in _REQUIRED_SPEC_KEYS if k not in data]
        if missing:
            raise ValueError(f"{source}: missing keys {missing} (a spec needs {list(_REQUIRED_SPEC_KEYS)})")
        if not isinstance(data["params"], Mapping):
            raise TypeError(f"{source}: params must be a JSON object, got {type(data['params']).__name__}")
        if "seed" in data["params"]:
            raise ValueError(f"{source}: give the seed as the top-level 'seed', not inside params")
        for key in ("version", "seed"):
            if isinstance(data[key], bool) or not isinstance(data[key], int) or data[key] < 0:
                raise ValueError(f"{source}: {key} must be an integer >= 0, got {data[key]!r}")
        return cls(name=str(data["name"]), version=int(data["version"]), generator=str(data["generator"]),
                   params=dict(data["params"]), seed=int(data["seed"]),
                   description=str(data.get("description", "")), tags=tuple(data.get("tags", ())),
                   family=str(data.get("family", "")))

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "generator": self.generator,
                "params": dict(self.params), "seed": self.seed, "description": self.description,
                "tags": list(self.tags), "family": self.family}

    @property
    def citation(self) -> str:
        """How to cite the instance: ``name@vVERSION``."""
        return f"{self.name}@v{self.version}"

    def sha256(self) -> str:
        """Checksum of what determines the arrays (name, version, generator, params, seed)."""
        core = {k: v for k, v in self.as_dict().items() if k in _REQUIRED_SPEC_KEYS}
        return hashlib.sha256(_canonical(core).encode()).hexdigest()


def natural_key(name: str) -> tuple:
    """Sort key reading digit runs as numbers: delta0 < delta0p1 < delta1 < delta3 < delta10 < delta30."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name))


def names(pattern: str | None = None, root: str | os.PathLike | None = None) -> list[str]:
    """Instance names in the catalogue in natural order, optionally filtered by a shell pattern
    (``quad-kappa*``)."""
    folder = catalogue_dir(root)
    found = sorted((p.name[: -len(SPEC_SUFFIX)] for p in folder.glob(f"*{SPEC_SUFFIX}")
                    if not p.name.endswith(CERT_SUFFIX)), key=natural_key)
    return [n for n in found if pattern is None or fnmatch.fnmatchcase(n, pattern)]


def spec(name: str, root: str | os.PathLike | None = None) -> InstanceSpec:
    """The spec of instance ``name`` (``name@vK`` is accepted and checks the version)."""
    base, _, version = name.partition("@v")
    path = catalogue_dir(root) / f"{base}{SPEC_SUFFIX}"
    if not path.is_file():
        close = [n for n in names(root=root) if base.split("-")[0] in n][:8]
        raise KeyError(f"no catalogue instance {base!r} in {path.parent}"
                       + (f"; similar: {', '.join(close)}" if close else "") + " (see `fedtheory problems list`)")
    s = InstanceSpec.from_dict(json.loads(path.read_text()), source=str(path))
    if s.name != base:
        raise ValueError(f"{path}: spec name {s.name!r} does not match its file name {base!r}")
    if version and int(version) != s.version:
        raise ValueError(f"{base} is at version {s.version} in this catalogue, not {version}")
    return s


def resolve_generator(path: str) -> Callable[..., Problem]:
    """Import the callable named by a dotted path (``package.module.function``)."""
    module_name, _, attr = path.rpartition(".")
    if not module_name:
        raise ValueError(f"generator must be a dotted path like 'fedtheory.problems.quadratic', got {path!r}")
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot import generator {path!r}: {exc}") from exc
    if not callable(obj):
        raise TypeError(f"generator {path!r} is not callable")
    return obj


def build(instance: InstanceSpec) -> Problem:
    """Generate the problem of a spec (no caching)."""
    problem = resolve_generator(instance.generator)(**dict(instance.params), seed=instance.seed)
    if not isinstance(problem, Problem):
        raise TypeError(f"generator {instance.generator} returned {type(problem).__name__}, not a Problem")
    return problem


@lru_cache(maxsize=16)
def _load_cached(name: str, root: str | None) -> Problem:
    return build(spec(name, root))


def load(name: str, root: str | os.PathLike | None = None) -> Problem:
    """The problem of catalogue instance ``name`` (cached per process; problems are not mutated by runs)."""
    return _load_cached(name, None if root is None else str(Path(root).resolve()))


# ---------------------------------------------------------------------------------------------------------
# Arrays, checksums, certificates
# ---------------------------------------------------------------------------------------------------------

def problem_arrays(problem: Problem) -> dict[str, np.ndarray]:
    """The arrays that define ``problem`` (what is checksummed and exported), plus ``x_star``.

    Uses ``problem.arrays()`` when the problem class provides it; quadratics give (A, b, weights); otherwise
    every public ndarray attribute of the instance.
    """
    from .problems.quadratic import QuadraticProblem

    if callable(getattr(problem, "arrays", None)):
        arrays = dict(problem.arrays())
    elif isinstance(problem, QuadraticProblem):
        arrays = {"A": problem.A, "b": problem.b, "weights": problem.weights}
    else:
        arrays = {k: v for k, v in vars(problem).items() if isinstance(v, np.ndarray) and not k.startswith("_")}
    arrays["x_star"] = problem.certificate.x_star
    return {k: np.ascontiguousarray(v) for k, v in sorted(arrays.items())}


def _array_sha(arr: np.ndarray) -> str:
    h = hashlib.sha256()
    h.update(f"{arr.dtype.str}{arr.shape}".encode())
    h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def array_checksums(arrays: Mapping[str, np.ndarray]) -> tuple[dict[str, dict[str, Any]], str]:
    """Per-array ``{shape, dtype, sha256}`` and one combined SHA-256 over all arrays (sorted by name)."""
    per = {k: {"shape": list(np.shape(v)), "dtype": np.asarray(v).dtype.str, "sha256": _array_sha(np.asarray(v))}
           for k, v in sorted(arrays.items())}
    combined = hashlib.sha256(_canonical({k: v["sha256"] for k, v in per.items()}).encode()).hexdigest()
    return per, combined


def constants(problem: Problem) -> dict[str, Any]:
    """The scalar certificate constants recorded in a certificate file, plus n_clients and dim."""
    c = problem.certificate
    out: dict[str, Any] = {"n_clients": int(problem.n_clients), "dim": int(problem.dim)}
    for key in CONSTANT_NAMES:
        value = float(getattr(c, key))
        # Constants a problem class does not compute (NaN, e.g. delta for online streams) are recorded as null.
        out[key] = value if math.isfinite(value) else None
    out["kappa"] = float(c.kappa) if math.isfinite(c.kappa) else None
    out["x_star_norm"] = float(np.linalg.norm(c.x_star))
    return out


def certificate_record(instance: InstanceSpec, problem: Problem | None = None) -> dict[str, Any]:
    """The certificate file content for ``instance`` (generates the problem unless given)."""
    problem = build(instance) if problem is None else problem
    per, combined = array_checksums(problem_arrays(problem))
    return {"name": instance.name, "version": instance.version, "citation": instance.citation,
            "spec_sha256": instance.sha256(), "problem_class": f"{type(problem).__module__}."
                                                                f"{type(problem).__qualname__}",
            "constants": constants(problem), "exact": dict(problem.certificate.exact),
            "arrays": per, "arrays_sha256": combined, "notes": problem.certificate.notes}


def _atomic_write_text(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; catalogue files are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_certificate(name: str, root: str | os.PathLike | None = None) -> dict[str, Any]:
    """The recorded certificate file of ``name``."""
    path = catalogue_dir(root) / f"{name.partition('@v')[0]}{CERT_SUFFIX}"
    if not path.is_file():
        raise FileNotFoundError(f"{name} has no recorded certificate {path.name}; record it with "
                                f"`fedtheory problems certify {name}`")
    return json.loads(path.read_text())


def write_certificate(name: str, root: str | os.PathLike | None = None, *, overwrite: bool = False) -> Path:
    """Record the certificate of ``name`` (refuses to overwrite a different record unless ``overwrite``).

    Changing a published instance means bumping its ``version`` in the spec; overwriting is for that case.
    """
    folder = catalogue_dir(root)
    instance = spec(name, root)
    record = certificate_record(instance)
    path = folder / f"{instance.name}{CERT_SUFFIX}"
    if path.exists() and not overwrite:
        old = json.loads(path.read_text())
        if old.get("arrays_sha256") != record["arrays_sha256"] or old.get("spec_sha256") != record["spec_sha256"]:
            raise FileExistsError(f"{path} records different arrays; bump the version in {instance.name}.json "
                                  "and pass overwrite=True to re-record it")
    _atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True) + "\n")
    return path


@dataclass(frozen=True)
class Verification:
    """Result of regenerating an instance and comparing it with its recorded certificate."""

    name: str
    spec_ok: bool
    checksum_ok: bool
    constants_ok: bool
    mismatched_arrays: tuple[str, ...] = ()
    mismatched_constants: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.spec_ok and self.checksum_ok and self.constants_ok

    def __str__(self) -> str:
        if self.ok:
            return f"{self.name}: OK (arrays and constants regenerate exactly)"
        parts = []
        if not self.spec_ok:
            parts.append("spec changed since the certificate was recorded (bump the version and re-record)")
        if not self.checksum_ok:
            parts.append(f"array checksums differ: {', '.join(self.mismatched_arrays)}")
        if not self.constants_ok:
            parts.append("constants differ: " + ", ".join(f"{k} recorded {a} now {b}"
                                                          for k, (a, b) in self.mismatched_constants.items()))
        return f"{self.name}: MISMATCH: " + "; ".join(parts)


def _close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    a, b = float(a), float(b)
    # Constants near zero (delta for identical Hessians, kkt residuals) are compared on an absolute scale.
    return math.isclose(a, b, rel_tol=CONSTANT_RTOL, abs_tol=1e-12)


def verify(name: str, root: str | os.PathLike | None = None, problem: Problem | None = None) -> Verification:
    """Regenerate ``name`` and compare its spec hash, array checksums and constants with the record."""
    instance = spec(name, root)
    recorded = read_certificate(instance.name, root)
    problem = build(instance) if problem is None else problem
    now = certificate_record(instance, problem)
    mism_arrays = tuple(sorted(k for k in set(recorded["arrays"]) | set(now["arrays"])
                               if recorded["arrays"].get(k) != now["arrays"].get(k)))
    # kkt_residual is a floating-point residual, not a property of the instance: compare it loosely.
    mism_const = {k: (recorded["constants"].get(k), now["constants"].get(k))
                  for k in set(recorded["constants"]) | set(now["constants"])
                  if k != "kkt_residual" and not _close(recorded["constants"].get(k), now["constants"].get(k))}
    return Verification(name=instance.name, spec_ok=recorded.get("spec_sha256") == now["spec_sha256"],
                        checksum_ok=recorded["arrays_sha256"] == now["arrays_sha256"] and not mism_arrays,
                        constants_ok=not mism_const, mismatched_arrays=mism_arrays,
                        mismatched_constants=mism_const)


# ---------------------------------------------------------------------------------------------------------
# Export / import (for Flower, PyTorch and other frameworks)
# ---------------------------------------------------------------------------------------------------------

#: Prefix of the array keys in an exported ``.npz`` (metadata keys are ``spec_json`` and ``certificate_json``).
ARRAY_PREFIX = "array/"


def export_npz(name: str, path: str | os.PathLike, root: str | os.PathLike | None = None) -> Path:
    """Write the arrays of ``name`` and its certificate to an ``.npz`` file (atomically).

    Keys: ``array/A``, ``array/b``, ``array/weights``, ``array/x_star`` (for quadratics; other problems export
    their own arrays), ``spec_json`` and ``certificate_json`` (JSON strings; read them with
    ``json.loads(str(npz["certificate_json"]))``). No pickles, so ``np.load(path)`` works without fedtheory.
    """
    instance = spec(name, root)
    problem = load(instance.name, root)
    arrays = problem_arrays(problem)
    record = certificate_record(instance, problem)
    payload: dict[str, np.ndarray] = {ARRAY_PREFIX + k: v for k, v in arrays.items()}
    payload["spec_json"] = np.array(json.dumps(instance.as_dict(), sort_keys=True))
    payload["certificate_json"] = np.array(json.dumps(record, sort_keys=True))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez(buffer, **payload)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "wb") as fh:
        fh.write(buffer.getvalue())
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return path


@dataclass(frozen=True)
class ImportedInstance:
    """An exported instance read back: its spec, certificate record, arrays, and the rebuilt problem."""

    spec: InstanceSpec
    certificate: Mapping[str, Any]
    arrays: Mapping[str, np.ndarray]
    problem: Problem
    #: "arrays" (rebuilt from the file's arrays alone) or "spec" (regenerated from the embedded spec).
    rebuilt_from: str = "arrays"


def import_npz(path: str | os.PathLike) -> ImportedInstance:
    """Read an ``.npz`` written by :func:`export_npz`, check its checksums, and rebuild the problem.

    Quadratics are rebuilt from the arrays alone (no generator call) when that reproduces them bit for bit;
    otherwise (other problem classes, or renormalised weights moving a last bit) the problem is regenerated
    from the embedded spec and must match the file's arrays byte for byte. Raises ValueError on any mismatch.
    """
    with np.load(path, allow_pickle=False) as npz:
        keys = list(npz.keys())
        if "certificate_json" not in keys or "spec_json" not in keys:
            raise ValueError(f"{path} is not a fedtheory export (missing spec_json/certificate_json)")
        instance = InstanceSpec.from_dict(json.loads(str(npz["spec_json"])), source=str(path))
        record = json.loads(str(npz["certificate_json"]))
        arrays = {k[len(ARRAY_PREFIX):]: npz[k] for k in keys if k.startswith(ARRAY_PREFIX)}
    per, combined = array_checksums(arrays)
    if combined != record["arrays_sha256"]:
        bad = [k for k in per if per[k] != record["arrays"].get(k)]
        raise ValueError(f"{path}: arrays do not match the embedded certificate checksums ({', '.join(bad)})")
    problem: Problem | None = None
    rebuilt_from = "arrays"
    if record["problem_class"] == "fedtheory.problems.quadratic.QuadraticProblem":
        from .problems.quadratic import QuadraticProblem

        # QuadraticProblem renormalises its weights (w / sum w), which can move their last bit (it does for
        # 1000 uniform clients); anything not reproduced bit for bit is regenerated from the embedded spec.
        candidate = QuadraticProblem(arrays["A"], arrays["b"], arrays["weights"])
        if array_checksums(problem_arrays(candidate))[1] == combined:
            problem = candidate
    if problem is None:
        problem, rebuilt_from = build(instance), "spec"
        if array_checksums(problem_arrays(problem))[1] != combined:
            raise ValueError(f"{path}: neither the arrays nor the embedded spec rebuild the exported problem")
    return ImportedInstance(spec=instance, certificate=record, arrays=arrays, problem=problem,
                            rebuilt_from=rebuilt_from)
