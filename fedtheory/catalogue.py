"""The named benchmark catalogue: versioned problem instances that are the same arrays on every machine.

An instance is a small JSON spec (generator, parameters, seed, version), the *shipped arrays* that define the
problem (``NAME.npz``, compressed) and a recorded *certificate file*: the constants a theorem needs (mu, L,
mu_f, L_f, delta_A, delta_B, zeta2, f*, ...), the rounding tolerances used, and a SHA-256 checksum of every
shipped array. A paper cites ``quad-kappa100-delta10@v1``; :func:`load` builds the problem from the shipped
arrays (never from the generator), so every reader gets bitwise the same data.

Why ship arrays instead of regenerating them: a generator runs QR factorisations, eigendecompositions and
root finding through BLAS/LAPACK, whose kernels sum in CPU-dependent orders, so regenerated arrays differ in
their last bits between machines. Checksums therefore identify *stored* arrays only. :func:`verify` checks
three things: the shipped arrays are intact (checksums), the generator still reproduces them on this
machine to ``ARRAY_RTOL`` (relative, max-norm), and the certificate's constants, recomputed both from the
shipped arrays and from the regenerated ones, agree with the record to ``CONSTANT_RTOL``; it reports the
distances it measured, not a bitwise verdict.

Where the catalogue lives
-------------------------
The single source of truth is the package-data folder ``fedtheory/catalogue_data/`` (shipped in the wheel,
so an installed fedtheory finds it without a source checkout). The repository's top-level ``problems/`` folder
is a symbolic link to it, so both paths show the same files and cannot drift apart.
Users can keep their own catalogue elsewhere and pass ``root=`` to every function.

File layout (``NAME`` is the instance name)::

    NAME.json        {"name", "version", "generator", "params", "seed", "description", "tags", "family"}
    NAME.npz         the arrays of ``problem.arrays()`` (compressed; no pickles)
    NAME.cert.json   {"name", "version", "spec_sha256", "problem_class", "constants", "rounding_tolerance",
                      "arrays", "arrays_sha256", ...}

``generator`` is a dotted path to a callable taking ``**params, seed=seed`` and returning a
:class:`~fedtheory.problems.base.Problem`, e.g. ``fedtheory.problems.quadratic``.

An instance too large to ship (the cross-device instances, 10^5-10^6 clients) sets ``"ship_arrays": false`` in
its spec: it has no ``NAME.npz``, :func:`load` generates it from its seed, and its certificate records, besides
the constants, a fingerprint of the arrays (sampled rows and column means, :func:`array_fingerprint`) that
:func:`verify` compares with the regenerated arrays to ``ARRAY_RTOL``.
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
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from .files import write_bytes_atomic, write_text_atomic
from .problems.base import Problem
from .validation import read_json

__all__ = [
    "CATALOGUE_DIR", "InstanceSpec", "Verification", "ImportedInstance", "catalogue_dir", "names", "spec",
    "build", "load", "problem_arrays", "array_checksums", "array_distance", "certificate_record",
    "read_certificate", "read_arrays", "write_certificate", "verify", "export_npz", "import_npz", "constants",
    "natural_key", "spec_matches_record", "ARRAY_RTOL", "CONSTANT_RTOL", "array_fingerprint", "fingerprint_distances",
]

#: The package-data folder holding the catalogue (``problems/`` at the repository root links here).
CATALOGUE_DIR = Path(__file__).resolve().parent / "catalogue_data"
SPEC_SUFFIX = ".json"
CERT_SUFFIX = ".cert.json"
ARRAYS_SUFFIX = ".npz"
#: Relative (max-norm) tolerance between regenerated and shipped arrays. The generators' inputs are random
#: draws (bitwise portable: NumPy's generators do not use BLAS) pushed through a QR factorisation, an
#: eigendecomposition and a root finder on well-conditioned matrices; each contributes a few hundred eps at
#: most, so 1e-12 (about 4500 eps) separates kernel rounding from any real change of the data.
ARRAY_RTOL = 1e-12
#: Relative tolerance between recorded and recomputed certificate constants. Constants are eigenvalues,
#: Newton solutions and norms of the arrays: a perturbation of 1e-12 relative in the arrays moves them by at
#: most kappa * 1e-12 <= 1e-10 for the catalogue's condition numbers (kappa <= 1000 after the affine scaling
#: that sets mu and L; larger ones would need a looser, stated tolerance). Constants the rounding policy
#: reports as exact zeros are compared on the absolute scale of their recorded rounding tolerance.
CONSTANT_RTOL = 1e-10
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
    #: False for instances too large to ship (cross-device sizes): no ``NAME.npz``; the certificate records a
    #: fingerprint of the arrays (sampled rows and column means) that :func:`verify` compares to a tolerance.
    ship_arrays: bool = True

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
                   family=str(data.get("family", "")), ship_arrays=_ship_flag(data, source))

    def as_dict(self) -> dict[str, Any]:
        out = {"name": self.name, "version": self.version, "generator": self.generator,
               "params": dict(self.params), "seed": self.seed, "description": self.description,
               "tags": list(self.tags), "family": self.family}
        if not self.ship_arrays:  # written only when set, so the shipped instances' specs are unchanged
            out["ship_arrays"] = False
        return out

    @property
    def citation(self) -> str:
        """How to cite the instance: ``name@vVERSION``."""
        return f"{self.name}@v{self.version}"

    def sha256(self) -> str:
        """Checksum of what determines the arrays (name, version, generator, params, seed)."""
        core = {k: v for k, v in self.as_dict().items() if k in _REQUIRED_SPEC_KEYS}
        return hashlib.sha256(_canonical(core).encode()).hexdigest()


def _ship_flag(data: Mapping[str, Any], source: str) -> bool:
    value = data.get("ship_arrays", True)
    if not isinstance(value, bool):
        raise ValueError(f"{source}: ship_arrays must be true or false, got {value!r}")
    return value


#: Rows sampled by :func:`array_fingerprint` from each array of an unshipped instance.
FINGERPRINT_ROWS = 8
#: Arrays up to this many entries are fingerprinted whole.
FINGERPRINT_WHOLE = 4096


def array_fingerprint(arrays: Mapping[str, np.ndarray], seed: int = 0) -> dict[str, dict[str, Any]]:
    """A tolerance-comparable summary of arrays too large to ship: per array its shape and dtype, the whole
    array when small, otherwise ``FINGERPRINT_ROWS`` rows at positions drawn from ``seed`` (always including the
    first and the last) and the column means (over the first axis). Regenerated arrays are compared with
    :func:`array_distance` on these parts: a changed generator moves the sampled rows or the means far beyond
    the rounding of a different BLAS kernel."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in sorted(arrays.items()):
        arr = np.asarray(value)
        entry: dict[str, Any] = {"shape": list(arr.shape), "dtype": arr.dtype.str}
        if arr.size <= FINGERPRINT_WHOLE or arr.ndim == 0:
            entry["whole"] = arr.tolist()
        else:
            n = arr.shape[0]
            picks = np.random.default_rng(seed).choice(n, size=min(n, FINGERPRINT_ROWS), replace=False)
            rows = np.unique(np.concatenate([[0, n - 1], picks]))
            entry["rows"] = rows.tolist()
            entry["values"] = arr[rows].tolist()
            entry["column_mean"] = (arr.mean(axis=0) if arr.dtype.kind == "f" else np.zeros(0)).tolist()
        out[key] = entry
    return out


