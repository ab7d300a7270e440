"""A griffe extension for the API reference: read robustbnn's docstrings as they are written.

* robustbnn heads its doctests ``Example:`` (the house style); griffe's Google parser knows
  only ``Examples:`` and would render the doctest as Markdown prose.
* Cross-references are written as Sphinx roles (``:func:`~robustbnn.x.f```), which Markdown
  prints verbatim; the role is dropped and the name kept as code (``~`` keeps its last part).

Loaded by ``mkdocs.yml`` (mkdocstrings, ``extensions``); the docstrings stay as they are.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:[ \t]*$", re.M)
_ROLE = re.compile(r":(?:mod|class|func|meth|data|attr|exc|obj|const):`(~?)([^`]+)`")


def _name(match: re.Match[str]) -> str:
    """The code span a Sphinx role stands for."""
    tilde, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"


class ExampleSections(griffe.Extension):
    """Rename ``Example:`` section headers to ``Examples:`` and drop Sphinx roles."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        """Rewrite ``obj``'s docstring before griffe parses it."""
        if obj.docstring is not None:
            text = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
            obj.docstring.value = _ROLE.sub(_name, text)
