"""Render Markdown as a CommonMark reader does (markdown-it-py) and list what it made of it."""

from __future__ import annotations

from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

# CommonMark plus GitHub's tables: the dialect of the reports.
PARSER = MarkdownIt("commonmark").enable("table")
# What a string from data must never become.
MARKUP = ("link_open", "image", "html_inline", "html_block", "em_open", "strong_open",
          "code_inline", "heading_open", "bullet_list_open", "ordered_list_open",
          "blockquote_open", "fence", "code_block", "hr", "table_open")


def tokens(markdown: str) -> Iterator[Token]:
    """Every token of ``markdown``, inline children included, in document order."""
    def walk(items: list[Token]) -> Iterator[Token]:
        for token in items:
            yield token
            yield from walk(token.children or [])

    yield from walk(PARSER.parse(markdown))


def links(markdown: str) -> list[str]:
    """The links, images and raw HTML that ``markdown`` renders as (empty: none)."""
    return [f"{t.type} {t.attrs or t.content!r}" for t in tokens(markdown)
            if t.type in ("link_open", "image", "html_inline", "html_block")]


def text(markdown: str) -> str:
    """The text a reader sees: text and code of ``markdown``'s inline content, joined."""
    return "".join(t.content for t in tokens(markdown) if t.type in ("text", "code_inline"))
