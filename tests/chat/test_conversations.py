"""Conversations as cases: the built-in ``chats``, user JSONL files with ``messages``, the
protocol's ``chat`` op for ``cmd:`` and ``py:`` engines, and clear errors for what is wrong."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tokparity.chat.conversation import Conversation
from tokparity.corpus import load_corpus
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

ENGINES = Path(__file__).parent / "engines.py"


def test_the_built_in_conversations_cover_the_shapes():
    cases = list(load_corpus("chats"))
    kinds = Counter(c.tags["chat"] for c in cases)
    assert len(cases) == 35 and len({c.id for c in cases}) == 35
    for kind in ("system", "alternation-broken", "whitespace", "empty-content", "content-parts", "tools",
                 "tool-call-object", "tool-call-string", "tool-result", "reasoning", "thinking", "non-ascii", "emoji",
                 "injection", "long-history", "continue", "date"):
        assert kinds[kind] >= 1, kind
    for case in cases:  # a case's text is its conversation, canonical: read back, the same text
        assert Conversation.from_text(case.text, case.id).to_text() == case.text


def _compare(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity", "compare", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


@pytest.mark.parametrize("line, said", [
    ('{"messages": []}', "chats.jsonl:2: 'messages' must be a non-empty list"),
    ('{"messages": [{"content": "no role"}]}', "chats.jsonl:2: messages[0] must be an object with a string 'role'"),
    ('{"messages": [{"role": "user", "content": 3}]}', "messages[0].content must be a string, a list of parts"),
    ('{"messages": [{"role": "user", "content": "x"}], "tools": {"a": 1}}', "'tools' must be a list of objects"),
    ('{"messages": [{"role": "user", "content": "x"}], "options": {"add_generation_prompt": true, '
     '"continue_final_message": true}}', "cannot both be set"),
    ('{"id": "t", "text": "a text, not a conversation"}', "t: not a conversation; --ops chat reads corpora"),
])
def test_a_bad_conversation_file_is_one_line_exit_2(zoo, tmp_path, line, said):
    zoo("qwen3")
    path = tmp_path / "chats.jsonl"
    path.write_text('{"id": "ok", "messages": [{"role": "user", "content": "Hi"}]}\n' + line + "\n", "utf-8")
    done = _compare("qwen3", "--ops", "chat", "-c", str(path), "-b", "hf", "-q", "-o", str(tmp_path / "out"),
                    cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_chat_runs_alone(tmp_path):
    done = _compare("qwen3", "--ops", "chat,encode", cwd=tmp_path)
    assert done.returncode == 2 and "give --ops chat alone" in done.stderr
    for command in (["compare", "qwen3", "--ops", "chat", "--ray"], ["regress", "qwen3", "--ops", "chat", "--ray"]):
        done = subprocess.run([sys.executable, "-m", "tokparity", *command], capture_output=True, text=True,
                              cwd=tmp_path, timeout=120)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_model_without_a_template_says_so(zoo, tmp_path):
    zoo("gpt-2")
    done = _compare("gpt-2", "--ops", "chat", "-q", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "gpt-2: its files carry no chat template: --ops chat has nothing to judge" in done.stderr


@pytest.mark.parametrize("how", ["cmd", "py"])
def test_engines_answer_over_the_protocol(zoo, how):
    """An engine answering with text alone, with ids alone, or with both, over the cmd: protocol
    and as a py: class: judged on what it gives; a malformed reply is a crash of the case."""
    zoo("qwen3")
    spec = (lambda mode: f"cmd:{sys.executable} {ENGINES} {{tokenizer_json}} {mode}") if how == "cmd" else \
        (lambda mode: f"py:{ENGINES}:{mode.title().replace('-', '')}")
    engines = {mode: spec(mode) for mode in ("text-only", "ids-only", "both", "malformed")}
    results = run_compare(["qwen3"], ["chats"], [f"{k}={v}" for k, v in engines.items()], CompareOptions(ops=("chat",)))
    runs = {r.backend: r for r in results.runs}
    for mode in ("text-only", "ids-only", "both"):
        assert (runs[mode].cases, runs[mode].mismatches) == (35, 0), [m.evidence for m in results.mismatches
                                                                       if m.backend == mode][:2]
    # (qwen3's template refuses 2 conversations, and so does the engine's: agreement, whatever it would have sent)
    assert runs["malformed"].mismatches == 33
    assert {m.cls for m in results.mismatches if m.backend == "malformed"} == {"crash"}


def test_wrong_engines_get_no_cause_they_do_not_show(zoo):
    """A refusal reproduces nothing (an engine that refuses everything gets no cause, whatever way of
    rendering also raises); an engine that gives the right text and no ids differs in ids, named by
    nothing; an engine that errs on every conversation with tools, having answered others, fails
    those (crash), not skipped into a pass."""
    zoo("qwen3")
    engines = {mode: f"cmd:{sys.executable} {ENGINES} {{tokenizer_json}} {mode}"
               for mode in ("refuses", "empty-ids", "errs-on-tools")}
    results = run_compare(["qwen3"], ["chats"], [f"{k}={v}" for k, v in engines.items()], CompareOptions(ops=("chat",)))
    runs = {r.backend: r for r in results.runs}
    found = {mode: Counter((m.cls, m.cause) for m in results.mismatches if m.backend == mode) for mode in engines}
    assert found["refuses"] == Counter({("chat-raises", ""): 33}), found["refuses"]
    assert found["empty-ids"] == Counter({("chat-ids", ""): 33}), found["empty-ids"]
    said = {m.cause_evidence.split(" prompt of ")[0] for m in results.mismatches if m.backend == "empty-ids"}
    assert said == {"the backend gave no ids for its"}, said  # (what it did, not a search that found nothing)
    tools = sum(1 for c in load_corpus("chats") if "tools" in json.loads(c.text))
    assert (runs["errs-on-tools"].cases, runs["errs-on-tools"].skipped) == (35, 0)
    assert found["errs-on-tools"] == Counter({("crash", ""): tools}), found["errs-on-tools"]


def test_a_conversation_corpus_in_a_text_run_is_refused(tmp_path):
    done = _compare("qwen3", "-c", "chats", "-b", "hf", "-q", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 2
    assert "chats/single-01: a conversation, not a text; run a corpus of conversations with --ops chat" in done.stderr


def _qwen3_folder(zoo, folder: Path, split_special_tokens: bool) -> Path:
    qwen3 = zoo("qwen3")
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes(Path(qwen3.path("tokenizer_json")).read_bytes())
    config = json.loads(Path(qwen3.path("tokenizer_config")).read_text("utf-8"))
    (folder / "tokenizer_config.json").write_text(json.dumps(config | {"split_special_tokens": split_special_tokens}),
                                                  "utf-8")
    return folder


def test_a_tokenizer_that_splits_the_templates_specials_is_caught_though_every_engine_agrees(zoo, tmp_path):
    """Qwen3's files with ``split_special_tokens: true``: transformers' apply_chat_template and the
    reference both tokenize ``<|im_start|>`` as ordinary tokens, so they agree; only the template's
    own check (``template:specials``) shows that the model gets a prompt it was not trained on.
    Its twin (the setting false, as Qwen3 ships) passes the check on every conversation."""
    split = _qwen3_folder(zoo, tmp_path / "qwen3-split", True)
    results = run_compare([str(split)], ["chats"], ["hf"], CompareOptions(ops=("chat",)))
    runs = {r.backend: r for r in results.runs}
    assert (runs["hf"].cases, runs["hf"].mismatches) == (35, 0)
    specials = runs["template:specials"]
    # (Qwen3's template refuses 2 of the 35 conversations: no prompt to check there)
    assert specials.cases == specials.mismatches == specials.unexplained == 33
    found = [m for m in results.mismatches if m.backend == "template:specials"]
    assert {m.cls for m in found} == {"chat-special-split"}
    single = next(m for m in found if m.case_id == "single-01")
    assert single.evidence.startswith("the prompt writes <|im_start|> (id 151644) at character 0, its special-token "
                                      "text number 1; in its ids no special id follows")
    assert single.oracle_pieces[:3] == ("<", "|", "im") and not single.cause
    twin = _qwen3_folder(zoo, tmp_path / "qwen3", False)
    results = run_compare([str(twin)], ["chats"], ["hf"], CompareOptions(ops=("chat",)))
    runs = {r.backend: r for r in results.runs}
    assert (runs["template:specials"].cases, runs["template:specials"].mismatches) == (33, 0)


def test_an_engine_that_edits_its_messages_does_not_change_the_next_ones(zoo):
    """A py: engine run in this process (as the API and the pytest plugin run one) that empties the
    message list and the options it was given after formatting them: the next engine still gets the
    whole conversation (each is given copies)."""
    from tokparity.backends.registry import make_backend
    from tokparity.run.options import Services

    qwen3 = zoo("qwen3")
    edits = make_backend(f"edits=py:{ENGINES}:EditsMessages", qwen3, isolate=False)
    engines = ["edits", f"next=py:{ENGINES}:Both"]
    results = run_compare(["qwen3"], ["chats"], engines, CompareOptions(ops=("chat",), services=Services(
        ready={"edits": edits})))
    runs = {r.backend: r for r in results.runs}
    assert (runs["edits"].cases, runs["edits"].mismatches) == (35, 0)
    assert (runs["next"].cases, runs["next"].mismatches) == (35, 0)
