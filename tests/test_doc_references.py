"""Every reference the code makes to a docs page lands on a page and section that exist.

The code cites the protocols, pitfalls and provenance pages by section ("docs/protocols.md
§1.5"). These tests read the repository's text files and check each cited page exists under
``docs/`` and each cited section is a numbered heading on it (``### 1.5 ...``), and that no
reference to the old files outside the repository is left.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# Where the code, tests, recipes, examples and scripts live; README.md and docs/ are read too.
SCANNED = ("robustbnn", "tests", "datasets", "examples", "scripts", "benchmarks", ".ci")
SCANNED_FILES = ("pyproject.toml", "README.md")
SKIPPED_SUFFIXES = (".pyc", ".png", ".svg", ".gz", ".zip", ".npz", ".pt", ".jpg")

_SECTION = r"§\s?\d+(?:\.\d+)?(?:\s?[-–]\s?\d+(?:\.\d+)?)?"
# A section list after a page: "§1.5", "§1.5-1.6", "§1.1–1.3", "§1.3, §1.6", "§1.4 and §3.4";
# the page and its first section may be split over a line break of a comment.
_SECTIONS = rf"((?:[\s#,;]*(?:and\s+)?{_SECTION})+)"
# docs/<page>.md anywhere; in Markdown also a relative link, "[Pitfalls](pitfalls.md) §1.1".
_CODE_CITE = re.compile(rf"(docs/[\w-]+\.md){_SECTIONS}")
_LINK_CITE = re.compile(rf"\]\(([\w./-]+\.md)(?:#[\w-]*)?\){_SECTIONS}")
_ONE_SECTION = re.compile(r"§\s?(\d+(?:\.\d+)?)(?:\s?[-–]\s?(\d+(?:\.\d+)?))?")
_HEADING = re.compile(r"^#{1,6}\s+(\d+(?:\.\d+)*)\.?\s", re.MULTILINE)
# The files the code used to cite, which lived outside the repository.
_OLD = re.compile(r"\b(PROTOCOLS|PITFALLS|PROVENANCE)(\.md|\s§)")


def _texts() -> dict[Path, str]:
    """Every readable text file scanned, by path."""
    paths = [p for d in SCANNED for p in (ROOT / d).rglob("*") if p.is_file()]
    paths += [ROOT / f for f in SCANNED_FILES if (ROOT / f).is_file()]
    paths += sorted(DOCS.rglob("*.md"))
    out = {}
    for path in paths:
        if ("__pycache__" in path.parts or path.suffix in SKIPPED_SUFFIXES
                or path == Path(__file__).resolve()):  # this file plants broken examples
            continue
        try:
            out[path] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
    return out


def citations(text: str, *, markdown: bool) -> list[tuple[str, list[str]]]:
    """The pages a text cites by section and the sections it names, in order of appearance.

    Args:
        text: The text of one file.
        markdown: Also read relative Markdown links (``[x](page.md) §1.2``).

    Returns:
        ``(page, sections)`` pairs: the page as written (``docs/protocols.md``, or a link's
        relative ``pitfalls.md``) and the section ids cited after it (both ends of a range
        such as ``§1.5-1.6``).
    """
    found = []
    for pattern in (_CODE_CITE, _LINK_CITE) if markdown else (_CODE_CITE,):
        for m in pattern.finditer(text):
            sections = [s for pair in _ONE_SECTION.findall(m.group(2)) for s in pair if s]
            found.append((m.group(1), sections))
    return found


def headings(page: Path) -> set[str]:
    """The numbered section ids of a docs page: ``## 1.`` gives "1", ``### 1.5 x`` "1.5"."""
    return set(_HEADING.findall(page.read_text(encoding="utf-8")))


def broken_citations(texts: dict[Path, str]) -> list[str]:
    """Each citation of a missing page or a missing section, as "file: page ..."."""
    broken = []
    for path, text in texts.items():
        # docs/<page>.md is relative to the repository; a link, to the page that holds it.
        for page, sections in citations(text, markdown=DOCS in path.parents):
            target = (ROOT if page.startswith("docs/") else path.parent) / page
            where = f"{path.relative_to(ROOT)}: {page}"
            if not target.is_file():
                broken.append(f"{where} does not exist")
                continue
            broken += [f"{where} has no section §{s}" for s in sections
                       if s not in headings(target)]
    return broken


def test_every_cited_docs_page_and_section_exists() -> None:
    texts = _texts()
    cited = {page for text in texts.values() for page, _ in citations(text, markdown=False)}
    assert {"docs/protocols.md", "docs/pitfalls.md"} <= cited
    assert broken_citations(texts) == []
    # A page the package names without a section (docs/provenance.md) must exist too.
    named = {m for path, text in texts.items() if (ROOT / "robustbnn") in path.parents
             for m in re.findall(r"docs/[\w-]+\.md", text)}
    assert "docs/provenance.md" in named
    assert sorted(m for m in named if not (ROOT / m).is_file()) == []


def test_no_reference_to_the_old_outside_files_is_left() -> None:
    left = [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
            for path, text in _texts().items() for m in _OLD.finditer(text)]
    assert left == []


def test_a_wrong_section_or_page_is_reported() -> None:
    planted = {
        ROOT / "robustbnn" / "planted.py":
            "# see docs/protocols.md §1.5-1.9 and docs/pitfalls.md §1.1, §9.9\n"
            "# and docs/no_such_page.md §1; docs/provenance.md has no sections\n",
    }
    assert broken_citations(planted) == [
        "robustbnn/planted.py: docs/protocols.md has no section §1.9",
        "robustbnn/planted.py: docs/pitfalls.md has no section §9.9",
        "robustbnn/planted.py: docs/no_such_page.md does not exist",
    ]


def test_citations_read_ranges_lists_and_line_breaks() -> None:
    text = ("(docs/protocols.md §1.1–1.3; x) docs/pitfalls.md §1.4 and §3.4\n"
            "# costs more (docs/protocols.md\n# §8.6). [P](pitfalls.md) §1.10")
    assert citations(text, markdown=True) == [
        ("docs/protocols.md", ["1.1", "1.3"]), ("docs/pitfalls.md", ["1.4", "3.4"]),
        ("docs/protocols.md", ["8.6"]), ("pitfalls.md", ["1.10"]),
    ]
    assert {"1", "1.5", "8.6"} <= headings(DOCS / "protocols.md")
