"""``explain`` on a finished run's folder edited by hand (issue: hostile input, round 2): fields of
summary.json of the wrong kind gave tracebacks when the report was built, and a mismatching case over
131,072 characters gave ``_csv.Error: field larger than field limit``. Each edit is now one line
naming the file, exit 2; the long case is explained."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from cli_runs import tokparity

ROOT = Path(__file__).resolve().parents[2]
GREEDY = f"greedy=cmd:{sys.executable} {ROOT / 'examples' / 'engines' / 'greedy_engine.py'} {{gguf}}"


@pytest.fixture(scope="module")
def finished(tmp_path_factory, zoo) -> Path:
    """A run of llama-spm against a greedy engine, one of whose mismatching texts is 140,000 characters."""
    zoo("llama-spm")
    folder = tmp_path_factory.mktemp("explain")
    texts = [" !", " #", " !" * 70_000]  # (the greedy engine splits ' !' otherwise: each a mismatch)
    (folder / "texts.jsonl").write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n"
                                                for i, t in enumerate(texts)), "utf-8")
    done = tokparity("compare", "llama-spm", "-c", "texts.jsonl", "-b", "ref", "-b", GREEDY, "--no-diagnose",
                     "-o", "run", "-q", cwd=folder)
    assert done.returncode == 1, done.stderr
    return folder / "run"


def test_a_long_mismatching_case_is_explained(finished):
    done = tokparity("explain", str(finished), cwd=finished.parent)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]


@pytest.mark.parametrize("edit", [
    lambda d: d["runs"][0].update(cases="x"),
    lambda d: d["runs"][0].update(classes=[1]),
    lambda d: d["runs"][0].update(causes={"a": "b"}),
    lambda d: d["runs"][0].update(root_cause=5),
    lambda d: d["runs"][0].update(not_applicable_cases=7),
    lambda d: d.update(runs=[5]),
    lambda d: d.update(tag_rates=[1]),
    lambda d: d.update(tag_rates={"script=Latn": 3}),
    lambda d: d.update(seconds="x"),
    lambda d: d.update(known="x"),
    lambda d: d.update(backends=[]),
    "deep",  # (the file replaced by 100,000 nested lists: a RecursionError traceback before)
], ids=["cases", "classes", "causes", "root_cause", "not_applicable_cases", "runs", "tag_rates", "tag_rate",
        "seconds", "known", "backends", "deep"])
def test_a_hand_edited_summary_is_one_line(finished, tmp_path, edit):
    folder = tmp_path / "run"
    shutil.copytree(finished, folder)
    summary = json.loads((folder / "summary.json").read_text("utf-8"))
    if edit == "deep":
        (folder / "summary.json").write_text("[" * 100_000 + "]" * 100_000, "utf-8")
    else:
        edit(summary)
        (folder / "summary.json").write_text(json.dumps(summary), "utf-8")
    done = tokparity("explain", str(folder), cwd=tmp_path)
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokparity: error: ") and "summary.json" in lines[0], lines


@pytest.mark.parametrize("column, value, said", [
    ("oracle_ids", "[" * 50_000 + "]" * 50_000, "RecursionError"),  # (a traceback before)
    ("oracle_ids", '[1, "a"]', "not a JSON list of integers"),
    ("backend_ids", "[true]", "not a JSON list of integers"),
    ("oracle_pieces", "{}", "not a JSON list of strings"),
    ("backend_pieces", "[1, 2]", "not a JSON list of strings"),
    ("backend_output", "[1]", "not a JSON list of strings"),
    ("first_diff", "x", "invalid literal for int()"),
    ("text_json", "5", "text_json is not a JSON string"),
], ids=["deep-list", "mixed-ids", "bool-ids", "object-pieces", "int-pieces", "int-output", "bad-int", "number-text"])
def test_a_hand_edited_mismatches_csv_is_one_line(finished, tmp_path, column, value, said):
    import csv

    folder = tmp_path / "run"
    shutil.copytree(finished, folder)
    path = folder / "mismatches.csv"
    csv.field_size_limit(1 << 30)  # (the run holds a 140,000-character case)
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, [dict(r, **{column: value}) for r in reader]
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    done = tokparity("explain", str(folder), cwd=tmp_path)
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokparity: error: ") and "mismatches.csv:2:" in lines[0], lines
    assert said in lines[0]