def fingerprint_distances(recorded: Mapping[str, Mapping[str, Any]], now: Mapping[str, Mapping[str, Any]]
                          ) -> dict[str, float]:
    """:func:`array_distance` between two fingerprints, part by part (inf for a changed shape or dtype)."""
    out: dict[str, float] = {}
    for key in sorted(set(recorded) | set(now)):
        a, b = now.get(key), recorded.get(key)
        if a is None or b is None or a["shape"] != b["shape"] or a["dtype"] != b["dtype"]:
            out[key] = math.inf
            continue
        kind = np.dtype(b["dtype"])
        for part in ("whole", "rows", "values", "column_mean"):
            if part in b or part in a:
                if part not in a or part not in b:
                    out[f"{key}.{part}"] = math.inf
                    continue
                dtype = np.int64 if part == "rows" else kind
                out[f"{key}.{part}"] = array_distance(np.asarray(a[part], dtype=dtype),
                                                      np.asarray(b[part], dtype=dtype))
    return out


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
    """The JSON spec of instance ``name`` (``name@vK`` is accepted and checks the version)."""
    base, _, version = name.partition("@v")
    path = catalogue_dir(root) / f"{base}{SPEC_SUFFIX}"
    if not path.is_file():
        close = [n for n in names(root=root) if base.split("-")[0] in n][:8]
        raise KeyError(f"no catalogue instance {base!r} in {path.parent}"
                       + (f"; similar: {', '.join(close)}" if close else "") + " (see `fedtheory problems list`)")
    s = InstanceSpec.from_dict(read_json(path), source=str(path))
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


