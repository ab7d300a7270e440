"""Adversarial names through the one escaping function, read back by a CommonMark renderer.

Wherever a report puts a string from data (a table cell, a legend sentence, a heading, a list
item, a code span), the rendered Markdown holds no link, image, raw HTML or other markup made
from it, and shows exactly the string (with odd characters written as ``\\uXXXX``).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from robustbnn.report.escape import escape, visible
from robustbnn.report.markdown import md_table
from tests.report._commonmark import MARKUP, links, text, tokens

# Pieces of Markdown, HTML and GitHub syntax, and characters that break lines or reorder text.
PIECES = ("[", "]", "(", ")", "!", "<", ">", "`", "``", "*", "**", "_", "__", "\\", "&", ";",
          "&amp;", "&#91;", "&lt;", "#", "~~", "$", "|", ":", "@", ".", "-", "+", "=", " ",
          "  ", "\n", "\r", "\t", "\x00", "\u202e", "\u200f", "\u2028", "\ud800", "\ufeff",
          "http://", "https://evil.example/t.png", "www.", "mailto:", "a@b.co", "javascript:",
          "<img src=x onerror=alert(1)>", "<https://e.x>", "[x]: http://e.x", "![t](u)",
          "[t](u \"t\")", "[t][r]", "<!--", "-->", "<script>", "1.", "> ", "    ", "---", "===")
names = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=4)),
                 min_size=1, max_size=12).map("".join)


def _markup(markdown: str, *, allowed: tuple[str, ...] = ()) -> list[str]:
    """The markup tokens of ``markdown`` beyond those of the template (``allowed``)."""
    return [t.type for t in tokens(markdown) if t.type in MARKUP and t.type not in allowed]


@settings(max_examples=200)
@given(name=names)
def test_a_name_is_text_wherever_a_report_puts_it(name: str) -> None:
    shown = visible(name)
    sentence = f"x {escape(name)} y"  # a legend sentence: exactly the name, between words
    assert _markup(sentence) == [] and links(sentence) == []
    assert text(sentence) == f"x {shown} y"
    bold = f"* **{escape(name)}.** Sets ['{escape(name)}'], on {escape(name)} points"
    assert _markup(bold, allowed=("bullet_list_open", "strong_open")) == []
    assert [t.type for t in tokens(bold)].count("strong_open") <= 1 and links(bold) == []
    code = f"objective {escape(name, to='code')} and more"
    assert _markup(code, allowed=("code_inline",)) == [] and links(code) == []
    assert [t.content for t in tokens(code) if t.type == "code_inline"] == [shown or " "]
    heading = f"### {escape(name)}\n"
    assert _markup(heading, allowed=("heading_open",)) == [] and links(heading) == []
    table = md_table(["model", "value"], [[name, "0.5000"]])  # md_table escapes every cell
    assert _markup(table, allowed=("table_open",)) == [] and links(table) == []
    cells = [t.content for t in tokens(table) if t.type == "inline"]
    assert len(cells) == 4 and text(table) == f"modelvalue{shown.strip()}0.5000"
