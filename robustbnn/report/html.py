"""The leaderboard as one self-contained HTML file: figures embedded, no network, no side files.

The page, top to bottom: the title (a partial run's notice goes right under it,
:mod:`robustbnn.report.partial`); a family filter; the headline table (sortable), followed by
the refused models (:mod:`robustbnn.report.refused`); the per-aspect tables, each in a
``<details>``; one card per model (:mod:`robustbnn.report.html_cards`); the figures that belong
to no single model; the protocol legend; links to the other report files.

Everything is in the static markup, so the page reads without JavaScript. The family filter is
CSS alone (a ``:has()`` rule per family checkbox hides that family's rows and cards); the one
script only sorts: clicking a column header sorts the rows by it, best first (the direction of
``HIGHER_IS_BETTER``), and a second click reverses. Figures are ``data:`` URIs
(:mod:`robustbnn.report.html_assets`). Every string that reaches the page goes through
:func:`robustbnn.report.escape.escape`; the legend, Markdown whose data parts that function
escaped, is turned into HTML by :func:`_inline_md`.
"""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

from robustbnn.report.escape import escape
from robustbnn.report.figures import HEADLINE
from robustbnn.report.html_assets import embed_figures, figure_html, figure_models
from robustbnn.report.html_cards import card_id, model_card
from robustbnn.report.html_page import HtmlPage
from robustbnn.report.leaderboard import (
    Leaderboard,
    format_cell,
    spread_text,
    tidy,
    with_nan_note,
)

__all__ = ["HtmlPage", "to_html"]

