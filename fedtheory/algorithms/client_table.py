"""Per-client state that costs what participates: a persistent (n, d) table with O(S d) row updates.

Stateful algorithms (SCAFFOLD's control variates c_i, FedDyn's gradient states g_i) keep one vector per client,
and a round with S participants changes S of the n rows. fedtheory's states are immutable (``round`` returns a
new state and the old one stays valid: ``outcomes`` enumerates every draw from the same state, claims compare
consecutive states), so the obvious implementation copies the (n, d) table every round -- an O(n d) pass that
dominates a cross-device round (n = 10^6, S = 10^3: 800 MB copied to change 800 kB).

:class:`ClientTable` keeps the semantics of an immutable array at O(S d) per update, with the rerooting
persistent array of Baker (1991) as used by Conchon & Filliatre (2007, "A persistent union-find data
structure"): one shared buffer holds the rows of the most recently used version; every other version is a
chain of diffs (rows, old values) leading to it. ``with_rows(idx, V)`` on the current version writes V into
the buffer and turns the old version into a diff holding the S overwritten rows; reading an older version
first "reroots" (applies the diffs back, O(S d) per diff crossed, turning them around), so any version can be
read at any time and always shows the values it was created with. Used linearly (each round continues from
the last state), every update and read is O(S d); old versions that nobody references are garbage collected
with their diffs.

Reads go through :meth:`rows` (a copy of the listed rows) or any NumPy operation: ``np.asarray(table)``,
``table[i]``, ``table - X``, ``w @ table`` all see a materialised copy (O(n d), for analysis and tests), so
code written for the plain ``(n, d)`` arrays the states held before keeps working unchanged. Not thread-safe
(a read may reroot): share a table between threads only read-only and after materialising it.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

__all__ = ["ClientTable", "TableDraft", "as_table"]


class _Node:
    """Either the current version (``data`` is the shared buffer) or a diff: ``rows``/``values`` to write into
    the buffer reached through ``next`` to obtain this version."""

    __slots__ = ("data", "rows", "values", "next")

    def __init__(self, data: np.ndarray | None = None) -> None:
        self.data = data
        self.rows: np.ndarray | None = None
        self.values: np.ndarray | None = None
        self.next: _Node | None = None


def _reroot(node: _Node) -> np.ndarray:
    """Make ``node`` the current version (iteratively: a long chain must not hit the recursion limit)."""
    if node.data is not None:
        return node.data
    path = []
    cur = node
    while cur.data is None:
        path.append(cur)
        cur = cur.next  # type: ignore[assignment]
    data = cur.data
    # Walk back from the current version towards ``node``, reversing each diff as it is applied.
    for diff in reversed(path):
        target = cur
        rows, values = diff.rows, diff.values
        old = data[rows]  # fancy indexing: a copy of the rows about to be overwritten
        data[rows] = values
        target.data, target.rows, target.values, target.next = None, rows, old, diff
        diff.data, diff.rows, diff.values, diff.next = data, None, None, None
        cur = diff
    return data


class ClientTable(NDArrayOperatorsMixin):
    """An immutable ``(n, d)`` float64 array whose row updates cost O(rows d) (see the module docstring)."""

    __slots__ = ("_node", "shape", "__weakref__")
    dtype = np.dtype(np.float64)
    ndim = 2

    def __init__(self, node: _Node, shape: tuple[int, int]) -> None:
        self._node = node
        self.shape = shape

    @classmethod
    def from_array(cls, array: np.ndarray, *, copy: bool = True) -> "ClientTable":
        """A table holding ``array`` (copied unless ``copy=False`` hands over a buffer nobody else writes)."""
        arr = np.array(array, dtype=np.float64, copy=copy)
        if arr.ndim != 2:
            raise ValueError(f"a client table has shape (n, d), got {arr.shape}")
        if not copy:
            arr = np.ascontiguousarray(arr)
        return cls(_Node(arr), (int(arr.shape[0]), int(arr.shape[1])))

    @classmethod
    def zeros(cls, n: int, d: int) -> "ClientTable":
        return cls(_Node(np.zeros((n, d))), (n, d))

    # ----- the O(S d) interface used by the algorithms -----
    def rows(self, idx: np.ndarray) -> np.ndarray:
        """A copy of the rows ``idx`` (O(len(idx) d) when this is the current version)."""
        return _reroot(self._node)[idx]

    def with_rows(self, idx: np.ndarray, values: np.ndarray) -> "ClientTable":
        """A new version equal to this one except rows ``idx`` = ``values``; this version stays readable.

        ``idx`` must not repeat a row (the algorithms pass sorted participant sets).
        """
        data = _reroot(self._node)
        idx = np.asarray(idx, dtype=np.int64)
        values = np.broadcast_to(np.asarray(values, dtype=np.float64), (idx.size, self.shape[1]))
        old = data[idx]
        data[idx] = values
        new = _Node(data)
        node = self._node
        node.data, node.rows, node.values, node.next = None, idx, old, new
        return ClientTable(new, self.shape)

    def draft(self) -> "TableDraft":
        """A writable draft: ``draft[idx] = V`` records row updates (each O(len(idx) d)), ``draft.commit()``
        returns the new version. For update code written as ``C = C.copy(); C[S] = V`` on plain arrays."""
        return TableDraft(self)

    def peek(self) -> np.ndarray:
        """A read-only view of this version's rows, valid only until the next update of any version."""
        view = _reroot(self._node).view()
        view.setflags(write=False)
        return view

    def to_array(self) -> np.ndarray:
        """A materialised copy, O(n d)."""
        return _reroot(self._node).copy()

    # ----- array protocol: every other use sees a copy (O(n d); analysis, tests, pickling) -----
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = self.to_array()
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        inputs = tuple(x.to_array() if isinstance(x, ClientTable) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(x.to_array() if isinstance(x, ClientTable) else x for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __getitem__(self, key: Any) -> Any:
        return np.array(_reroot(self._node)[key])  # a copy: a view would change with later versions

    def __len__(self) -> int:
        return self.shape[0]

    def __iter__(self):
        return iter(self.to_array())

    @property
    def size(self) -> int:
        return self.shape[0] * self.shape[1]

    @property
    def T(self) -> np.ndarray:
        return self.to_array().T

    def copy(self) -> np.ndarray:
        return self.to_array()

    def __getattr__(self, name: str) -> Any:
        # Any other ndarray attribute or method (max, sum, tolist, ...) on a materialised copy.
        if name.startswith("__") or name in ("_node", "shape"):
            raise AttributeError(name)
        return getattr(self.to_array(), name)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_table_from_array, (self.to_array(),))

    def __repr__(self) -> str:
        return f"ClientTable(shape={self.shape})"


class TableDraft:
    """Row assignments to a :class:`ClientTable`, applied as new versions (see :meth:`ClientTable.draft`)."""

    __slots__ = ("_table",)

    def __init__(self, table: ClientTable) -> None:
        self._table = table

    def __setitem__(self, idx: Any, values: Any) -> None:
        if isinstance(idx, np.ndarray) and idx.ndim == 1 and idx.dtype.kind in "iu":
            rows = idx  # the usual case, participant ids: no O(n) pass
        else:
            rows = np.arange(self._table.shape[0])[idx]  # a mask or slice, as row ids
        self._table = self._table.with_rows(np.atleast_1d(rows), values)

    def commit(self) -> ClientTable:
        return self._table


def _table_from_array(array: np.ndarray) -> ClientTable:
    return ClientTable.from_array(array, copy=False)


def as_table(value: Any) -> ClientTable:
    """``value`` as a :class:`ClientTable` (an ndarray given by a caller is copied once, O(n d))."""
    if isinstance(value, ClientTable):
        return value
    return ClientTable.from_array(np.asarray(value, dtype=np.float64))
