"""The leaderboard as one self-contained HTML file: inline CSS and JS, no network needed.

Every string that reaches the page (model names from plug-ins, measure names, titles) goes
through :func:`robustbnn.report.escape.escape`; the legend, Markdown whose data parts that
function escaped, is turned into HTML by :func:`_inline_md`. Clicking a column header sorts
the rows by it, best first (the direction of ``HIGHER_IS_BETTER``); a second click reverses.
"""

from __future__ import annotations

import html
import math
import re

from robustbnn.report.escape import escape
from robustbnn.report.figures import HEADLINE
from robustbnn.report.leaderboard import Leaderboard, format_cell, tidy, with_nan_note

__all__ = ["to_html"]

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; font-size: 14px; }
th, td { border: 1px solid #ccc; padding: 4px 8px; }
th { background: #f0f0f0; cursor: pointer; user-select: none; }
th.sorted { background: #dde8ff; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
.legend li { margin: 0.3em 0; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 12px; color: #666; }
"""

# Sort rows by the clicked column: numbers by data-value in the column's better-first
# direction (data-higher), text A to Z; missing values always last; ties keep model order.
JS = """
(function () {
  var table = document.getElementById("leaderboard");
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;
  var current = null, flipped = false;
  function key(row, i) { return row.cells[i].getAttribute("data-value"); }
  function sortBy(i) {
    var th = heads[i];
    flipped = (current === i) ? !flipped : false;
    current = i;
    var numeric = th.getAttribute("data-kind") === "number";
    var sign = (numeric && th.getAttribute("data-higher") === "true") ? -1 : 1;
    if (flipped) { sign = -sign; }
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (r, n) { r.setAttribute("data-pos", n); });
    rows.sort(function (a, b) {
      var x = key(a, i), y = key(b, i), c;
      if (x === "" && y === "") { c = 0; }
      else if (x === "") { return 1; }
      else if (y === "") { return -1; }
      else if (numeric) { c = sign * (parseFloat(x) - parseFloat(y)); }
      else { c = sign * (x < y ? -1 : (x > y ? 1 : 0)); }
      return c || (a.getAttribute("data-pos") - b.getAttribute("data-pos"));
    });
    rows.forEach(function (r) { body.appendChild(r); });
    for (var j = 0; j < heads.length; j++) { heads[j].classList.toggle("sorted", j === i); }
    document.getElementById("order").textContent = "Sorted by " + th.textContent +
      (flipped ? " (worst first)." : (numeric ? " (best first)." : " (A to Z)."));
  }
  for (var i = 0; i < heads.length; i++) {
    heads[i].addEventListener("click", sortBy.bind(null, i));
  }
})();
"""


def _e(text: object) -> str:
    return escape(text, to="html")


# A legend item's Markdown: a backslash escape, a code span (its fence), bold, or other text.
_TOKEN = re.compile(r"\\(?P<escaped>[!-/:-@\[-`{-~])|(?P<fence>`+)|(?P<bold>\*\*)"
                    r"|(?P<text>[^\\`*]+|.)", re.S)


def _inline_md(text: str) -> str:
    """A legend item (Markdown written by :mod:`robustbnn.report.legend`) as HTML: backslash
    escapes and the entities of escaped data as the characters they stand for, ``**bold**``
    and code spans as tags, everything else as escaped text."""
    out, bold, at = [], False, 0
    while at < len(text):
        token = _TOKEN.match(text, at)
        at = token.end()
        if token["escaped"]:
            out.append(_e(token["escaped"]))
        elif token["fence"]:  # a code span runs to the next fence of the same length
            fence = token["fence"]
            close = re.compile(rf"(?<!`){fence}(?!`)").search(text, at)
            if close is None:
                out.append(_e(fence))
                continue
            code = text[at:close.start()]
            if len(code) > 2 and code[0] == code[-1] == " " and code.strip():
                code = code[1:-1]
            out.append(f"<code>{_e(code)}</code>")
            at = close.end()
        elif token["bold"]:
            out.append("</strong>" if bold else "<strong>")
            bold = not bold
        else:
            out.append(_e(html.unescape(token["text"])))
    return "".join(out) + ("</strong>" if bold else "")


def _value(board: Leaderboard, model: str, key: str, kind: str) -> str:
    """The cell's sort key: a number as JavaScript parses it; empty (sorted last) when not
    measured or NaN."""
    value = board.table.at[model, key]
    if kind == "text":
        return str(value)
    if value is None or math.isnan(value):
        return ""
    if not math.isfinite(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(tidy(float(value)))


def to_html(board: Leaderboard, legend: list[str], *, title: str, figures: list[str],
            details: list[str], after_table: str = "") -> str:
    """The HTML page.

    Args:
        board: The leaderboard.
        legend: Protocol items (Markdown bold/code is rendered, everything else escaped).
        title: Page title.
        figures: Figure paths relative to the page: the headline ones
            (:data:`robustbnn.report.figures.HEADLINE`) shown inline below the table, the
            others linked.
        details: Detail-table paths relative to the page, linked below the table.
        after_table: HTML placed right under the table (the models the contract refused).
    """
    legend = with_nan_note(board, legend)
    heads = ['<th data-kind="text" data-key="model">model</th>']
    for c in board.columns:
        higher = "" if c.kind == "text" else f' data-higher="{str(c.higher_is_better).lower()}"'
        cls = ' class="sorted"' if c.key == board.sort else ""
        heads.append(f'<th{cls} data-kind="{_e(c.kind)}" data-key="{_e(c.key)}"{higher}>'
                     f"{_e(c.title)}</th>")
    rows = []
    for model in board.table.index:
        cells = [f'<td data-value="{_e(model)}">{_e(model)}</td>']
        for c in board.columns:
            cls = ' class="num"' if c.kind == "number" else ""
            cells.append(f'<td{cls} data-value="{_e(_value(board, model, c.key, c.kind))}">'
                         f"{_e(format_cell(board, model, c))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    spread = (f" Mean ± sample std over {board.runs} runs (seeds {board.seeds})."
              if board.runs > 1 else f" One run (seed {board.seeds[0]}).")
    names = {p.rsplit("/", 1)[-1]: p for p in figures}
    shown = [names[h] for h in HEADLINE if h in names]
    inline = "".join(f'<figure><img src="{_e(p)}" alt="{_e(p)}"><figcaption>{_e(p)}'
                     "</figcaption></figure>\n" for p in shown)
    links = "".join(f'<li><a href="{_e(p)}">{_e(p)}</a></li>' for p in [*details, *figures]
                    if p not in shown)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{_e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"<h1>{_e(title)}</h1>\n"
        f'<p><span id="order">{_e(board.order_text())}</span>{_e(spread)} Click a column '
        "header to sort by it (best first; click again to reverse). Accuracies, AUROCs and "
        "success rates are fractions.</p>\n"
        '<table id="leaderboard">\n<thead><tr>' + "".join(heads) + "</tr></thead>\n<tbody>\n"
        + "\n".join(rows) + "\n</tbody>\n</table>\n" + after_table
        + (f'<h2>Headline figures</h2>\n<div class="figures">\n{inline}</div>\n' if inline
           else "")
        + '<h2>Protocol</h2>\n<ul class="legend">'
        + "".join(f"<li>{_inline_md(item)}</li>" for item in legend) + "</ul>\n"
        f"<h2>Details and figures</h2>\n<ul>{links}</ul>\n"
        f"<script>{JS}</script>\n</body>\n</html>\n"
    )