def load(name: str, root: str | os.PathLike | None = None) -> Problem:
    """The problem of catalogue instance ``name``, built from its shipped arrays (cached per process;
    problems are not mutated by runs). Instances without shipped arrays are generated from their spec.

    Raises ValueError when the instance's JSON spec was edited after its certificate was recorded (the test
    ``fedtheory problems verify`` makes, :func:`spec_matches_record`), when the shipped arrays do not match
    their recorded checksums, or when a file is not valid JSON (naming the file).
    """
    base = name.partition("@v")[0]
    resolved = None if root is None else str(Path(root).resolve())
    # The files' (mtime, size) are part of the cache key, so an edit made after a first load is noticed too.
    folder = catalogue_dir(root)
    stamp = tuple((st.st_mtime_ns, st.st_size) if (st := _stat(folder / f"{base}{suffix}")) else None
                  for suffix in (SPEC_SUFFIX, CERT_SUFFIX, ARRAYS_SUFFIX))
    return _load_cached(base, resolved, stamp)


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except OSError:
        return None


def spec_matches_record(instance: InstanceSpec, record: Mapping[str, Any]) -> bool:
    """Whether ``instance`` is still the JSON spec its certificate ``record`` was recorded from: the checksum of
    what determines the arrays (name, version, generator, params, seed; see :meth:`InstanceSpec.sha256`)
    equals the record's ``spec_sha256``. The one test of an edited spec: :func:`load` refuses the instance,
    :func:`verify` reports it."""
    return record.get("spec_sha256") == instance.sha256()


def _edited_spec_error(instance: InstanceSpec, root: str | os.PathLike | None) -> ValueError:
    folder = catalogue_dir(root)
    return ValueError(
        f"{folder / (instance.name + SPEC_SUFFIX)} was edited after its certificate {instance.name}{CERT_SUFFIX} "
        f"was recorded (its name, version, generator, params or seed no longer match the recorded spec_sha256), "
        f"so the recorded arrays and constants are not those of the instance it now describes; revert the edit, "
        f"or bump its version and re-record with `fedtheory problems certify {instance.name} --overwrite` "
        f"(`fedtheory problems verify {instance.name}` reports the same)")


def _from_shipped(name: str, root: str | None, stamp: Any = None, *, check_spec: bool = True) -> Problem:
    """Build instance ``name`` from its shipped arrays (``stamp`` only keys the cache; ``check_spec=False`` is
    :func:`verify`, which reports an edited spec instead of refusing it)."""
    instance = spec(name, root)
    if not (catalogue_dir(root) / f"{instance.name}{ARRAYS_SUFFIX}").is_file():
        cert_path = catalogue_dir(root) / f"{instance.name}{CERT_SUFFIX}"
        if check_spec and cert_path.is_file() and not spec_matches_record(instance, read_json(cert_path)):
            raise _edited_spec_error(instance, root)
        return build(instance)
    record = read_certificate(instance.name, root)
    if check_spec and not spec_matches_record(instance, record):
        raise _edited_spec_error(instance, root)
    arrays = read_arrays(instance.name, root)
    per, combined = array_checksums(arrays)
    if combined != record.get("arrays_sha256"):
        bad = sorted(k for k in set(per) | set(record.get("arrays", {})) if per.get(k) != record["arrays"].get(k))
        raise ValueError(f"{instance.name}{ARRAYS_SUFFIX} does not match its certificate's checksums "
                         f"({', '.join(bad)}): the shipped file is corrupt or was changed without re-recording")
    return _problem_class(record["problem_class"]).from_arrays(arrays)


