"""The one escaping function: every string from data or config that reaches Markdown or HTML.

Model, dataset, measure and task names come from plug-ins and results files, and config values
from ``run.json``; none of them may add markup to a report. :func:`escape` writes a string as
literal text in one of three places:

* ``"markdown"``: inline Markdown text (a table cell, a legend item, a heading). Characters
  that could start markup are backslash-escaped (``\\ ` * [ ] | # ~ $``, ``_`` unless inside a
  word, where CommonMark ignores it), ``< > &`` become entities, and the openings of GitHub's
  bare-URL links (``://``, ``www.``, ``x@y``) are broken with a backslash. No link, image,
  emphasis, code span or raw HTML can start inside the text, and a name like
  ``expected_entropy`` stays readable in the file.
* ``"code"``: a whole Markdown code span (backticks included), fenced with more backticks than
  the text holds, so its content is shown exactly and nothing ends the span early.
* ``"html"``: HTML text or an attribute value (:func:`html.escape`, quotes included).

In every place, characters that cannot be shown or that reorder text (controls such as NUL,
lone surrogates, bidirectional marks such as U+202E, zero-width format characters, line and
paragraph separators) are written visibly as ``\\uXXXX``, newlines and tabs as spaces: a name
prints as what it is, on one line, and always encodes as UTF-8.

Example:
    >>> escape("![t](https://evil.example/t.png)")
    '!\\\\[t\\\\](https\\\\://evil.example/t.png)'
    >>> escape("a`b", to="code")
    '``a`b``'
    >>> escape("<b>&", to="html")
    '&lt;b&gt;&amp;'
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Literal

__all__ = ["escape", "visible"]

# Backslash-escaped wherever they appear (CommonMark lets any ASCII punctuation be escaped).
_ALWAYS = frozenset("\\`*[]|#~$")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_EMAIL_LOCAL = re.compile(r"[A-Za-z0-9._+-]")
_WWW = re.compile(r"(?i)(?<![A-Za-z0-9])www$")


def _hidden(char: str) -> bool:
    """Whether ``char`` is invisible or reorders text (controls, format, surrogates, Zl/Zp)."""
    return unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp")


def visible(text: object) -> str:
    r"""``text`` as a string on one line whose odd characters are written as ``\uXXXX``.

    Example:
        >>> visible("a\x00b\u202ec\nd")
        'a\\u0000b\\u202ec d'
    """
    text = str(text).replace("\r\n", " ")
    return "".join(" " if c in "\n\r\t" else f"\\u{ord(c):04x}" if _hidden(c) else c
                   for c in text)


def _markdown(text: str) -> str:
    out = []
    for i, char in enumerate(text):
        before, after = text[i - 1] if i else "", text[i + 1:i + 2]
        if char in _ALWAYS:
            out.append("\\" + char)
        elif char in _ENTITIES:
            out.append(_ENTITIES[char])
        elif char == "_":  # inert only between two word characters (CommonMark flanking)
            out.append("_" if before.isalnum() and after.isalnum() else "\\_")
        elif (char == ":" and text.startswith("//", i + 1)
              or char == "." and _WWW.search(text, 0, i)
              or char == "@" and before and _EMAIL_LOCAL.match(before)):
            out.append("\\" + char)  # GitHub's extended autolinks (https://, www., a@b.c)
        else:
            out.append(char)
    return "".join(out)


def _code(text: str) -> str:
    if not text:
        return "` `"
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    # A reader strips one space from each end of a span that has both and is not all spaces.
    pad = " " if text.strip(" ") and (text[0] in "` " or text[-1] in "` ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def escape(text: object, *, to: Literal["markdown", "code", "html"] = "markdown") -> str:
    r"""``text`` (a string from data or config) as literal text for a Markdown or HTML report.

    Args:
        text: The string (anything else is converted with ``str``).
        to: ``"markdown"`` (inline text), ``"code"`` (a complete code span, backticks
            included) or ``"html"`` (text or a quoted attribute value).

    Returns:
        The escaped text; see the module docstring for what each place escapes.

    Example:
        >>> escape("_x_ <y> *z*")
        '\\_x\\_ &lt;y&gt; \\*z\\*'
        >>> escape("expected_entropy")
        'expected_entropy'
    """
    text = visible(text)
    if to == "markdown":
        return _markdown(text)
    if to == "code":
        return _code(text)
    if to == "html":
        return html.escape(text, quote=True)
    raise ValueError(f"escape(to={to!r}): expected 'markdown', 'code' or 'html'")