OTHER = "other"  # the family of a model the page's ``families`` does not name

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1400px; }
table { border-collapse: collapse; font-size: 14px; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; }
thead th { background: #f0f0f0; user-select: none; }
html.js thead th { cursor: pointer; }
th.sorted { background: #dde8ff; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr:nth-child(even) { background: #fafafa; }
.js-only { display: none; }
html.js .js-only { display: inline; }
nav a { margin-right: 1em; }
fieldset.filter { border: 1px solid #ccc; margin: 1em 0; }
fieldset.filter label { margin-right: 1.2em; white-space: nowrap; }
details { margin: 0.4em 0; }
details > summary { cursor: pointer; font-weight: 600; }
details.card { border: 1px solid #ddd; border-radius: 4px; padding: 0.4em 0.8em; }
details.card .family { font-weight: normal; color: #666; margin-left: 0.5em; }
.card-body { display: flex; flex-wrap: wrap; gap: 0 2em; align-items: flex-start; }
.card-body h4 { margin: 0.6em 0 0.3em; }
table.pairs th { background: #f7f7f7; text-align: left; font-weight: normal; }
table.pairs td { font-variant-numeric: tabular-nums; }
svg.curve polyline { stroke: #1f77b4; stroke-width: 1.5; }
svg.curve circle { fill: #1f77b4; }
svg.curve .axis { stroke: #888; }
svg.curve text { font-size: 9px; fill: #555; }
.legend li { margin: 0.3em 0; }
.figures { display: flex; flex-wrap: wrap; gap: 0 1.5em; align-items: flex-start; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 12px; color: #666; }
.partial { color: #a00; }
"""

# Sort a table's rows by the clicked column: numbers by data-value in the column's better-first
# direction (data-higher), text A to Z; missing values always last; ties keep the row order.
JS = """
(function () {
  document.documentElement.classList.add("js");
  function setup(table) {
    var body = table.tBodies[0];
    var heads = table.tHead.rows[0].cells;
    var status = document.getElementById(table.getAttribute("data-status"));
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
      if (status) {
        status.textContent = "Sorted by " + th.textContent +
          (flipped ? " (worst first)." : (numeric ? " (best first)." : " (A to Z)."));
      }
    }
    for (var i = 0; i < heads.length; i++) {
      heads[i].tabIndex = 0;
      heads[i].addEventListener("click", sortBy.bind(null, i));
      heads[i].addEventListener("keydown", function (i, event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(i); }
      }.bind(null, i));
    }
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), setup);
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


def _table(board: Leaderboard, table_id: str, status_id: str, classes: dict[str, str],
           anchors: dict[str, str]) -> str:
    """A sortable table: one row per model, its family's class on the row, the model's name
    linking to its card."""
    heads = ['<th data-kind="text" data-key="model">model</th>']
    for c in board.columns:
        higher = "" if c.kind == "text" else f' data-higher="{str(c.higher_is_better).lower()}"'
        cls = ' class="sorted"' if c.key == board.sort else ""
        heads.append(f'<th{cls} data-kind="{_e(c.kind)}" data-key="{_e(c.key)}"{higher}>'
                     f"{_e(c.title)}</th>")
    rows = []
    for model in board.table.index:
        cells = [f'<td data-value="{_e(model)}"><a href="#{_e(anchors[model])}">{_e(model)}</a>'
                 "</td>"]
        for c in board.columns:
            cls = ' class="num"' if c.kind == "number" else ""
            cells.append(f'<td{cls} data-value="{_e(_value(board, model, c.key, c.kind))}">'
                         f"{_e(format_cell(board, model, c))}</td>")
        rows.append(f'<tr class="{classes[model]}">' + "".join(cells) + "</tr>")
    return (f'<table id="{table_id}" class="sortable" data-status="{status_id}">\n<thead><tr>'
            + "".join(heads) + "</tr></thead>\n<tbody>\n" + "\n".join(rows)
            + "\n</tbody>\n</table>\n")


def _family_filter(groups: dict[str, list[str]], ids: dict[str, str]) -> tuple[str, str]:
    """The family checkboxes and their CSS (an unticked family's rows and cards are hidden);
    none for a page of one family."""
    if len(groups) < 2:
        return "", ""
    boxes = "".join(f'<label><input type="checkbox" id="show-{ids[f]}" data-family="{_e(f)}" '
                    f'checked> {_e(f)} ({len(models)})</label>\n'
                    for f, models in groups.items())
    css = "".join(f"body:has(#show-{i}:not(:checked)) .{i} {{ display: none; }}\n"
                  for i in ids.values())
    return (f'<fieldset class="filter" id="family-filter"><legend>Show families</legend>\n'
            f"{boxes}</fieldset>\n", css)


def _spread(board: Leaderboard) -> str:
    return spread_text(board)


def to_html(page: HtmlPage | Leaderboard, legend: list[str] | None = None, *,
            title: str = "", figures: list[str] | None = None, details: list[str] | None = None,
            after_table: str = "") -> str:
    """The HTML page of an :class:`~robustbnn.report.html_page.HtmlPage`.

    Args:
        page: What the page shows. Passing a :class:`Leaderboard` (with ``legend``, ``title``,
            ``figures``, ``details`` and ``after_table``) is the older call, kept until every
            caller builds an ``HtmlPage``: its figures are embedded when their paths can be
            read from the working directory, and skipped otherwise.
        legend: The older call's legend.
        title: The older call's title.
        figures: The older call's figure paths.
        details: The older call's detail files.
        after_table: The older call's refused-models HTML.

    Returns:
        The page: one HTML document with every figure embedded and no external reference.
    """
    if not isinstance(page, HtmlPage):
        page = HtmlPage(title=title, headline=page, legend=list(legend or []),
                        figures=[Path(f) for f in figures or []], details=list(details or []),
                        after_table=after_table)
    board = page.headline
    boards = {"Headline": board, **page.aspects}
    models = list(dict.fromkeys([m for b in boards.values() for m in b.table.index]))
    family = {m: str(page.families.get(m) or OTHER) for m in models}
    groups: dict[str, list[str]] = {}
    for model in models:
        groups.setdefault(family[model], []).append(model)
    if OTHER in groups:
        groups[OTHER] = groups.pop(OTHER)
    ids = {f: f"family-{i}" for i, f in enumerate(groups)}
    classes = {m: ids[family[m]] for m in models}
    anchors = {m: card_id(m, i) for i, m in enumerate(models)}
    embedded = embed_figures(page.figures)
    owner = figure_models(embedded, models)
    order = {Path(h).stem: i for i, h in enumerate(HEADLINE)}
    overview = sorted((f for f in embedded if f.stem not in owner),
                      key=lambda f: (order.get(f.stem, len(order)), f.stem))
    filter_html, filter_css = _family_filter(groups, ids)
    aspects = "".join(
        f'<details class="aspect" id="aspect-{i}"><summary>{_e(name)} '
        f"({len(t.columns)} columns)</summary>\n"
        f'<p id="order-aspect-{i}">{_e(t.order_text())}</p>\n'
        + _table(t, f"table-aspect-{i}", f"order-aspect-{i}", classes, anchors) + "</details>\n"
        for i, (name, t) in enumerate(page.aspects.items()))
    cards = "".join(model_card(m, i, family=family[m],
                               entry=page.models.get(m) if isinstance(page.models.get(m), dict)
                               else {}, boards=boards, family_class=classes[m],
                               figures=[f for f in embedded if owner.get(f.stem) == m])
                    for i, m in enumerate(models))
    sections = [("headline", "Headline"), *([("aspects", "Per-aspect tables")] if aspects else []),
                ("models", "Models"), *([("figures", "Figures")] if overview else []),
                ("protocol", "Protocol"), *([("reports", "Other reports")] if page.details
                                            else [])]
    nav = "".join(f'<a href="#{s}">{t}</a>' for s, t in sections)
    links = "".join(f'<li><a href="{_e(p)}">{_e(p)}</a></li>' for p in page.details)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(page.title)}</title>\n<style>{CSS}{filter_css}</style>\n</head>\n<body>\n"
        f"<h1>{_e(page.title)}</h1>\n"
        f'<p><span id="order">{_e(board.order_text())}</span>{_e(_spread(board))}'
        '<span class="js-only"> Click a column header to sort by it (best first; click again to '
        "reverse).</span> Accuracies, AUROCs and success rates are fractions; a model's name "
        "leads to its card.</p>\n"
        f"<nav>{nav}</nav>\n{filter_html}"
        '<h2 id="headline">Headline</h2>\n'
        + _table(board, "leaderboard", "order", classes, anchors) + page.after_table
        + (f'<h2 id="aspects">Per-aspect tables</h2>\n{aspects}' if aspects else "")
        + f'<h2 id="models">Models</h2>\n<div class="cards">\n{cards}</div>\n'
        + ('<h2 id="figures">Figures</h2>\n<div class="figures">\n'
           + "".join(figure_html(f) for f in overview) + "</div>\n" if overview else "")
        + '<h2 id="protocol">Protocol</h2>\n<ul class="legend">'
        + "".join(f"<li>{_inline_md(item)}</li>" for item in with_nan_note(board, page.legend))
        + "</ul>\n"
        + (f'<h2 id="reports">Other reports</h2>\n<ul>{links}</ul>\n' if links else "")
        + f"<script>{JS}</script>\n</body>\n</html>\n"
    )
