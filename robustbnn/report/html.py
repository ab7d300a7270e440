"""The leaderboard as one self-contained HTML file: inline CSS and JS, no network needed.

Every string that reaches the page (model names from plug-ins, measure names, titles, the
legend) goes through :func:`html.escape`. Clicking a column header sorts the rows by it, best
first (the direction of ``HIGHER_IS_BETTER``); a second click reverses.
"""

from __future__ import annotations

import html
import math
import re

from robustbnn.report.figures import HEADLINE
from robustbnn.report.leaderboard import Leaderboard, format_cell, tidy

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
    return html.escape(str(text), quote=True)


def _inline_md(text: str) -> str:
    """Escape, then turn the legend's **bold** and `code` into tags."""
    text = _e(text)
    text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", text)


def _value(board: Leaderboard, model: str, key: str, kind: str) -> str:
    value = board.table.at[model, key]
    if kind == "text":
        return str(value)
    return "" if value is None or math.isnan(value) else repr(tidy(float(value)))


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
