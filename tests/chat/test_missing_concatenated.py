"""``chat.missing-concatenated``, tested as a claim: an engine whose template language adds a
string and a missing value as if the missing one were empty is named by it, and its bug-free twin
agrees. The engine (tests/engines/blind/blind17_chat.py) was written by a helper from one line of
llama.cpp's Jinja engine, without reading tokparity's diagnosis. The template writes each tool as
``'<tool>' + tool.name + '</tool>'``: OpenAI-style tools have their name under ``function``, so
transformers refuses every conversation with tools, and the engine writes ``<tool></tool>``.

llama.cpp's own engine on Command R's template (tests/backends/test_llama_server.py) needs the
cause's other form: an attribute of a missing value is missing too."""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from pathlib import Path

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

BLIND = Path(__file__).parents[1] / "engines" / "blind" / "blind17_chat.py"
TOOL_NAMES = (
    "{% if tools %}{{ '<|im_start|>system\\n# Tools\\n' }}{% for tool in tools %}"
    "{{ '<tool>' + tool.name + '</tool>\\n' }}{% endfor %}{{ '<|im_end|>\\n' }}{% endif %}"
    "{% for message in messages %}{{ '<|im_start|>' + message.role + '\\n' + (message.content or '') + '<|im_end|>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")


def test_a_missing_value_read_as_empty_is_named_and_the_twin_agrees(zoo, tmp_path):
    qwen3 = zoo("qwen3")
    folder = tmp_path / "tool-names"
    folder.mkdir()
    shutil.copy(qwen3.path("tokenizer_json"), folder / "tokenizer.json")
    config = json.loads(Path(qwen3.path("tokenizer_config")).read_text("utf-8"))
    (folder / "tokenizer_config.json").write_text(json.dumps(config | {"chat_template": TOOL_NAMES}), "utf-8")
    engine = f"cmd:{sys.executable} {BLIND} {{tokenizer_json}}"
    results = run_compare([str(folder)], ["chats"], [f"twin={engine}", f"bug={engine} --bug null-concat"],
                          CompareOptions(ops=("chat",)))
    runs = {r.backend: r for r in results.runs}
    assert (runs["twin"].cases, runs["twin"].mismatches) == (35, 0)
    causes = Counter(m.cause for m in results.mismatches if m.backend == "bug")
    assert runs["bug"].mismatches == 5 and causes == {"chat.missing-concatenated": 5}, causes
    assert all(m.cls == "chat-raises" for m in results.mismatches if m.backend == "bug")
    verdict = runs["bug"].root_cause
    assert verdict.cause == "chat.missing-concatenated" and verdict.proven, verdict
