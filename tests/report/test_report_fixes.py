"""What a reader of a run meets, from real runs: the terminal summary of ``compare`` as plain text,
header counts equal to summary.json's, a tag table not swamped by one-case tags, the most
telling case an unexplained one, an exact text column in mismatches.csv, and a fuzz run's
findings by cause.

The runs: transformers' GGUF converter (hf-gguf) on llama-bpe's edge corpus with parse_special (it reads
``<|endoftext|>`` as a token llama.cpp does not have: special-token text in the output); a
tokenizers engine on llama-bpe that parses special-token text unasked and ignores ignore_merges,
with one of the two listed as a known divergence; a greedy longest-match engine on llama-spm over
the codepoints generator's cases (one tag per code point) and formula-like texts; a short fuzz
run of the same engine.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from html import escape, unescape
from pathlib import Path

import pytest

from tokparity.fuzz.generators import generate
from tokparity.report import overview
from tokparity.report.folder import read_summary

ROOT = Path(__file__).parent.parent
GREEDY = f"greedy=cmd:{sys.executable} {ROOT.parent / 'examples' / 'engines' / 'greedy_engine.py'} {{gguf}}"
TOKENIZERS = (f"mine=cmd:{sys.executable} {ROOT / 'engines' / 'tokenizers_engine.py'} {{tokenizer_json}} "
              "--parse-special always --model ignore_merges=false")
KNOWN = """
[[divergence]]
id = "mine-{name}"
models = ["llama-bpe"]
backends = ["mine"]
classes = ["{cls}"]
cause = "{cause}"
reason = "reviewed: mine does this on purpose"
upstream = "none: intended"
"""
# Texts a spreadsheet would read as formulas, or that a CSV must keep exact; each with a double
# space, which the greedy engine splits otherwise than llama.cpp (so each is a mismatch).
FORMULA_LIKE = ["\tif  x:\n\treturn", "=SUM(A1:A2)  b", "+1  two", "-x  y", "@me  now", "line\n  two",
                "🙂  emoji 👩‍💻", '"quoted"  text']


def tokparity(*args: object, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text("utf-8"))


def totals(doc: dict) -> dict[str, int]:
    runs = doc["runs"]
    return {"cases": sum(r["cases"] for r in runs), "mismatches": sum(r["mismatches"] for r in runs),
            "unexplained": sum(r["unexplained"] for r in runs),
            "known": sum(r["mismatches"] - r["unexplained"] - r["ties"] for r in runs),
            "ties": sum(r["ties"] for r in runs)}


def count_sentence(t: dict[str, int]) -> str:
    """The header's counts as summary.json gives them."""
    mismatches = f"{t['mismatches']:,} mismatch" + ("" if t["mismatches"] == 1 else "es")
    parts = [f"{t['unexplained']:,} to review"]
    if t["known"]:
        parts.append(f"{t['known']:,} known divergence" + ("" if t["known"] == 1 else "s"))
    if t["ties"]:
        parts.append(f"{t['ties']:,} tie" + ("" if t["ties"] == 1 else "s") + " of equal score")
    return f"{mismatches} in {t['cases']:,} judgements (a case once per backend and op): {', '.join(parts)}"


def html_header(out: Path) -> str:
    page = (out / "report.html").read_text("utf-8")
    return unescape(re.sub(r"<[^>]+>", " ", page[page.index("<header>"):page.index("</header>")]))


def section(page: str, name: str) -> str:
    start = page.index(f'<section id="{name}">')
    return page[start:page.index("</section>", start)]


@pytest.fixture(scope="module")
def hf_gguf(tmp_path_factory, zoo):
    zoo("llama-bpe")
    out = tmp_path_factory.mktemp("hf-gguf") / "run"
    proc = tokparity("compare", "llama-bpe", "-c", "edge", "-b", "hf-gguf", "--parse-special", "-o", out, "-q")
    assert proc.returncode == 1, proc.stderr  # <|endoftext|> read as a token: unexplained
    return out, proc