_load_cached = lru_cache(maxsize=16)(_from_shipped)


def _fingerprint_ok(distances: Mapping[str, float]) -> bool:
    return bool(distances) and max(distances.values()) <= ARRAY_RTOL


def _problem_class(path: str) -> type[Problem]:
    cls = resolve_generator(path)
    if not (isinstance(cls, type) and issubclass(cls, Problem)):
        raise TypeError(f"problem_class {path!r} is not a Problem subclass")
    return cls


# ---------------------------------------------------------------------------------------------------------
# Arrays, checksums, certificates
# ---------------------------------------------------------------------------------------------------------

def problem_arrays(problem: Problem) -> dict[str, np.ndarray]:
    """The arrays that define ``problem`` (``problem.arrays()``), C-contiguous and sorted by name."""
    return {k: np.asarray(v, order="C") for k, v in sorted(problem.arrays().items())}  # keeps 0-d scalars 0-d


def _array_sha(arr: np.ndarray) -> str:
    h = hashlib.sha256()
    h.update(f"{arr.dtype.str}{arr.shape}".encode())
    h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def array_checksums(arrays: Mapping[str, np.ndarray]) -> tuple[dict[str, dict[str, Any]], str]:
    """Per-array ``{shape, dtype, sha256}`` and one combined SHA-256 over all arrays (sorted by name).

    Meant for *stored* arrays (a shipped or exported file): recomputed arrays are compared by
    :func:`array_distance`, since their last bits depend on the machine's BLAS.
    """
    per = {k: {"shape": list(np.shape(v)), "dtype": np.asarray(v).dtype.str, "sha256": _array_sha(np.asarray(v))}
           for k, v in sorted(arrays.items())}
    combined = hashlib.sha256(_canonical({k: v["sha256"] for k, v in per.items()}).encode()).hexdigest()
    return per, combined


def array_distance(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max |b| (0 for equal arrays; inf for different shapes, dtypes kinds or non-float values).

    Integer, boolean and string arrays (sizes, flags, loss names) must be equal exactly.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype.kind != b.dtype.kind:
        return math.inf
    if a.dtype.kind != "f":
        return 0.0 if np.array_equal(a, b) else math.inf
    if a.size == 0:
        return 0.0
    scale = float(np.max(np.abs(b)))
    diff = float(np.max(np.abs(a - b)))
    if diff == 0.0:
        return 0.0
    return diff / scale if scale > 0 else math.inf


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
    """The certificate file content for ``instance`` (loads the problem unless given)."""
    problem = load(instance.name) if problem is None else problem
    arrays = problem_arrays(problem)
    if not instance.ship_arrays:
        per = {k: {"shape": list(np.shape(v)), "dtype": np.asarray(v).dtype.str} for k, v in arrays.items()}
        combined = None  # nothing stored, so nothing to checksum: the fingerprint is compared to a tolerance
    else:
        per, combined = array_checksums(arrays)
    extra = {} if instance.ship_arrays else {"arrays_shipped": False,
                                             "fingerprint": array_fingerprint(arrays, instance.seed)}
    return {**extra, "name": instance.name, "version": instance.version, "citation": instance.citation,
            "spec_sha256": instance.sha256(), "problem_class": f"{type(problem).__module__}."
                                                                f"{type(problem).__qualname__}",
            "constants": constants(problem), "rounding_tolerance": dict(problem.certificate.rounding_tolerance),
            "exact": dict(problem.certificate.exact), "arrays": per, "arrays_sha256": combined,
            "notes": problem.certificate.notes}


def _npz_bytes(payload: Mapping[str, np.ndarray], compressed: bool = True) -> bytes:
    buffer = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buffer, **payload)
    return buffer.getvalue()


