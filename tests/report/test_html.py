"""The HTML report: self-contained, escaped, explorable, and checked in a real (headless) Chromium.

Pages come from :mod:`tests.report._pages` (synthetic results and tiny matplotlib figures) or
from :func:`robustbnn.report.render.render` on a synthetic run.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib.util
import json
import math
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from robustbnn.cli import main
from robustbnn.models import MODELS
from robustbnn.report.figures import HEADLINE
from robustbnn.report.html import to_html
from robustbnn.report.html_assets import _encoded
from robustbnn.report.partial import partial_html
from robustbnn.report.refused import refused_html
from robustbnn.report.render import render
from robustbnn.results.paths import safe_name

from ._pages import MODELS as FAMILIES
from ._pages import page
from ._runs import rows, write_run

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--window-size=1600,900")


def _write(folder: Path, html: str) -> str:
    (folder / "page.html").write_text(html, encoding="utf-8")
    return (folder / "page.html").as_uri()


def _card(html: str, model: str) -> str:
    """The markup of ``model``'s card."""
    start = html.index('<details class="card family-')
    start = html.index(f'id="model-{safe_name(model)}"', start)
    return html[start:html.index("</details>", start)]


# Cheap checks of the markup, no browser.

def test_every_figure_is_embedded_once_in_its_smaller_form(tmp_path: Path) -> None:
    built = page(tmp_path)
    html = to_html(built)
    assert not re.search(r"https?://", html) and "<link" not in html
    assert 'src="figures/' not in html and 'href="figures/' not in html
    sources = re.findall(r'<img src="([^"]*)"', html)
    assert sources and all(s.startswith(("data:image/png;base64,", "data:image/svg+xml;base64,"))
                           for s in sources)
    embedded = re.findall(r'data-file="([^"]*)"', html)
    stems = sorted({p.stem for p in built.figures})
    assert sorted(Path(f).stem for f in embedded) == stems  # each figure once, PNG or SVG
    for name, uri in zip(embedded, sources, strict=True):
        twins = [p for p in built.figures if p.stem == Path(name).stem]
        assert len(base64.b64decode(uri.split(",", 1)[1])) == min(len(_encoded(p))
                                                                   for p in twins)
    assert "ood_roc.svg" in embedded and "attack_mlp.png" in embedded  # the only file written


def test_one_card_per_model_with_its_config_curve_numbers_and_figures(tmp_path: Path) -> None:
    built = page(tmp_path)
    html = to_html(built)
    assert html.count('<details class="card ') == len(FAMILIES)
    mc = _card(html, "mc_dropout")
    assert "MC dropout" in mc and "<th>hidden</th><td>[8, 8]</td>" in mc
    assert 'data-file="attack_mc_dropout.' in mc and 'data-file="attack_dropout.' not in mc
    (points,) = re.findall(r'<polyline points="([^"]*)"', mc)
    assert len(points.split()) == 4  # one vertex per epoch of fit.val_accuracy
    title = built.headline.column("clean_accuracy").title
    assert f"<th>{title}</th><td>0.9300</td>" in mc
    for title in ("Headline", "Attacks", "OOD"):
        assert f"<h4>{title}</h4>" in mc
    bbb = _card(html, "bbb")  # the model without a training curve
    assert "No training curve recorded" in bbb and "<polyline" not in bbb
    rows_ = re.findall(r'<tr class="(family-\d)"><td data-value="([^"]*)"><a href="#([^"]*)"',
                       html[html.index('id="leaderboard"'):html.index("</table>")])
    assert [(m, a) for _, m, a in rows_] == [(m, f"model-{safe_name(m)}") for m in FAMILIES]


def test_names_configs_and_curves_from_data_stay_text(tmp_path: Path) -> None:
    hostile = "<img src=x onerror=alert(1)>"
    built = page(tmp_path, {hostile: "<b>fam</b>", "m": "x"}, figures=False)
    entries = {hostile: {"config": {"<k>": "<script>alert(1)</script>"},
                         "fit": {"val_accuracy": ["<x>", 0.5, math.nan, 0.7], "note": "<i>"}}}
    html = to_html(dataclasses.replace(built, models=entries))
    assert html.count("<script") == 1 and "<img src=x" not in html and "<b>fam" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&lt;b&gt;fam&lt;/b&gt;" in html
    card = _card(html, hostile)
    assert "<th>&lt;k&gt;</th><td>&lt;script&gt;alert(1)&lt;/script&gt;</td>" in card
    (points,) = re.findall(r'<polyline points="([^"]*)"', card)
    assert len(points.split()) == 2  # the two finite numbers of the curve


