"""The front door stays small and its links hold: the README's size and links, the site's nav.

The site itself is built with warnings as errors by ``.ci/run`` (``mkdocs build --strict``,
which needs the docs extra); these checks need nothing but the files.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README_LIMIT = 12 * 1024  # bytes: a README read in five minutes (issue 30)
# CommonMark plus GitHub's tables: how GitHub reads the README.
PARSER = MarkdownIt("commonmark").enable("table")


def _hrefs(markdown: str) -> list[str]:
    """Every link and image target of ``markdown``, in document order."""
    found = []
    for block in PARSER.parse(markdown):
        for token in block.children or []:
            if token.type == "link_open":
                found.append(str(token.attrs["href"]))
            elif token.type == "image":
                found.append(str(token.attrs["src"]))
    return found


def _github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading (lower case, punctuation dropped)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    """The heading anchors of a Markdown page, outside fenced code."""
    anchors, fenced = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+)", line)):
            anchors.add(_github_slug(m.group(1)))
    return anchors


def _nav_pages(mkdocs_yml: str) -> set[str]:
    """The pages named in mkdocs.yml's ``nav`` (paths relative to docs/)."""
    nav = mkdocs_yml[mkdocs_yml.index("\nnav:"):]
    return set(re.findall(r"^\s+- (?:[^:\n]+: )?([\w/.-]+\.md)\s*$", nav, re.M))


def _doc_pages() -> set[str]:
    """Every Markdown page mkdocs builds (docs/_ext is excluded in mkdocs.yml)."""
    return {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")
            if not p.relative_to(DOCS).as_posix().startswith("_ext/")}


def test_readme_is_at_most_12_kib() -> None:
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size:,} bytes; move detail into docs/"


def test_every_docs_page_is_in_the_nav_and_every_nav_page_exists() -> None:
    nav, pages = _nav_pages((ROOT / "mkdocs.yml").read_text()), _doc_pages()
    assert pages - nav == set(), "pages missing from mkdocs.yml's nav"
    assert nav - pages == set(), "nav entries without a page"


def test_every_relative_readme_link_resolves_to_a_file_and_heading() -> None:
    broken = []
    for href in _hrefs((ROOT / "README.md").read_text()):
        parts = urlsplit(href)
        if parts.scheme or parts.netloc:
            continue
        target = (ROOT / unquote(parts.path)).resolve() if parts.path else ROOT / "README.md"
        if not target.is_file() or ROOT not in target.parents:
            broken.append(f"{href}: no such file")
        elif parts.fragment and parts.fragment not in _anchors(target):
            broken.append(f"{href}: no heading with that anchor")
    assert broken == []


def test_the_checks_catch_a_missing_page_and_a_broken_link() -> None:
    yml = "site_name: x\nnav:\n  - Home: index.md\n  - API:\n      - api/index.md\n"
    assert _nav_pages(yml) == {"index.md", "api/index.md"}
    assert _hrefs("[a](docs/nope.md) ![b](x.png) [c](https://e.org)") == [
        "docs/nope.md", "x.png", "https://e.org"]
    assert _github_slug("Checking a model: `robustbnn check`") == (
        "checking-a-model-robustbnn-check")