@pytest.fixture(scope="module")
def greedy(tmp_path_factory, zoo):
    """llama-spm against the greedy engine over 300 code points (a tag each) and formula-like texts."""
    zoo("llama-spm")
    tmp = tmp_path_factory.mktemp("greedy")
    records = [{"id": c.id, "text": c.text, "tags": {**c.tags, "codepoint": f"U+{ord(c.text[0]):04X}"}}
               for c in generate("codepoints", None, seed=0, limit=300)]
    records += [{"id": f"formula-{n}", "text": t, "tags": {"kind": "formula"}} for n, t in enumerate(FORMULA_LIKE)]
    corpus = tmp / "codepoints.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    out = tmp / "run"
    proc = tokparity("compare", "llama-spm", "-c", corpus, "-b", GREEDY, "-o", out, "-q")
    assert proc.returncode == 1, proc.stderr
    return out, proc, records


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory, zoo):
    zoo("llama-spm")
    out = tmp_path_factory.mktemp("fuzz") / "run"
    proc = tokparity("fuzz", "llama-spm", "-b", GREEDY, "--cases", 1500, "--seed", 1, "-o", out, "-q")
    assert proc.returncode == 1, proc.stderr
    return out


# -- 1. the terminal summary is plain text ----------------------------------------------------------


def table_block(stdout: str) -> list[str]:
    """The model × backend table: the header, its rule of ─ runs, the rows up to the blank line."""
    lines = stdout.splitlines()
    rule = next(n for n, line in enumerate(lines) if line.startswith("─"))
    end = next((n for n in range(rule, len(lines)) if not lines[n].strip()), len(lines))
    return lines[rule - 1:end]


def test_compare_prints_plain_text_with_aligned_columns(hf_gguf):
    _, proc = hf_gguf
    out = proc.stdout
    assert "<|endoftext|>" in out  # the special-token text, as it is
    for markup in ("&lt;", "&gt;", "\\|", "\\_", "\\[", "| model |", "|---", "**", "`", "## "):
        assert markup not in out, markup
    assert "'␣<|endoftext|>␣'" in out  # a case's text with its whitespace made visible, as encode shows it
    header, rule, *rows = table_block(out)
    assert header.split() == ["model", "oracle", "backend", "cases", "mismatches", "to", "review", "classes", "causes"]
    spans = [(m.start(), m.end()) for m in re.finditer("─+", rule)]
    assert len(spans) == 8 and len(rows) == 2  # llama.cpp (on the golden texts) and hf-gguf
    for line in [header, *rows]:
        for start, end in spans[1:]:
            assert line[start - 2:start] == "  ", (line, start)  # every column starts where its rule starts
        for start, end in spans[3:6]:  # cases, mismatches, unexplained: right-aligned under their rule
            assert line[end - 1] != " " and line[start:end].strip(), (line, start, end)
    hf = next(r for r in rows if "  hf-gguf  " in r)
    assert hf.split()[3:6] == ["884", "7", "6"]


