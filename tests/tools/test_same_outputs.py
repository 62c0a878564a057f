"""tools/same_outputs.py: a refactoring's before/after check says 'same' only where the code's
outputs are the same, the clock's aside."""

from __future__ import annotations

import json
from pathlib import Path

from tools.same_outputs import main

FUZZ_HEADER = json.dumps({"journal": 1, "command": "fuzz", "args": {}})
RECORD = json.dumps({"model": "m", "n": 0, "case_id": "c", "corpus": "x", "verdicts": {"b": "agree"}})


def run_folder(root: Path, csv: str, found_after: float, elapsed: float) -> None:
    folder = root / "run"
    folder.mkdir(parents=True)
    (folder / "mismatches.csv").write_text(csv, "utf-8")
    finding = {"id": "f", "cause": "model.greedy-longest-match", "found_after": found_after, "shrink_seconds": 0.1}
    notes = [json.dumps({"note": {"finding": finding, "elapsed": elapsed}}), json.dumps({"note": {"elapsed": elapsed}})]
    (folder / "cases.jsonl").write_text("\n".join([FUZZ_HEADER, RECORD, *notes]) + "\n", "utf-8")
    (folder / "summary.json").write_text(json.dumps({"runs": [], "seconds": elapsed, "timing": {"jobs": 1}}), "utf-8")


def test_the_clock_is_not_a_difference(tmp_path, capsys):
    run_folder(tmp_path / "before", "model,class\nm,merge-order\n", found_after=0.2, elapsed=9.0)
    run_folder(tmp_path / "after", "model,class\nm,merge-order\n", found_after=0.4, elapsed=12.0)
    assert main([str(tmp_path / "before"), str(tmp_path / "after"), "run"]) == 0
    assert capsys.readouterr().out.split("\n")[:3] == ["same  run/mismatches.csv", "same  run/cases.jsonl",
                                                        "same  run/summary.json"]


def test_a_changed_row_is(tmp_path, capsys):
    run_folder(tmp_path / "before", "model,class\nm,merge-order\n", found_after=0.2, elapsed=9.0)
    run_folder(tmp_path / "after", "model,class\nm,whitespace-runs\n", found_after=0.2, elapsed=9.0)
    assert main([str(tmp_path / "before"), str(tmp_path / "after"), "run"]) == 1
    assert "DIFF  run/mismatches.csv" in capsys.readouterr().out


def test_a_journal_sealed_with_another_key_is_the_same(tmp_path, capsys):
    for side, seal in (("before", "0" * 32), ("after", "f" * 32)):
        folder = tmp_path / side / "run"
        folder.mkdir(parents=True)
        header = json.dumps({"journal": 1, "command": "compare", "args": {}})
        (folder / "cases.jsonl").write_text(f'{header}\n{RECORD[:-1]}, "seal": "{seal}"}}\n', "utf-8")
    assert main([str(tmp_path / "before"), str(tmp_path / "after"), "run"]) == 0
