"""A Llama 3 chat format written by hand (tests/engines/handwritten_llama3_chat.py), one bug per
class: each is named by the cause that reproduces it, and the twin agrees. The same causes named
real packages' formats: llama-cpp-agent 0.2.35's Llama 3 format (one newline after a header, the
generation prompt stripped, parts refused) and kani 1.10's Mistral format ("[INST]Hello")."""

from __future__ import annotations

from pathlib import Path

from tokparity.run.driver import run_compare
from tokparity.run.options import CompareOptions

ENGINE = Path(__file__).parents[1] / "engines" / "handwritten_llama3_chat.py"


def test_each_bug_of_a_handwritten_format_is_named_and_its_twin_agrees(zoo):
    zoo("llama-bpe")
    bugs = {"one": "OneNewline", "strip": "Stripped", "parts": "StringsOnly"}
    results = run_compare(["llama-bpe"], ["chats"], [f"twin=py:{ENGINE}:Twin"]
                          + [f"{label}=py:{ENGINE}:{name}" for label, name in bugs.items()], CompareOptions(ops=("chat",)))
    runs = {r.backend: r for r in results.runs}
    assert runs["twin"].mismatches == 0 and runs["twin"].cases > 20
    rows: dict[str, list[str]] = {}
    for m in results.mismatches:
        rows.setdefault(m.backend, []).append(m.cause)
    # one newline after each header, the generation prompt's too: the header's whitespace, read off
    # the prompt ("\n"); a content the template trims and that starts with whitespace is not marked
    assert rows["one"].count("chat.header-spacing") >= 20, rows["one"]
    assert "'\\n'" in next(m.cause_evidence for m in results.mismatches if m.cause == "chat.header-spacing")
    assert set(rows["strip"]) == {"chat.trailing-space-stripped"}, rows["strip"]
    assert set(rows["parts"]) == {"chat.parts-refused"}, rows["parts"]
    verdict = runs["parts"].root_cause
    assert verdict is not None and verdict.cause == "chat.parts-refused" and verdict.proven
    assert verdict.keeps == verdict.agreements > 20


def test_a_header_space_before_a_content_that_begins_with_whitespace(zoo):
    """kani 1.10's Mistral format writes "[INST] " before every content, the content's own newline
    after it: "[INST] \\nleading newline". That content was not marked (a template may trim it), so
    no way wrote the space there. Mistral Nemo's template trims nothing: such a content is marked,
    and the header's space is told apart from the content's newline."""
    from tokparity.chat.conversation import Conversation
    from tokparity.chat.reference import ChatReference
    from tokparity.chat.sandbox import TemplateSandbox
    from tokparity.chat.template import find_template
    from tokparity.chat.way import TRANSFORMERS_WAY
    from tokparity.diagnose.chat_read import _before_content_read

    template = find_template(zoo("tekken"))
    assert not template.trims
    reference = ChatReference(template, lambda text, parse: [], None, TemplateSandbox(10))
    try:
        chat = Conversation([{"role": "user", "content": "\nleading newline"},
                             {"role": "assistant", "content": "trailing newline\n"},
                             {"role": "user", "content": "\ttab\t"}], options={"add_generation_prompt": True})
        right = reference.text(chat, TRANSFORMERS_WAY)
        assert right == "<s>[INST]\nleading newline[/INST]trailing newline\n</s>[INST]\ttab\t[/INST]"
        kani = "<s>[INST] \nleading newline[/INST] trailing newline\n</s>[INST] \ttab\t[/INST]"
        assert _before_content_read(reference, chat, kani, right)[0] == " "
        assert reference.text(chat, TRANSFORMERS_WAY.changed(before_content=" ")) == kani
    finally:
        reference.close()


def test_a_header_space_read_where_the_template_refuses_the_conversation(zoo):
    """kani 1.10's Mistral format checks no role order: an assistant first is "<s> I speak
    first.</s>[INST] Hello.[/INST]", where Mistral Nemo's template raises. The header's space is
    read off the prompt the template makes with its checks skipped, so the two causes together
    reproduce the prompt (chat.template-checks-skipped+chat.header-spacing)."""
    from tokparity.chat.conversation import Conversation
    from tokparity.chat.reference import ChatReference
    from tokparity.chat.sandbox import TemplateSandbox
    from tokparity.chat.template import find_template
    from tokparity.chat.way import TRANSFORMERS_WAY
    from tokparity.diagnose.chat_read import _before_content_read

    reference = ChatReference(find_template(zoo("tekken")), lambda text, parse: [], None, TemplateSandbox(10))
    try:
        chat = Conversation([{"role": "assistant", "content": "I speak first."},
                             {"role": "user", "content": "Hello."}], options={"add_generation_prompt": True})
        assert reference.answer(chat).raised
        kani = "<s> I speak first.</s>[INST] Hello.[/INST]"
        assert _before_content_read(reference, chat, kani, None)[0] == " "
        assert reference.text(chat, TRANSFORMERS_WAY.changed(raise_exception="", before_content=" ")) == kani
    finally:
        reference.close()
