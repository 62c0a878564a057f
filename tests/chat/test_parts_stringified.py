"""``chat.parts-stringified``, judged on an engine a helper wrote blind from one paragraph
(tests/engines/blind/chat_parts_js.mjs: @huggingface/jinja rendering the model's template; with
``--bug parts-as-string`` a content of parts goes through JavaScript's ``String`` first, as a
hand-written builder's template string does, and each part becomes ``[object Object]``). The real
case is chat-formatter 0.3.4 (docs/findings.md, the fifth survey's C3).

Gemma 3's template reads parts and writes their text; Qwen3's refuses a list (it calls
``startswith`` on the content), so the bug makes a prompt where the template refuses. Both rows
are named, the verdict is proven, and the bug-free twin agrees on every conversation."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

import pytest

from tokparity.cli import main

sys.path.insert(0, str(Path(__file__).parents[1] / "diagnose"))
from thirdparty import node_engines  # noqa: E402, F401  (tests/diagnose/thirdparty.py: a fixture)

sys.path.pop(0)

ENGINE = Path(__file__).parents[1] / "engines" / "blind" / "chat_parts_js.mjs"
MODELS = ("gemma-3", "qwen3")
PARTS = {"content-parts-01", "content-parts-02"}


@pytest.mark.parametrize("bug", ["parts-as-string", None], ids=["bug", "twin"])
def test_a_content_of_parts_written_as_a_string_is_named(node_engines, zoo, tmp_path, bug):
    for model in MODELS:
        zoo(model)
    command = f"{shutil.which('node') or 'node'} {ENGINE} {{tokenizer_config}}" + (f" --bug {bug}" if bug else "")
    out = tmp_path / "out"
    code = main(["compare", *MODELS, "--ops", "chat", "-q", "-b", f"mine=cmd:{command}", "-o", str(out)])
    runs = {r["model"]: r for r in json.loads((out / "summary.json").read_text("utf-8"))["runs"]
            if r["backend"] == "mine"}
    with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["backend"] == "mine"]
    assert sorted(runs) == sorted(MODELS)
    if bug is None:
        assert code == 0 and rows == [] and all(r["cases"] == 33 for r in runs.values())
        return
    assert code == 1
    assert {(r["model"], r["case_id"]) for r in rows} == {(m, c) for m in MODELS for c in PARTS}
    assert {r["cause"] for r in rows} == {"chat.parts-stringified"}
    for run in runs.values():
        assert run["root_cause"]["cause"] == "chat.parts-stringified" and run["root_cause"]["proven"]
    assert {r["class"] for r in rows if r["model"] == "qwen3"} == {"chat-raises"}
