"""Worker side of the conformance kit's out-of-process protocol (docs/conformance.md, "Out of process").

Stand-alone: it needs only the standard library and NumPy, so it runs in another virtual environment (one
whose dependencies conflict with fedtheory's) without fedtheory installed:

    /other/venv/bin/python remote_worker.py package.module:factory
    /other/venv/bin/python remote_worker.py path/to/driver.py:factory

The second form loads the file by its path (as module ``driver_<stem>``), so a framework's driver can be named
after the framework (``drivers/flgo.py``) without shadowing the framework's own package on ``sys.path``.
``factory()`` returns the implementation (the contract of :mod:`fedtheory.conformance.contract`). The worker
reads one JSON request per line on stdin and writes one JSON reply per line on stdout:

    {"op": "round", "x": [...], "clients": [{"key": K, "cid": 3, "features": [[...]], "targets": [...]}, ...],
     "state": <JSON or null>, "hyper": {...}, "seed": S}
    -> {"x": [...], "state": <JSON or null>, "returned_state": true|false}   or   {"error": "Type: message"}

An implementation that draws its own participants (the sampling protocol of contract.py) returns a third item,
sent as ``"report": {"drawn": [cid, ...]}``.

A client's ``features``/``targets`` are sent the first time its ``key`` appears and then only ``{"key", "cid"}``.
Encoding (both directions): NumPy arrays as nested lists; a mapping whose keys are all integers is sent with
string keys and decoded back to integer keys (per-client state ``{cid: vector}``, FedRed's minibatches). The
implementation gets ``rng = numpy.random.default_rng(seed)``. Anything the implementation writes to stdout
is redirected to stderr, so it cannot corrupt the protocol.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import sys
import traceback
from pathlib import Path

import numpy as np


class Client:
    """The kit's client (see fedtheory.conformance.instance.Client): data, gradient and value of
    f_i(x) = 1/(2m) ||features x - targets||^2."""

    def __init__(self, cid, features, targets):
        self.cid = cid
        self.features = np.asarray(features, dtype=np.float64).reshape(len(targets), -1)
        self.targets = np.asarray(targets, dtype=np.float64)

    @property
    def num_examples(self):
        return int(self.features.shape[0])

    def grad(self, x):
        return self.features.T @ (self.features @ np.asarray(x, dtype=np.float64) - self.targets) / self.num_examples

    def value(self, x):
        r = self.features @ np.asarray(x, dtype=np.float64) - self.targets
        return float(r @ r) / (2.0 * self.num_examples)


def encode(obj):
    """JSON-able form: arrays -> lists, integer-keyed mappings -> string keys."""
    if isinstance(obj, dict):
        return {str(k): encode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [encode(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def decode(obj):
    """Inverse of :func:`encode` for mappings (all-digit keys back to int); lists of integers -> int64 arrays,
    other lists of numbers -> float64 arrays (JSON keeps 0.0 a float)."""
    if isinstance(obj, dict):
        ints = bool(obj) and all(isinstance(k, str) and k.lstrip("-").isdigit() for k in obj)
        return {(int(k) if ints else k): decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        if obj and all(isinstance(v, int) and not isinstance(v, bool) for v in obj):
            return np.asarray(obj, dtype=np.int64)  # indices (e.g. minibatch rows)
        if obj and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in obj):
            return np.asarray(obj, dtype=np.float64)
        return [decode(v) for v in obj]
    return obj


def serve(impl, stdin=sys.stdin, stdout=sys.stdout) -> None:
    clients: dict = {}
    for line in stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            if req.get("op") == "quit":
                break
            for c in req["clients"]:
                if "features" in c:
                    clients[c["key"]] = Client(c["cid"], c["features"], c["targets"])
            here = [clients[c["key"]] for c in req["clients"]]
            hyper = decode(req.get("hyper") or {})
            state = decode(req["state"]) if req.get("state") is not None else None
            with contextlib.redirect_stdout(sys.stderr):
                out = impl(np.asarray(req["x"], dtype=np.float64), here, state=state,
                           rng=np.random.default_rng(int(req["seed"])), **hyper)
            returned = isinstance(out, tuple)
            x_new, new_state = out[:2] if returned else (out, None)
            reply = {"x": encode(np.asarray(x_new, dtype=np.float64).reshape(-1)), "state": encode(new_state),
                     "returned_state": returned}
            if returned and len(out) == 3:
                reply["report"] = encode(out[2])
        except Exception as exc:  # noqa: BLE001 -- report anything the implementation raises to the kit
            where = traceback.extract_tb(exc.__traceback__)[-1]
            reply = {"error": f"{type(exc).__name__}: {exc} ({where.filename.rsplit('/', 1)[-1]}:{where.lineno})"}
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()


def load(module: str):
    """The module ``package.module``, or the file ``path/to/driver.py`` loaded by path (see the docstring)."""
    if not module.endswith(".py"):
        return importlib.import_module(module)
    path = Path(module).resolve()
    if not path.is_file():
        sys.exit(f"remote_worker.py: no driver file {path}")
    spec = importlib.util.spec_from_file_location(f"driver_{path.stem}", path)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded
    spec.loader.exec_module(loaded)
    return loaded


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or ":" not in argv[0]:
        sys.exit("usage: remote_worker.py package.module:factory  or  remote_worker.py path/to/driver.py:factory")
    module, _, attr = argv[0].rpartition(":")
    impl = getattr(load(module), attr)()
    serve(impl)


if __name__ == "__main__":
    main()