def read_certificate(name: str, root: str | os.PathLike | None = None) -> dict[str, Any]:
    """The recorded certificate file of ``name``."""
    path = catalogue_dir(root) / f"{name.partition('@v')[0]}{CERT_SUFFIX}"
    if not path.is_file():
        raise FileNotFoundError(f"{name} has no recorded certificate {path.name}; record it with "
                                f"`fedtheory problems certify {name}`")
    return read_json(path)


def read_arrays(name: str, root: str | os.PathLike | None = None) -> dict[str, np.ndarray]:
    """The shipped arrays of ``name`` (``NAME.npz``), exactly as stored."""
    path = catalogue_dir(root) / f"{name.partition('@v')[0]}{ARRAYS_SUFFIX}"
    if not path.is_file():
        raise FileNotFoundError(f"{name} ships no arrays ({path.name}); record them with "
                                f"`fedtheory problems certify {name}`")
    with np.load(path, allow_pickle=False) as npz:
        return {k: npz[k] for k in sorted(npz.keys())}


def write_certificate(name: str, root: str | os.PathLike | None = None, *, overwrite: bool = False) -> Path:
    """Generate ``name`` on this machine, ship its arrays (``NAME.npz``) and record its certificate.

    The recorded constants are those of the problem rebuilt from the written arrays, i.e. of what
    :func:`load` returns. Refuses to replace different arrays unless ``overwrite``: changing a published
    instance means bumping its ``version`` in its JSON spec first.
    """
    folder = catalogue_dir(root)
    instance = spec(name, root)
    generated = build(instance)
    arrays = problem_arrays(generated)
    cert_path = folder / f"{instance.name}{CERT_SUFFIX}"
    if not instance.ship_arrays:
        # Too large to ship: record the constants and a fingerprint of the arrays, no NAME.npz.
        if cert_path.exists() and not overwrite:
            old = read_json(cert_path)
            if (not spec_matches_record(instance, old)
                    or not _fingerprint_ok(fingerprint_distances(old.get("fingerprint", {}),
                                                                 array_fingerprint(arrays, instance.seed)))):
                raise FileExistsError(f"{cert_path} records different arrays; bump the version in "
                                      f"{instance.name}.json and pass overwrite=True to re-record it")
        stale = folder / f"{instance.name}{ARRAYS_SUFFIX}"
        if stale.exists():
            stale.unlink()
        _load_cached.cache_clear()
        record = certificate_record(instance, generated)
        write_text_atomic(cert_path, json.dumps(record, indent=1, sort_keys=True) + "\n")
        return cert_path
    _, combined = array_checksums(arrays)
    if cert_path.exists() and not overwrite:
        old = read_json(cert_path)
        if old.get("arrays_sha256") != combined or not spec_matches_record(instance, old):
            raise FileExistsError(f"{cert_path} records different arrays; bump the version in {instance.name}.json "
                                  "and pass overwrite=True to re-record it")
    write_bytes_atomic(folder / f"{instance.name}{ARRAYS_SUFFIX}", _npz_bytes(arrays))
    _load_cached.cache_clear()
    record = certificate_record(instance, type(generated).from_arrays(arrays))
    write_text_atomic(cert_path, json.dumps(record, indent=1, sort_keys=True) + "\n")
    return cert_path


@dataclass(frozen=True)
class Verification:
    """An instance checked against its record: shipped arrays intact, regeneration and constants within
    tolerance. Distances are relative (see :func:`array_distance` and :func:`constant_distance`)."""

    name: str
    spec_ok: bool
    stored_ok: bool
    array_distances: Mapping[str, float] = field(default_factory=dict)
    constant_distances: Mapping[str, float] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    @property
    def max_array_distance(self) -> float:
        return max(self.array_distances.values(), default=0.0)

    @property
    def max_constant_distance(self) -> float:
        return max(self.constant_distances.values(), default=0.0)

    @property
    def arrays_ok(self) -> bool:
        return self.max_array_distance <= ARRAY_RTOL

    @property
    def constants_ok(self) -> bool:
        return self.max_constant_distance <= CONSTANT_RTOL

    @property
    def ok(self) -> bool:
        return self.spec_ok and self.stored_ok and self.arrays_ok and self.constants_ok and not self.problems

    def summary(self) -> str:
        what = ("the shipped ones" if not any("." in k for k in self.array_distances)
                else "the recorded fingerprint (arrays not shipped)")
        arrays = (f"regenerated arrays within {self.max_array_distance:.1e} of {what} "
                  f"(tolerance {ARRAY_RTOL:.0e})" if self.array_distances else "no shipped arrays to compare")
        return (f"{arrays}; constants within {self.max_constant_distance:.1e} of the record "
                f"(tolerance {CONSTANT_RTOL:.0e})")

    def __str__(self) -> str:
        if self.ok:
            return f"{self.name}: OK ({self.summary()})"
        parts = list(self.problems)
        if not self.spec_ok:
            parts.append("spec changed since the certificate was recorded (bump the version and re-record)")
        bad_arrays = {k: v for k, v in self.array_distances.items() if not v <= ARRAY_RTOL}
        if bad_arrays:
            parts.append("regenerated arrays differ from the shipped ones: "
                         + ", ".join(f"{k} {v:.2e}" for k, v in sorted(bad_arrays.items())))
        bad_consts = {k: v for k, v in self.constant_distances.items() if not v <= CONSTANT_RTOL}
        if bad_consts:
            parts.append("constants differ from the record: "
                         + ", ".join(f"{k} {v:.2e}" for k, v in sorted(bad_consts.items())))
        return f"{self.name}: MISMATCH: " + "; ".join(parts) + f" ({self.summary()})"


#: Constants that are floating-point residuals rather than properties of the instance (not compared).
_UNCOMPARED = ("kkt_residual",)


def constant_distance(recorded: Any, now: Any, abs_tol: float = 0.0) -> float:
    """|recorded - now| / max(|recorded|, |now|), or 0 when both are within ``abs_tol`` of each other
    (constants the rounding policy snaps to zero); inf when only one is missing (null)."""
    if recorded is None or now is None:
        return 0.0 if recorded is now else math.inf
    a, b = float(recorded), float(now)
    diff = abs(a - b)
    if diff <= abs_tol or diff == 0.0:
        return 0.0
    return diff / max(abs(a), abs(b))


def _constant_distances(recorded: Mapping[str, Any], problem: Problem, label: str) -> dict[str, float]:
    tolerances = recorded.get("rounding_tolerance", {})
    now = constants(problem)
    return {f"{key} ({label})": constant_distance(recorded["constants"].get(key), now.get(key),
                                                  tolerances.get(key, 0.0))
            for key in sorted(set(recorded["constants"]) | set(now)) if key not in _UNCOMPARED}


def verify(name: str, root: str | os.PathLike | None = None) -> Verification:
    """Check instance ``name``: its shipped arrays against their checksums, the generator's output on this
    machine against the shipped arrays (``ARRAY_RTOL``), and the certificate constants of both the loaded and
    the regenerated problem against the record (``CONSTANT_RTOL``). Distances are reported, not hidden."""
    instance = spec(name, root)
    recorded = read_certificate(instance.name, root)
    problems: list[str] = []
    stored_ok, array_dist, const_dist = True, {}, {}
    regenerated = build(instance)
    if (catalogue_dir(root) / f"{instance.name}{ARRAYS_SUFFIX}").is_file():
        try:
            loaded = _from_shipped(instance.name, None if root is None else str(Path(root).resolve()),
                                   check_spec=False)  # an edited spec is reported below (spec_ok), not raised
        except ValueError as exc:
            stored_ok, loaded = False, None
            problems.append(str(exc))
        if loaded is not None:
            shipped = read_arrays(instance.name, root)
            now = problem_arrays(regenerated)
            array_dist = {k: array_distance(now[k], shipped[k]) if k in now and k in shipped else math.inf
                          for k in sorted(set(shipped) | set(now))}
            const_dist.update(_constant_distances(recorded, loaded, "shipped"))
    elif "fingerprint" in recorded:
        # An unshipped (cross-device) instance: the regenerated arrays against the recorded fingerprint.
        array_dist = fingerprint_distances(recorded["fingerprint"],
                                           array_fingerprint(problem_arrays(regenerated), instance.seed))
    const_dist.update(_constant_distances(recorded, regenerated, "regenerated"))
    return Verification(name=instance.name, spec_ok=spec_matches_record(instance, recorded),
                        stored_ok=stored_ok, array_distances=array_dist, constant_distances=const_dist,
                        problems=tuple(problems))


