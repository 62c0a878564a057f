"""Reports from a real compare run: llama.cpp against a greedy longest-match engine on llama-spm.

The engine is the bug of the Gemma 3 write-up, plugged in through the `cmd:` protocol. The report
must name merge-order / whitespace-runs in its root-cause section, show the ids side by side,
count in summary.json what mismatches.csv holds, and render hostile corpus text as text, in a
real browser.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ENGINE = Path(__file__).parents[2] / "examples" / "engines" / "greedy_engine.py"
HOSTILE = [
    {"id": "xss-1", "text": "<script>alert(1)</script> hello  world", "tags": {"kind": "hostile", "script": "Latn"}},
    {"id": "xss-2", "text": "<img src=x onerror=alert(1)> the  end", "tags": {"kind": "hostile", "script": "Latn"}},
    {"id": "csv-1", "text": "=HYPERLINK(\"http://x\",\"y\")  two", "tags": {"kind": "hostile", "script": "Latn"}},
    {"id": "md-1", "text": "| pipe | `code` **bold**  and <b>tag</b>", "tags": {"kind": "hostile", "script": "Latn"}},
    {"id": "ws-1", "text": "if x:\n\t\t\treturn      y", "tags": {"kind": "code", "script": "Latn"}},
    {"id": "prose-1", "text": "The quick brown fox jumps over the lazy dog", "tags": {"kind": "prose", "script": "Latn"}},
    {"id": "same-1", "text": "Hello", "tags": {"kind": "prose", "script": "Latn"}},
]


@pytest.fixture(scope="module")
def report(tmp_path_factory, zoo):
    zoo("llama-spm")
    tmp = tmp_path_factory.mktemp("report")
    corpus = tmp / "hostile.jsonl"
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in HOSTILE), "utf-8")
    out = tmp / "out"
    cmd = f"cmd:{sys.executable} {ENGINE} {{gguf}}"
    proc = subprocess.run([sys.executable, "-m", "tokparity.cli", "compare", "llama-spm", "-c", str(corpus),
                           "-b", "llama.cpp", "-b", cmd, "-o", str(out), "-q"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr  # the greedy engine disagrees: exit 1
    return out, cmd, proc


def test_summary_json_counts_match_the_csv(report):
    out, cmd, _ = report
    summary = json.loads((out / "summary.json").read_text("utf-8"))
    rows = list(csv.DictReader(open(out / "mismatches.csv", encoding="utf-8", newline="")))
    assert set(summary) >= {"tokparity", "backends", "runs"}
    assert summary["backends"]["llama.cpp"]["version"] == "0.3.36"
    run = next(r for r in summary["runs"] if r["backend"] == cmd)
    assert run["model"] == "llama-spm" and run["oracle"] == "golden/llama.cpp"  # golden ids hold "Hello"
    assert run["cases"] == len(HOSTILE)
    assert run["mismatches"] == len([r for r in rows if r["backend"] == cmd]) == run["unexplained"]
    assert sum(run["classes"].values()) == run["mismatches"]
    assert run["mismatches"] == len(HOSTILE) - 1  # only "Hello" is tokenized alike
    assert set(run["classes"]) <= {"merge-order", "whitespace-runs"}


def test_csv_escapes_formulas(report):
    out, _, _ = report
    rows = {r["case_id"]: r for r in csv.DictReader(open(out / "mismatches.csv", encoding="utf-8", newline=""))}
    assert rows["csv-1"]["text"].startswith("'=HYPERLINK(")
    assert json.loads(rows["prose-1"]["oracle_ids"])[0] == 450  # '▁The'
    assert list(rows["prose-1"].keys())[:14] == ["model", "corpus", "case_id", "tags", "oracle", "backend", "class",
                                                 "stage", "first_diff", "text", "oracle_ids", "backend_ids",
                                                 "oracle_pieces", "backend_pieces"]


def test_root_cause_section_names_the_classes_and_shows_ids(report):
    out, cmd, _ = report
    page = (out / "report.html").read_text("utf-8")
    root = page[page.index('id="root-cause"'):page.index('id="tags"')]
    assert "merge-order" in root and "whitespace-runs" in root  # the run's classes, each with its symptom
    assert "→ implication" in root and "greedy longest-match" in root
    assert "llama.cpp (oracle)" in root
    assert "because of model.greedy-longest-match" in root
    # hostile text is escaped everywhere
    assert "<script>alert(1)</script>" not in page
    assert "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_markdown_escapes(report):
    out, _, proc = report
    md = (out / "summary.md").read_text("utf-8")
    assert "<b>tag</b>" not in md and "<script>" not in md
    assert md.startswith("# tokparity ")
    assert "to review" in md


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_report_in_headless_chromium(report, tmp_path):
    """Open report.html from file:// in a real browser: no console errors, filters work,
    hostile text renders as text. A screenshot lands in the test's tmp folder."""
    if CHROMIUM is None:
        pytest.fail("chromium is not installed (apt-get install chromium); .ci/run installs it")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    out, cmd, _ = report
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        page = browser.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto((out / "report.html").as_uri())
        total = page.locator(".case").count()
        assert total == len(HOSTILE) - 1
        assert page.locator("#shown").inner_text() == f"showing {total} of {total}"
        page.select_option("select[name=cls]", "whitespace-runs")
        visible = page.locator(".case:not(.hidden)").count()
        assert 0 < visible < total
        assert page.locator("#shown").inner_text() == f"showing {visible} of {total}"
        page.select_option("select[name=cls]", "")
        # every case of this engine is reproduced by greedy longest-match: the cause filter keeps them all
        page.select_option("select[name=cause]", "model.greedy-longest-match")
        assert page.locator(".case:not(.hidden)").count() == total
        page.select_option("select[name=cause]", "")
        # the write-up's id comparison renders, the differing columns marked
        assert page.locator("#root-cause table.tokens td.diff").first.is_visible()
        assert page.locator("#root-cause .sentence").first.inner_text().startswith(f"{cmd} differs from")
        page.select_option("select[name=tag]", "kind=hostile")
        assert page.locator(".case:not(.hidden)").count() == 4
        # the hostile case shows its markup as text, and nothing ran
        text = page.locator(".case:not(.hidden) .text").first.inner_text()
        assert "<" in text and ("script" in text or "img" in text)
        assert page.locator("main script, main img").count() == 0
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        browser.close()
    assert errors == []
    assert dialogs == []
    print(f"screenshot: {tmp_path / 'report.png'}")
