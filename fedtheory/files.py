"""Atomic file writes: a reader (or a resumed run) sees the old file or the complete new one, never a part.

Every writer goes through :func:`write_atomic`: write to a unique temporary name in the same folder, make it
world-readable (``mkstemp`` creates 0600; catalogue files and sweep results are meant to be shared), then
``os.replace`` it onto the target, which is atomic on POSIX and Windows. A failed write removes the temporary.
Used by the catalogue (certificates, arrays) and the benchmark sweeps (cells, tables, reports).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable


def write_atomic(path: str | os.PathLike, write: Callable[[str], None]) -> None:
    """Call ``write(tmp)`` to fill a temporary file beside ``path``, then rename it onto ``path``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`write_atomic`)."""
    write_atomic(path, lambda tmp: Path(tmp).write_bytes(data))


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`write_atomic`)."""
    write_bytes_atomic(path, text.encode())
