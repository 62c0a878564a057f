"""Two backends that answer a conversation alike share its chat diagnosis: the search runs once.
Two copies of one blind engine (tests/engines/blind/blind35_chat.py, LangChain's merged runs)
get the same cause on every row, and the chat sandbox renders each request once."""

from __future__ import annotations

import sys
from pathlib import Path

import tokparity.diagnose.model as model
from tokparity.backends.engine_process import EngineProcess
from tokparity.chat.sandbox import TemplateSandbox
from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

BLIND = Path(__file__).parents[1] / "engines" / "blind"
CHAT = f"cmd:{sys.executable} {BLIND / 'blind35_chat.py'} {{tokenizer_json}} {{tokenizer_config}}"


def test_backends_that_answer_alike_share_one_chat_diagnosis(zoo, monkeypatch):
    zoo("qwen3")
    searched: list[str] = []
    search = model.diagnose_chat
    monkeypatch.setattr(model, "diagnose_chat", lambda reference, j: searched.append(j.case_id) or search(reference, j))
    asked: list[tuple[int, str]] = []  # (each render asked of a sandbox)
    render = TemplateSandbox.render
    monkeypatch.setattr(TemplateSandbox, "render", lambda self, *a, **k: asked.append((id(self.engine), repr(a)))
                        or render(self, *a, **k))
    sent: list[tuple[int, str]] = []  # (each request that reaches a sandbox's child)
    request = EngineProcess.request
    monkeypatch.setattr(EngineProcess, "request", lambda self, body, *a, **k: (
        sent.append((id(self), body)) if self.label == "chat template sandbox" else None) or request(self, body, *a, **k))
    bug = "--bug merge-runs-newline"
    results = run_compare(["qwen3"], ["chats"], [f"a={CHAT} {bug}", f"b={CHAT} {bug}"], CompareOptions(ops=("chat",)))
    rows = {(m.backend, m.case_id): m.cause for m in results.mismatches}
    cases = sorted({case for _, case in rows})
    assert cases and all(rows["a", case] == rows["b", case] for case in cases), rows
    assert any(rows["a", case] == "chat.turns-merged" for case in cases), rows
    assert sorted(searched) == cases  # (once a conversation, for the two backends)
    runs = {r.backend: r.root_cause for r in results.runs}
    assert runs["a"] is not None and runs["a"].cause == runs["b"].cause == "chat.turns-merged"
    # (the sandbox's child renders each request once; a repeated one is answered from what it kept)
    assert len(asked) > len(set(asked)) and len(sent) == len(set(sent)) == len(set(asked))
