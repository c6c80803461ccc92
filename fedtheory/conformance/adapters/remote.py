"""Check an implementation that runs in another process (another virtual environment) through JSON lines.

    from fedtheory.conformance.adapters.remote import Remote
    with Remote(["/fedlab-venv/bin/python", Remote.WORKER, "my_pkg.impls:fedavg"]) as impl:
        report = conformance.check(impl, "fedavg")

The worker (:mod:`fedtheory.conformance.remote_worker`, a stand-alone file needing only NumPy) loads
``factory()`` in its own interpreter and answers one request per line; the protocol is documented there and in
docs/conformance.md. The process is started once and kept for every round of the check; client data are sent
once per client (keyed by a hash of its data). The state crosses the boundary as JSON: the state-reading
properties apply when the remote state is the contract's mapping (integer client ids come back as integers).
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..remote_worker import decode, encode

__all__ = ["Remote", "RemoteError"]


class RemoteError(RuntimeError):
    """The worker reported an exception, or died."""


def _key(c: Any) -> str:
    h = hashlib.sha1(np.ascontiguousarray(c.features).tobytes())
    h.update(np.ascontiguousarray(c.targets).tobytes())
    return f"{c.cid}:{h.hexdigest()}"


class Remote:
    """A contract implementation whose rounds run in a subprocess speaking the JSON-lines protocol."""

    WORKER = str(Path(__file__).resolve().parents[1] / "remote_worker.py")

    def __init__(self, command: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                 name: str | None = None) -> None:
        self.command = list(command)
        self.env = None if env is None else {**os.environ, **env}
        self.cwd = cwd
        self.__qualname__ = name or f"remote:{self.command[-1]}"
        self._proc: subprocess.Popen | None = None
        self._sent: set[str] = set()

    def _start(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            # stderr to a file, not a pipe: a chatty implementation cannot fill a pipe and block the worker
            self._err = tempfile.TemporaryFile(mode="w+")
            self._proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=self._err, text=True, env=self.env, cwd=self.cwd, bufsize=1)
            self._sent = set()
        return self._proc

    def __call__(self, x, clients, *, state=None, rng=None, **hyper):
        proc = self._start()
        payload = []
        for c in clients:
            key = _key(c)
            item = {"key": key, "cid": int(c.cid)}
            if key not in self._sent:
                item.update(features=c.features.tolist(), targets=c.targets.tolist())
            payload.append(item)
        seed = int((rng if rng is not None else np.random.default_rng(0)).integers(0, 2**63 - 1))
        req = {"op": "round", "x": np.asarray(x, dtype=np.float64).tolist(), "clients": payload,
               "state": encode(state), "hyper": encode(hyper), "seed": seed}
        try:
            proc.stdin.write(json.dumps(req) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            proc.wait(timeout=10)
            self._err.seek(0)
            err = self._err.read()
            raise RemoteError(f"the worker exited ({proc.poll()}): {err.strip()[-2000:]}")
        self._sent.update(item["key"] for item in payload)
        reply = json.loads(line)
        if "error" in reply:
            raise RemoteError(f"remote implementation raised {reply['error']}")
        x_new = np.asarray(reply["x"], dtype=np.float64)
        state = decode(reply["state"]) if reply.get("state") is not None else None
        if "report" in reply:  # the round drew its own participants (contract.py, sampling protocol)
            return x_new, state, decode(reply["report"])
        if reply.get("returned_state"):
            return x_new, state
        return x_new

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self._proc.stdin.flush()
                self._proc.wait(timeout=10)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def __enter__(self) -> "Remote":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover -- best effort at interpreter exit
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass
