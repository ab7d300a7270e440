"""A named registry: one per extension point (models, datasets, attacks, measures).

Names come from the dictionary itself, never from a hand-typed list, so the error for an
unknown name and ``names()`` can never drift from what is registered. Tests (the project's and
plug-in authors') register for a ``with`` block only: :meth:`Registry.temporary` for one
entry, :meth:`Registry.sandbox` for whatever a plug-in registers on import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

from robustbnn.errors import UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """An ordered mapping from stable snake_case names to objects.

    Args:
        kind: What the registry holds ("model", "dataset", ...), used in error messages.

    Example:
        >>> R = Registry[int]("number")
        >>> R.register("one", 1)
        1
        >>> R.get("one"), R.names()
        (1, ['one'])
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str, obj: T | None = None) -> T | Callable[[T], T]:
        """Register ``obj`` under ``name``; without ``obj``, return a decorator.

        Raises:
            ValueError: If ``name`` is already registered.
        """
        if obj is None:
            return lambda o: self.register(name, o)  # type: ignore[return-value]
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = obj
        return obj

    @contextmanager
    def temporary(self, name: str, obj: T, *, replace: bool = False) -> Iterator[T]:
        """Register ``obj`` under ``name`` for the ``with`` block only (for tests).

        When the block exits, also when it raises, the name is gone again, or, with
        ``replace=True``, holds the entry it held before.

        Args:
            name: The name.
            obj: What to register.
            replace: Stand in for the entry registered under ``name`` (a test's variant of a
                model); without it a taken name is refused.

        Raises:
            ValueError: If ``name`` is already registered and ``replace`` is False, as
                :meth:`register`.

        Example:
            >>> R = Registry[int]("number")
            >>> with R.temporary("two", 2):
            ...     R.get("two")
            2
            >>> "two" in R
            False
        """
        replaced = replace and name in self._items
        before = self._items.get(name)
        if replaced:
            self._items[name] = obj
        else:
            self.register(name, obj)
        try:
            yield obj
        finally:
            if replaced:
                self._items[name] = before
            else:
                self._items.pop(name, None)

    @contextmanager
    def sandbox(self) -> Iterator[Registry[T]]:
        """Undo every registration made inside the ``with`` block when it exits, also on error.

        For tests that load plug-ins, which register on import: the registry holds exactly
        what it held before the block, in the same order.

        Example:
            >>> R = Registry[int]("number")
            >>> with R.sandbox():
            ...     _ = R.register("three", 3)
            >>> R.names()
            []
        """
        saved = dict(self._items)
        try:
            yield self
        finally:
            self._items.clear()
            self._items.update(saved)

    def get(self, name: str) -> T:
        """Return the object registered under ``name``.

        Raises:
            UnknownNameError: Naming the unknown name and listing the known ones.
        """
        try:
            return self._items[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self.names()) from None

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._items)

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