def test_regress_prints_the_same_plain_summary(tmp_path, zoo):
    zoo("llama-spm")
    proc = tokparity("regress", "llama-spm", "-c", "edge", "-b", "ref", "-o", tmp_path / "run", "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("tokparity ") and "✅ no mismatch to review" in proc.stdout
    assert "|---" not in proc.stdout and "# tokparity" not in proc.stdout
    assert table_block(proc.stdout)[0].split()[:3] == ["model", "oracle", "backend"]


# -- 2. header counts are summary.json's ---------------------------------------------------------


def test_header_counts_are_summary_json_counts(hf_gguf):
    out, proc = hf_gguf
    t = totals(summary(out))
    assert (t["mismatches"], t["unexplained"], t["known"]) == (7, 6, 1)
    expected = count_sentence(t)
    assert expected.endswith("6 to review, 1 known divergence")
    assert expected in html_header(out)
    assert f"\n{expected}\n" in (out / "summary.md").read_text("utf-8")
    assert f"\n{expected}\n" in proc.stdout
    assert "# tokparity 0.1.0: ❌ 6 mismatches to review" in (out / "summary.md").read_text("utf-8")


def test_fuzz_header_counts_every_mismatch_not_the_kept_ones(fuzzed):
    """A fuzz run keeps only its shrunk findings whole: the header must not count those as the
    run's mismatches while it counts every unexplained one (\"7 mismatches, 123975 unexplained\")."""
    t = totals(summary(fuzzed))
    with open(fuzzed / "mismatches.csv", encoding="utf-8", newline="") as f:
        kept = len(list(csv.DictReader(f)))
    assert t["mismatches"] > kept  # the situation of the report
    expected = f"{count_sentence(t)}; {kept:,} of them listed in mismatches.csv (a fuzz run lists each finding once, shrunk)"
    assert expected in html_header(fuzzed)
    assert f"\n{expected}\n" in (fuzzed / "summary.md").read_text("utf-8")
    explained = tokparity("explain", fuzzed, "--width", "200").stdout
    assert expected in explained.splitlines()[0]


# -- 3. the tag table --------------------------------------------------------------------------


def test_tag_table_keeps_tags_with_enough_cases_and_folds_the_rest(greedy):
    out, _, records = greedy
    rates = summary(out)["tag_rates"]["llama-spm"]  # each backend's counts per tag, on the one model
    few = [k for k, v in rates["greedy"].items() if v["cases"] < 20]
    assert len([k for k in few if k.startswith("codepoint=")]) == 300  # one case run each
    tags = section((out / "report.html").read_text("utf-8"), "tags")
    assert "codepoint=U+" not in tags
    assert "<svg" not in tags and "chart" not in tags  # one table, no chart repeating it
    shown = [(unescape(run).split(" · ")[1], unescape(k)) for run, k in re.findall(r"<tr><td>([^<]+)</td><td>([^<]+)</td>", tags)]
    assert shown and all(rates[backend][k]["cases"] >= 20 for backend, k in shown)
    assert ("greedy", "kind=generated") in shown
    folded = sum(len(r) for r in rates.values()) - len(shown)
    assert f"… and {folded:,} more rows, each with fewer than 20 case runs or a lower rate" in unescape(tags)


def test_tag_rates_are_counted_per_backend(tmp_path, zoo):
    """A backend that agrees beside one that fails leaves the failing one's rate whole: each
    backend's case runs are counted apart (they were summed, and an agreeing backend halved it)."""
    zoo("llama-spm")
    records = [{"id": f"c{n}", "text": t, "tags": {"kind": "formula"}} for n, t in enumerate(FORMULA_LIKE)]
    corpus = tmp_path / "formulas.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    out = tmp_path / "run"
    proc = tokparity("compare", "llama-spm", "-c", corpus, "-b", GREEDY, "-b", "hf", "-o", out, "-q")
    assert proc.returncode == 1, proc.stderr
    rates = summary(out)["tag_rates"]["llama-spm"]
    greedy, hf = rates["greedy"]["kind=formula"], rates["hf"]["kind=formula"]
    assert greedy["cases"] == hf["cases"] == len(records)
    assert hf["mismatches"] == 0 and greedy["mismatches"] > 0
    run = next(r for r in summary(out)["runs"] if r["backend"] == "greedy")
    assert greedy["mismatches"] == run["mismatches"]


# -- 4. the most telling case --------------------------------------------------------------------


@pytest.mark.parametrize("known, cls, cause, telling_cls", [
    pytest.param("specials", "special-parsing", "specials.parse", "ignore-merges", id="special-parsing-intended"),
    pytest.param("merges", "ignore-merges", "model.ignore-merges", "special-parsing", id="ignore-merges-intended"),
])
def test_most_telling_case_is_an_unexplained_one(tmp_path, zoo, known, cls, cause, telling_cls):
    """One engine, two deviations; one is listed as a known (intended) divergence: the write-up's
    symptom and most telling case are the other one, the bug the reader must act on."""
    zoo("llama-bpe")
    known_file = tmp_path / "known.toml"
    known_file.write_text(KNOWN.format(name=known, cls=cls, cause=cause), "utf-8")
    out = tmp_path / "run"
    proc = tokparity("compare", "llama-bpe", "-c", "edge", "-c", "multilingual", "-b", TOKENIZERS,
                     "--known", known_file, "--no-builtin-known", "-o", out, "-q")
    assert proc.returncode == 1, proc.stderr
    run = next(r for r in summary(out)["runs"] if r["backend"] == "mine")
    assert set(run["classes"]) == {"special-parsing", "ignore-merges"}  # both deviations are in the run
    assert run["unexplained"] == run["classes"][telling_cls]
    md = (out / "summary.md").read_text("utf-8")
    write_up = md[md.index("### llama-bpe · mine"):]
    assert f"- **Symptom**: `{telling_cls}` (" in write_up
    case_id = re.search(r"\*\*Most telling case\*\* (\S+?)[: ]", write_up).group(1)
    with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
        row = next(r for r in csv.DictReader(f) if f"{r['corpus']}/{r['case_id']}" == case_id.replace("\\", ""))
    assert row["known"] == "" and row["class"] == telling_cls, row
    page = (out / "report.html").read_text("utf-8")
    assert f"Most telling case: {case_id.replace(chr(92), '')}" in unescape(page)


# -- 5. mismatches.csv: an exact text column -------------------------------------------------------


def test_csv_text_json_is_exact_and_formula_safe(greedy):
    out, _, records = greedy
    texts = {r["id"]: r["text"] for r in records}
    with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
        rows = {r["case_id"]: r for r in csv.DictReader(f)}
    formulas = [f"formula-{n}" for n in range(len(FORMULA_LIKE))]
    assert set(formulas) <= set(rows)  # each one a mismatch, so each one in the CSV
    for row in rows.values():
        assert row["text_json"].startswith('"')  # no spreadsheet reads a cell starting with " as a formula
        assert json.loads(row["text_json"]) == texts[row["case_id"]]
    assert rows["formula-0"]["text"] == "'" + FORMULA_LIKE[0]  # the display column keeps its guard
    assert rows["formula-1"]["text"].startswith("'=")
    # tokparity explain reads the run back from the CSV-exact text (here: from the journal; the CSV
    # alone, as regress leaves it, must give the same)
    from tokparity.report.folder import read_csv

    back = {m.case_id: m.text for m in read_csv(out / "mismatches.csv")}
    assert all(back[c] == texts[c] for c in formulas)


# -- 6. a fuzz run's findings by cause -------------------------------------------------------------


def test_fuzz_findings_by_cause_in_every_report(fuzzed):
    from tokparity.report import html, markdown
    from tokparity.report.folder import read_folder
    from tokparity.report.plain import summary_lines

    # the fuzz run's own reports hold the section
    assert "\n## Findings by cause\n" in (fuzzed / "summary.md").read_text("utf-8")
    assert '<section id="findings">' in (fuzzed / "report.html").read_text("utf-8")

    results = read_folder(fuzzed).results
    assert results.fuzz is not None
    findings, seams = results.fuzz.findings, results.fuzz.seams
    assert findings and all(f.oracle_ids and f.backend_ids for f in findings)
    assert seams  # the Unicode and regex seams the run's unicode-seams cases crossed
    seam = f"{seams[0].seam} ({seams[0].cases:,}"
    first = max(findings, key=lambda f: (f.count, -f.found_after))
    named = first.label or first.cause
    ids = " ".join(map(str, first.oracle_ids))

    digest = "\n".join(summary_lines(results, 100))
    text = digest[digest.index("\n\nFindings by cause\n"):digest.index("\nRoot causes\n")]
    header = next(line for line in text.splitlines() if line.strip().startswith("cause "))
    assert header.split() == ["cause", "backend", "class", "cases", "first", "found", "after", "shrunk", "text"]
    row = next(line for line in text.splitlines() if line.strip().startswith(named) and "  " + first.backend in line)
    assert f"  {first.count:,}  " in row and f"{first.found_after:.1f} s" in row
    assert f"\n  oracle   {ids}" in text  # the ids side by side, pieces under them
    assert f"Seams covered: {seam}" in text

    md = markdown.render(results)
    part = md[md.index("## Findings by cause"):md.index("## Root cause, per model")]
    assert f"| {first.count:,} | {first.found_after:.1f} s |" in part
    assert f"oracle   {ids}" in part and "```" in part
    assert f"Seams covered: {seam}".replace("\\", "\\\\") in part  # (Markdown escapes the backslash of \\s)

    page = html.render(results)
    found = section(page, "findings")
    assert f"<td class='num'>{first.count:,}</td>" in found
    assert all(f'<span class="tid">{i}</span>' in found for i in first.backend_ids)
    assert f'Seams covered: <span title="{escape(seams[0].about)}">{escape(seam)}' in found


def test_no_findings_section_outside_fuzz(hf_gguf):
    out, proc = hf_gguf
    assert "Findings by cause" not in proc.stdout
    assert 'id="findings"' not in (out / "report.html").read_text("utf-8")


# -- 7. a run that tried no seam says so -----------------------------------------------------------

NO_SEAM = "⚠ This run tried no Unicode or regex-engine seam"


def test_a_run_without_the_seams_warns_in_every_report(hf_gguf):
    out, proc = hf_gguf  # -c edge only
    assert NO_SEAM in proc.stdout
    assert NO_SEAM in (out / "summary.md").read_text("utf-8")
    assert escape(NO_SEAM, quote=False) in (out / "report.html").read_text("utf-8")


def test_a_run_with_the_seams_or_a_fuzz_run_does_not_warn(tmp_path, fuzzed, zoo):
    zoo("llama-spm")
    proc = tokparity("compare", "llama-spm", "-c", "seams", "-b", "ref", "-o", tmp_path / "run", "-q")
    assert proc.returncode == 0, proc.stderr
    assert NO_SEAM not in proc.stdout and NO_SEAM not in (tmp_path / "run" / "summary.md").read_text("utf-8")
    assert NO_SEAM not in (fuzzed / "summary.md").read_text("utf-8")


def test_a_decoding_run_does_not_warn_of_seams_nor_of_the_shipped_lists_stale_entries(tmp_path, zoo):
    """Noise on a run that needs no seam (issue: the first hour, item 6): a stream run warned that
    it tried no Unicode seam, and every run asked the user to "remove or correct" entries of
    tokparity's own known list. A user's own stale entry is still said (tests/test_known.py)."""
    zoo("llama-bpe")
    proc = tokparity("compare", "llama-bpe", "-c", "edge", "-b", "ref", "--ops", "stream", "-o", tmp_path / "run", "-q")
    assert proc.returncode == 0, proc.stderr
    assert NO_SEAM not in proc.stdout and "stale known divergence" not in proc.stdout


def test_a_run_written_before_rates_per_backend_is_read(greedy, tmp_path):
    """A summary.json whose ``tag_rates`` maps each tag to its counts (before they were counted per
    model and backend) is read, its rates shown as those of one run, ``(all)``."""
    out, _, _ = greedy
    doc = summary(out)
    flat: dict[str, dict[str, int]] = {}
    for rates in doc["tag_rates"]["llama-spm"].values():
        for tag, rate in rates.items():
            into = flat.setdefault(tag, {"cases": 0, "mismatches": 0})
            into["cases"] += rate["cases"]
            into["mismatches"] += rate["mismatches"]
    old = tmp_path / "summary.json"
    old.write_text(json.dumps({**doc, "tag_rates": flat}), "utf-8")
    table = overview.tag_rates(read_summary(old))
    assert table.rows and {(row.model, row.backend) for row in table.rows} == {("(all)", "(all)")}
    assert {row.tag: row.cases for row in table.rows}["kind=generated"] == flat["kind=generated"]["cases"]


def test_a_log_holds_each_models_one_progress_line(tmp_path, zoo):
    """stderr that is not a terminal (a CI log) gets each model's closing line, not a count every
    500 cases; on a terminal the counts are written over one another."""
    zoo("llama-spm")
    proc = tokparity("compare", "llama-spm", "-c", "edge", "-b", "ref", "-b", "llama.cpp", "-o", tmp_path / "r")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert "llama-spm: 884 cases read, 0 mismatches against golden/llama.cpp" in lines
    assert not [line for line in lines if line.endswith("00 cases")], lines
    # the oracle's last judge has a row of few cases: the line under the table says why
    llama = next(r for r in summary(tmp_path / "r")["runs"] if r["backend"] == "llama.cpp")
    assert 0 < llama["cases"] < 884
    said = f"llama.cpp itself is judged by the golden ids, on the {llama['cases']} texts they hold"
    assert said in " ".join(proc.stdout.split()) and said in (tmp_path / "r" / "summary.md").read_text("utf-8")