# ---------------------------------------------------------------------------------------------------------
# Export / import (for Flower, PyTorch and other frameworks)
# ---------------------------------------------------------------------------------------------------------

#: Prefix of the array keys in an exported ``.npz`` (metadata keys are ``spec_json`` and ``certificate_json``).
ARRAY_PREFIX = "array/"


def export_npz(name: str, path: str | os.PathLike, root: str | os.PathLike | None = None) -> Path:
    """Write the arrays of ``name``, its spec and its certificate to one ``.npz`` file (atomically).

    Keys: ``array/<name>`` for each defining array (``A``, ``b``, ``weights`` for quadratics; other problems
    export their own arrays, see ``Problem.arrays``), plus ``array/x_star`` (the certified minimiser),
    ``spec_json`` and ``certificate_json`` (JSON strings; read them with
    ``json.loads(str(npz["certificate_json"]))``). No pickles, so ``np.load(path)`` works without fedtheory.
    """
    instance = spec(name, root)
    problem = load(instance.name, root)
    record = certificate_record(instance, problem)
    payload: dict[str, np.ndarray] = {ARRAY_PREFIX + k: v for k, v in problem_arrays(problem).items()}
    payload[ARRAY_PREFIX + "x_star"] = problem.certificate.x_star
    payload["spec_json"] = np.array(json.dumps(instance.as_dict(), sort_keys=True))
    payload["certificate_json"] = np.array(json.dumps(record, sort_keys=True))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(path, _npz_bytes(payload, compressed=False))
    return path


@dataclass(frozen=True)
class ImportedInstance:
    """An exported instance read back: its spec, certificate record, arrays, and the rebuilt problem."""

    spec: InstanceSpec
    certificate: Mapping[str, Any]
    arrays: Mapping[str, np.ndarray]
    problem: Problem


def import_npz(path: str | os.PathLike) -> ImportedInstance:
    """Read an ``.npz`` written by :func:`export_npz`, check its checksums, and rebuild the problem from its
    arrays alone (no generator call). Raises ValueError if the arrays do not match the embedded checksums."""
    with np.load(path, allow_pickle=False) as npz:
        keys = list(npz.keys())
        if "certificate_json" not in keys or "spec_json" not in keys:
            raise ValueError(f"{path} is not a fedtheory export (missing spec_json/certificate_json)")
        instance = InstanceSpec.from_dict(json.loads(str(npz["spec_json"])), source=str(path))
        record = json.loads(str(npz["certificate_json"]))
        arrays = {k[len(ARRAY_PREFIX):]: npz[k] for k in keys if k.startswith(ARRAY_PREFIX)}
    defining = {k: v for k, v in arrays.items() if k != "x_star"}
    per, combined = array_checksums(defining)
    if combined != record["arrays_sha256"]:
        bad = sorted(k for k in set(per) | set(record["arrays"]) if per.get(k) != record["arrays"].get(k))
        raise ValueError(f"{path}: arrays do not match the embedded certificate checksums ({', '.join(bad)})")
    problem = _problem_class(record["problem_class"]).from_arrays(defining)
    return ImportedInstance(spec=instance, certificate=record, arrays=arrays, problem=problem)
