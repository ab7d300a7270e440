"""The HTML leaderboard: self-contained, escaped, and sortable in a real (headless) Chromium."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from robustbnn.cli import main
from robustbnn.models import MODELS
from robustbnn.report.render import render
from robustbnn.results.paths import safe_name

from ._runs import rows, write_run

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--window-size=1600,900")


@pytest.fixture
def script_plugin(monkeypatch: pytest.MonkeyPatch):
    """Load the markup-named plug-in and forget it afterwards."""
    monkeypatch.delitem(sys.modules, "tests.plugins.script_plugin", raising=False)
    with MODELS.sandbox():
        yield "tests.plugins.script_plugin"


@pytest.mark.bench
def test_a_plugin_name_with_script_is_escaped(script_plugin: str, tmp_path: Path) -> None:
    from tests.plugins.script_plugin import NAME

    out = tmp_path / "out"
    assert main(["bench", "--suite", "smoke", "--quiet", "--plugin", script_plugin,
                 "--models", NAME, "--out", str(out), "--cache-dir", str(tmp_path / "c")]) == 0
    page = (out / "leaderboard.html").read_text()
    assert page.count("<script") == 1 and page.count("</script>") == 1  # our own sorter only
    assert "evil&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    board = json.loads((out / "leaderboard.json").read_text())
    assert [r["model"] for r in board["rows"]] == [NAME]  # the data keeps the real name
    assert (out / "figures" / f"attack_{safe_name(NAME)}.png").is_file()  # a safe file name


@pytest.mark.bench
def test_the_page_is_self_contained(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", rows("a") + rows("b", acc=0.5))
    render([run], run)
    page = (run / "leaderboard.html").read_text()
    assert "http://" not in page and "https://" not in page and "<link" not in page
    assert 'src="figures/fgsm_accuracy.png"' in page and 'href="ood.md"' in page  # inline
    assert 'href="figures/attack_a.png"' in page  # every other figure is linked


@pytest.mark.bench
def test_chromium_shows_the_headline_figures_inline(browser, tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", rows("a") + rows("b", acc=0.5))
    render([run], run)
    browser.get((run / "leaderboard.html").as_uri())
    images = browser.find_elements("css selector", ".figures img")
    assert [i.get_attribute("alt") for i in images] == ["figures/fgsm_accuracy.png"]
    widths = browser.execute_script(
        "return Array.from(document.querySelectorAll('.figures img'), i => i.naturalWidth)")
    assert widths and all(w > 0 for w in widths)  # decoded, not a broken-image icon


@pytest.fixture
def browser(tmp_path: Path):
    """A headless Chromium through Debian's chromedriver, or a skip (a failure in CI)."""
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
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    chrome = webdriver.Chrome(options=options, service=Service(executable_path=driver))
    yield chrome
    chrome.quit()


def _models(browser) -> list[str]:  # noqa: ANN001
    cells = browser.find_elements("css selector", "#leaderboard tbody tr td:first-child")
    return [c.text for c in cells]


@pytest.mark.bench
def test_chromium_renders_one_row_per_model_and_sorts_on_click(browser, tmp_path: Path) -> None:
    run = write_run(tmp_path / "run",
                    rows("a", acc=0.95, nll=0.5) + rows("b", acc=0.90, nll=0.1)
                    + rows("c", acc=0.85, nll=0.3) + rows("<b>d</b>", acc=0.80, nll=0.2))
    render([run], run)
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
def test_chromium_shows_the_default_leaderboard_with_its_headline_figures(browser) -> None:
    reports = Path(__file__).resolve().parents[2] / "reports" / "default"
    committed = json.loads((reports / "leaderboard.json").read_text())
    browser.get((reports / "leaderboard.html").as_uri())
    assert sorted(_models(browser)) == sorted(r["model"] for r in committed["rows"])
    built_in = [n for n in MODELS.names()  # not the plug-ins other tests register
                if MODELS.get(n).config.__module__.startswith("robustbnn.")]
    assert sorted(r["model"] for r in committed["rows"]) == sorted(built_in)  # every model
    images = browser.find_elements("css selector", ".figures img")
    assert [i.get_attribute("alt") for i in images] == [
        "figures/fgsm_accuracy.png", "figures/budget_accuracy.png",
        "figures/detection_aware.png", "figures/ood_roc.png", "figures/shift_rotation.png",
        "figures/reliability.png"]
    widths = browser.execute_script(
        "return Array.from(document.querySelectorAll('.figures img'), i => i.naturalWidth)")
    assert all(w > 0 for w in widths)  # every headline figure decodes