def test_the_partial_banner_and_the_refused_models_keep_their_places(tmp_path: Path) -> None:
    refused = {"<bad>": {"clauses": ["shape"], "reason": "(B, C) not (S, B, C)"}}
    built = dataclasses.replace(page(tmp_path, figures=False), after_table=refused_html(refused))
    runs = [{"cells": {"failed": {"train m": "RuntimeError: boom"}, "skipped": {}}}]
    html = partial_html(to_html(built), runs)
    assert html.index("</h1>") < html.index('class="partial"') < html.index("<nav>")
    table_end = html.index("</table>", html.index('id="leaderboard"'))
    assert table_end < html.index('id="refused"') < html.index('id="aspects"')
    assert "<td>&lt;bad&gt;</td>" in html


@pytest.mark.bench
def test_a_plugin_name_with_script_is_escaped(script_plugin: str, tmp_path: Path) -> None:
    from tests.plugins.script_plugin import NAME

    out = tmp_path / "out"
    assert main(["bench", "--suite", "smoke", "--quiet", "--plugin", script_plugin,
                 "--models", NAME, "--out", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    page_ = (out / "leaderboard.html").read_text()
    assert page_.count("<script") == 1 and page_.count("</script>") == 1  # our own sorter only
    assert "evil&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page_
    board = json.loads((out / "leaderboard.json").read_text())
    assert [r["model"] for r in board["rows"]] == [NAME]  # the data keeps the real name
    assert (out / "figures" / f"attack_{safe_name(NAME)}.png").is_file()  # a safe file name


@pytest.mark.bench
def test_the_rendered_page_is_self_contained(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", rows("a") + rows("b", acc=0.5))
    render([run], run)
    html = (run / "leaderboard.html").read_text()
    assert not re.search(r"https?://", html) and "<link" not in html
    assert 'src="figures/' not in html and 'href="ood.md"' in html


# In headless Chromium.

@pytest.fixture
def script_plugin(monkeypatch: pytest.MonkeyPatch):
    """Load the markup-named plug-in and forget it afterwards."""
    monkeypatch.delitem(sys.modules, "tests.plugins.script_plugin", raising=False)
    with MODELS.sandbox():
        yield "tests.plugins.script_plugin"


def _chromium(profile: Path, *, script: bool = True):  # noqa: ANN202
    """A headless Chromium through Debian's chromedriver logging the console, or a skip (a
    failure in CI)."""
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if importlib.util.find_spec("selenium") is None or not chromium or not driver:
        reason = ("needs Debian's chromium and chromium-driver (apt-get install -y chromium "
                  "chromium-driver) and selenium (the test extra)")
        if os.environ.get("ROBUSTBNN_REQUIRE_CHROMIUM") == "1":
            pytest.fail(f"ROBUSTBNN_REQUIRE_CHROMIUM=1 but the test {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    if not script:
        options.add_argument("--blink-settings=scriptEnabled=false")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))


@pytest.fixture
def browser(tmp_path: Path):
    """A headless Chromium (JavaScript on) whose console log ``get_log("browser")`` reads."""
    chrome = _chromium(tmp_path / "profile")
    yield chrome
    chrome.quit()


@pytest.fixture
def browser_without_js(tmp_path: Path):
    """A headless Chromium that runs no script of the page."""
    chrome = _chromium(tmp_path / "profile-nojs", script=False)
    yield chrome
    chrome.quit()


def _models(browser, table: str = "leaderboard") -> list[str]:  # noqa: ANN001
    cells = browser.find_elements("css selector", f"#{table} tbody tr td:first-child")
    return [c.text for c in cells]


def _severe(browser) -> list[dict]:  # noqa: ANN001
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


@pytest.mark.bench
def test_chromium_sorts_the_headline_on_a_header_click(browser, tmp_path: Path) -> None:
    browser.get(_write(tmp_path, to_html(page(tmp_path, figures=False))))
    assert _models(browser) == ["mlp", "dropout", "mc_dropout", "bbb"]  # clean accuracy
    header = browser.find_element("css selector", 'th[data-key="clean_nll"]')
    header.click()  # NLL 0.10, 0.47, 0.84, 0.10: lower is better, ties keep their order
    assert _models(browser) == ["mlp", "bbb", "dropout", "mc_dropout"]
    assert "NLL" in browser.find_element("id", "order").text
    header.click()
    assert _models(browser) == ["mc_dropout", "dropout", "mlp", "bbb"]
    assert _severe(browser) == []


@pytest.mark.bench
def test_chromium_decodes_every_image_and_draws_every_svg_without_errors(
        browser, tmp_path: Path) -> None:
    browser.get(_write(tmp_path, to_html(page(tmp_path))))
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    widths = browser.execute_script(
        "return Array.from(document.images, i => [i.dataset.file, i.complete, i.naturalWidth])")
    assert len(widths) == 6 and all(done and w > 0 for _, done, w in widths), widths
    boxes = browser.execute_script("return Array.from(document.querySelectorAll('svg'), "
                                   "s => { const r = s.getBoundingClientRect(); "
                                   "return [r.width, r.height]; })")
    assert len(boxes) == 3 and all(w > 0 and h > 0 for w, h in boxes)  # three curves
    assert _severe(browser) == []
    browser.execute_script("console.error('probe')")  # the log does catch errors
    assert any("probe" in e["message"] for e in _severe(browser))


@pytest.mark.bench
def test_chromium_family_filter_hides_the_other_families(browser, tmp_path: Path) -> None:
    browser.get(_write(tmp_path, to_html(page(tmp_path, figures=False))))

    def shown(selector: str) -> list[str]:
        return [e.get_attribute("data-model") or e.text for e in
                browser.find_elements("css selector", selector) if e.is_displayed()]

    for family in ("deterministic", "variational"):
        browser.find_element("css selector", f'input[data-family="{family}"]').click()
    rows_ = "#leaderboard tbody tr td:first-child"
    assert shown(rows_) == ["mc_dropout"] and shown("details.card") == ["mc_dropout"]
    browser.find_element("css selector", "#aspect-0 summary").click()
    assert shown("#table-aspect-0 tbody tr td:first-child") == ["mc_dropout"]
    browser.find_element("css selector", 'input[data-family="variational"]').click()
    assert shown(rows_) == ["mc_dropout", "bbb"]


@pytest.mark.bench
def test_without_javascript_rows_and_cards_are_shown(browser_without_js, tmp_path: Path) -> None:
    chrome = browser_without_js
    chrome.get(_write(tmp_path, to_html(page(tmp_path))))
    assert chrome.find_element("tag name", "html").get_attribute("class") in ("", None)
    rows_ = chrome.find_elements("css selector", "#leaderboard tbody tr")
    cards = chrome.find_elements("css selector", "details.card")
    assert len(rows_) == len(cards) == len(FAMILIES)
    assert all(e.is_displayed() for e in [*rows_, *cards])
    assert _models(chrome) == list(FAMILIES)
    cards[0].find_element("tag name", "summary").click()  # <details> opens without script
    assert cards[0].find_element("css selector", "svg.curve").is_displayed()
    assert not chrome.find_element("css selector", ".js-only").is_displayed()


@pytest.mark.bench
def test_chromium_renders_one_row_per_model_and_sorts_on_click(browser, tmp_path: Path) -> None:
    run = write_run(tmp_path / "run",
                    rows("a", acc=0.95, nll=0.5) + rows("b", acc=0.90, nll=0.1)
                    + rows("c", acc=0.85, nll=0.3) + rows("<b>d</b>", acc=0.80, nll=0.2))
    render([run], run, sort="clean_accuracy")
    browser.get((run / "leaderboard.html").as_uri())
    assert _models(browser) == ["a", "b", "c", "<b>d</b>"]  # text, not markup
    header = browser.find_element("css selector", 'th[data-key="clean_nll"]')
    header.click()  # NLL: lower is better, so the best comes first
    assert _models(browser) == ["b", "<b>d</b>", "c", "a"]
    assert browser.find_element("id", "order").text == "Sorted by NLL (best first)."
    header.click()
    assert _models(browser) == ["a", "c", "<b>d</b>", "b"]
    browser.find_element("css selector", 'th[data-key="clean_accuracy"]').click()
    assert _models(browser) == ["a", "b", "c", "<b>d</b>"]
    assert browser.save_screenshot(str(tmp_path / "leaderboard.png"))
    assert (tmp_path / "leaderboard.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.bench
def test_chromium_shows_the_committed_leaderboard(browser) -> None:
    reports = Path(__file__).resolve().parents[2] / "reports"
    committed = json.loads((reports / "leaderboard.json").read_text())
    browser.get((reports / "leaderboard.html").as_uri())
    assert sorted(_models(browser)) == sorted(r["model"] for r in committed["rows"])
    browser.find_element("css selector", 'th[data-key="ood_auroc_mean"]').click()
    auroc = {r["model"]: r["ood_auroc_mean"] for r in committed["rows"]}
    assert _models(browser) == sorted(auroc, key=lambda m: -auroc[m])


@pytest.mark.bench
def test_chromium_shows_the_default_leaderboard_with_its_figures_and_cards(browser) -> None:
    reports = Path(__file__).resolve().parents[2] / "reports" / "default"
    committed = json.loads((reports / "leaderboard.json").read_text())
    browser.get((reports / "leaderboard.html").as_uri())
    models = sorted(r["model"] for r in committed["rows"])
    assert sorted(_models(browser)) == models
    built_in = [n for n in MODELS.names()  # not the plug-ins other tests register
                if MODELS.get(n).config.__module__.startswith("robustbnn.")
                and MODELS.get(n).in_default]
    assert models == sorted(built_in)  # every model of the default suite
    cards = browser.find_elements("css selector", "details.card")
    assert sorted(c.get_attribute("data-model") for c in cards) == models
    overview = [Path(i.get_attribute("data-file")).stem for i in
                browser.find_elements("css selector", "#figures + .figures img")]
    assert overview[:len(HEADLINE)] == [Path(h).stem for h in HEADLINE]
    widths = browser.execute_script("return Array.from(document.images, i => i.naturalWidth)")
    assert widths and all(w > 0 for w in widths)  # every figure decodes
    assert _severe(browser) == []
