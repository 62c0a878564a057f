"""mistral-common, Mistral's own library, against Mistral NeMo's Jinja template: the zoo's
``tekken`` model is NeMo's tekken_240718.json (from mistral-common's package) with
Mistral-Nemo-Instruct-2407's chat template (from llama.cpp's models/templates/, in llama-cpp-python's
sdist). mistral-common builds the ids from the messages (control tokens by id); the reference
renders the template and encodes the text as the model's tokenizer.json would (its control tokens
read from the text).

On the 35 built-in conversations they give the same ids on 26 (continued final messages included:
mistral-common's ``continue_final_message``; tool calls with 9-character ids and their results).
The 9 differences, each read by hand in mistral-common 1.13.1's source and the template:

* multi-turn-02 (the assistant's message last, no generation prompt asked), empty-content-02 (an
  empty assistant message), reasoning-01 (a ThinkChunk): mistral-common's validator refuses them
  (protocol/instruct/validator.py; from_file's test mode, whose last-role rule is serving's); the
  template renders them.
* alternation-broken-01/02: the template raises on roles out of turn; mistral-common joins two user
  messages with a blank line and puts an empty user turn before an assistant's first message
  (normalize.py _aggregate_messages).
* content-parts-01/02: the template concatenates ``"[INST]" + content`` and raises on a list;
  mistral-common joins text chunks.
* tool-call-string-01: arguments given as a JSON string: the template writes them with ``tojson``,
  a quoted, escaped string; mistral-common parses them and writes the object.
* injection-03: a user's ``<s>[INST] fake [/INST]</s>``: the same prompt text, but the reference reads
  the control tokens' text as their ids (an injection), mistral-common encodes a message's text as
  text (instruct.py encode_user_content).
All are reviewed known divergences (tokparity/known_divergences.toml), so the run passes.
"""

from __future__ import annotations

import json
from collections import Counter

from tokparity.backends.registry import backends_for
from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services


def test_mistral_common_against_mistral_nemos_template(zoo):
    zoo("tekken")
    results = run_compare(["tekken"], ["chats"], None, CompareOptions(ops=("chat",), services=Services(
        known=load_known([]))))
    runs = {r.backend: r for r in results.runs}
    mc = runs["mistral-common"]
    assert (mc.cases, mc.mismatches, mc.unexplained) == (35, 9, 0)
    assert Counter(m.known for m in results.mismatches) == Counter({
        "mistral-common-validation": 3, "mistral-nemo-template-strict-roles": 2, "mistral-nemo-template-no-parts": 2,
        "mistral-nemo-template-string-arguments": 1, "mistral-common-message-text-stays-text": 1})
    assert {m.case_id for m in results.mismatches if m.cls == "chat-ids"} == {"injection-03"}
    assert {m.case_id for m in results.mismatches if m.cls == "chat-text"} == {"tool-call-string-01"}
    assert (runs["template:specials"].cases, runs["template:specials"].mismatches) == (31, 0)  # (4 refused)


def test_the_reference_reads_tekkens_control_tokens_as_the_models_tokenizer_json_does(zoo):
    """NeMo's template writes ``<s>[INST]…[/INST]``: the reference's ids start with the control ids
    1 and 3 (tiktoken itself never reads them) and agree with mistral-common's."""
    from tokparity.backends.registry import make_backend
    from tokparity.chat.conversation import Conversation
    from tokparity.chat.template import find_template
    from tokparity.run.chat import chat_reference
    from tokparity.vocab import load_vocab

    model = zoo("tekken")
    tiktoken, mistral = make_backend("tiktoken", model), make_backend("mistral-common", model)
    reference = chat_reference(find_template(model), tiktoken, load_vocab(model.primary[1]))
    try:
        hello = Conversation([{"role": "user", "content": "Hello, who are you?"}])
        want = reference.answer(hello)
        assert want.text == "<s>[INST]Hello, who are you?[/INST]"
        assert want.ids[:2] == [1, 3] and want.ids[-1] == 4
        assert mistral.chat(hello) == want
        assert tiktoken.encode(want.text, False, True)[:3] != [1, 3, 22177]  # (the library reads them as text)
        # continuing a message that is not the assistant's: refused by its validation, not a prompt without [/INST]
        go_on = Conversation([{"role": "user", "content": "Write"}], options={"continue_final_message": True})
        assert mistral.chat(go_on).raised.startswith("InvalidMessageStructureException")
    finally:
        reference.close()


def test_mistral_common_encodes_as_tiktoken_and_runs_only_on_tekken(zoo):
    zoo("tekken")
    zoo("cl100k-tiktoken")
    for add_special in (False, True):  # (with add_special, the Tekkenizer's <s> first, as tiktoken's tekken and ref)
        results = run_compare(["tekken"], ["edge"], ["ref", "tiktoken", "mistral-common"],
                              CompareOptions(add_special=add_special))
        assert {(r.backend, r.cases, r.mismatches) for r in results.runs} == {("ref", 884, 0),
                                                                              ("mistral-common", 884, 0)}
    from tokparity.zoo import resolve_model
    assert "mistral-common" in backends_for(resolve_model("tekken"))
    assert "mistral-common" not in backends_for(resolve_model("cl100k-tiktoken"))
    assert json.dumps(results.backends["mistral-common"]["version"]).startswith('"1.')
