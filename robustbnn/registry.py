"""A named registry: one per extension point (models, datasets, attacks, measures).

Names come from the dictionary itself, never from a hand-typed list, so the error for an
unknown name and ``names()`` can never drift from what is registered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
