"""chat-formatter 0.3.4 (npm), a package of fixed, hand-ported chat formats, run as its users call
it (tests/engines/thirdparty/chat_formatter.mjs) on Gemma 3 with its ``gemmaIt`` format.

Read in its source (dist/templates/gemmaItTemplate.js): a user message's content goes into a
string with ``+``, so a content of parts becomes ``[object Object]`` (line 21): the row is named
``chat.parts-stringified``, as the blind engine of tests/chat/test_parts_stringified.py is. A
system message of parts goes through nunjucks' ``trim`` first (line 11), which throws: that
conversation is refused where the template makes a prompt, ``chat.parts-refused``. The system
text and the first user message are trimmed as one (line 30), so a blank system message vanishes:
``chat.system-joined-to-user`` (docs/findings.md, the fifth survey's C2). ``chat.system-dropped``
makes that one prompt too, but it would change every agreeing conversation with a system message."""

from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

from tokparity.cli import main

sys.path.insert(0, str(Path(__file__).parents[1] / "diagnose"))
from thirdparty import ENGINES, node_engines  # noqa: E402, F401  (tests/diagnose/thirdparty.py; node_engines: a fixture)

sys.path.pop(0)


def test_a_content_of_parts_written_as_object_object_is_named(node_engines, zoo, tmp_path):
    zoo("gemma-3")
    command = f"{shutil.which('node') or 'node'} {ENGINES / 'chat_formatter.mjs'} gemmaIt"
    out = tmp_path / "out"
    assert main(["compare", "gemma-3", "--ops", "chat", "-q", "-b", f"cf=cmd:{command}", "-o", str(out)]) == 1
    with open(out / "mismatches.csv", encoding="utf-8", newline="") as f:
        rows = {r["case_id"]: r for r in csv.DictReader(f) if r["backend"] == "cf"}
    assert rows["content-parts-01"]["cause"] == "chat.parts-stringified"
    assert "[object Object]" in json.loads(rows["content-parts-01"]["backend_output"])[0]
    assert (rows["content-parts-02"]["class"], rows["content-parts-02"]["cause"]) == ("chat-raises", "chat.parts-refused")
    assert rows["whitespace-03"]["cause"] == "chat.system-joined-to-user"
    assert set(rows) == {"content-parts-01", "content-parts-02", "whitespace-03"}
