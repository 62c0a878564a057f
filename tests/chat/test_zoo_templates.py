"""``compare --ops chat`` on every zoo model that carries a chat template: the reference (the
template rendered as transformers renders it, in the sandbox, encoded by the oracle) agrees with
transformers' ``apply_chat_template`` on every built-in conversation, and llama.cpp's built-in
templates are judged against the models' own (docs/findings.md#chat-templates lists what differs)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tokparity.backends.registry import make_backend
from tokparity.chat.template import find_template
from tokparity.run.driver import run_compare
from tokparity.run.known import load_known
from tokparity.run.options import CompareOptions, Services
from tokparity.zoo import load_manifest, resolve_model

CHAT = CompareOptions(ops=("chat",))
CONVERSATIONS = 35  # corpora/chats.jsonl
# Where each zoo model's template is: transformers' files (tokenizer_config.json), the GGUF's
# metadata, or a template file of its own (tekken: Mistral NeMo's, judged against mistral-common in
# tests/chat/test_mistral_common.py; gpt-oss: openai/gpt-oss-120b's, both as llama.cpp keeps them);
# the llama.cpp vocabulary files of the other models carry none.
WITH_TEMPLATES = {"llama-bpe": "tokenizer_config.json", "qwen3": "tokenizer_config.json",
                  "gemma-3": "tokenizer_config.json", "deepseek-v3": "tokenizer_config.json",
                  "gemini": "tokenizer_config.json", "phi-3": ".gguf", "qwen2": ".gguf", "qwen35": ".gguf",
                  "command-r": ".gguf", "gemma-4": ".gguf", "tekken": ".jinja", "gpt-oss": ".jinja"}


def test_which_zoo_models_carry_a_template(zoo):
    found = {}
    for name in load_manifest().models:
        model = zoo(name)
        template = find_template(model)
        if template is not None:
            found[name] = next((kind for kind in (".gguf", ".jinja") if kind in template.source), "tokenizer_config.json")
    assert found == WITH_TEMPLATES


@pytest.mark.parametrize("model", [m for m, where in WITH_TEMPLATES.items() if where == "tokenizer_config.json"])
def test_the_reference_agrees_with_transformers(zoo, model):
    """Every conversation of ``chats`` (tools, tool calls, reasoning, content parts, continued
    messages, injections…): the same prompt text and ids as transformers' apply_chat_template.
    The progress line names the oracle as the table does (it said "against hf")."""
    zoo(model)
    said: list[str] = []
    results = run_compare([model], ["chats"], ["hf"], CompareOptions(ops=("chat",), services=Services(progress=said.append)))
    (run,) = [r for r in results.runs if r.backend == "hf" and r.op == "chat"]
    assert (run.cases, run.mismatches, run.skipped) == (CONVERSATIONS, 0, 0), results.mismatches[:1]
    assert f"{model}: {CONVERSATIONS} cases read, 0 mismatches against {run.oracle}" in said
    assert run.oracle.startswith("template+")


# The GGUFs' templates through transformers (hf-gguf: apply_chat_template on the tokenizer transformers
# converts from the GGUF, with the template and special tokens from_pretrained(gguf_file=…) sets):
# where the prompt's ids differ, how many, and the reviewed divergence that says why.
GGUF_THROUGH_TRANSFORMERS = {
    "phi-3": {"hf-gguf-chat-phi3-specials-keep-whitespace": 33},  # the same text; \n after <|user|> kept
    "qwen2": {"hf-gguf-chat-eos-text-stays-text": 1},  # a typed '</s>': llama.cpp makes it a control id
    "qwen35": {"hf-gguf-chat-eos-text-stays-text": 1},
    "command-r": {"hf-gguf-chat-tool-use-template-not-read": 2},  # the file's tool_use template not read
    "gemma-4": {},
}


@pytest.mark.parametrize("model", sorted(GGUF_THROUGH_TRANSFORMERS))
def test_the_reference_renders_the_ggufs_templates_as_transformers_does(zoo, model):
    """The five templates that only a GGUF carries, rendered by transformers' apply_chat_template: the
    same prompt text as the reference on every conversation both render; the prompts whose ids
    differ are the converted tokenizer's: its own encoding of the reference's text gives its ids."""
    zoo(model)
    results = run_compare([model], ["chats"], ["hf-gguf"], CompareOptions(ops=("chat",),
                                                                         services=Services(known=load_known(None))))
    (run,) = [r for r in results.runs if r.backend == "hf-gguf" and r.op == "chat"]
    mismatches = [m for m in results.mismatches if m.backend == "hf-gguf"]
    assert (run.cases, run.unexplained) == (CONVERSATIONS, 0)
    assert Counter(m.known for m in mismatches) == Counter(GGUF_THROUGH_TRANSFORMERS[model])
    converted = make_backend("hf-gguf", resolve_model(model))
    for m in mismatches:
        if m.cls == "chat-ids":
            assert m.backend_output == m.oracle_output, m.case_id  # the same prompt text
            assert converted.encode(m.oracle_output[0], False, True) == list(m.backend_ids), m.case_id
            assert "the text was encoded otherwise" in m.cause_evidence, (m.case_id, m.cause_evidence)
        else:
            assert m.cls == "chat-raises" and m.cause == "chat.tool-use-template-ignored"
            assert json.loads(m.text).get("tools"), m.case_id


# llama.cpp's built-in templates (llama_chat_apply_template) on the GGUFs' own templates: the
# conversations they take (a role and a string per message: 25 of 35), how many are other prompts
# than the template makes, and the cause named by reproducing them.
BUILTINS = {
    # Qwen2's template adds "You are a helpful assistant" where no system message is given; the built-in ChatML does not
    "qwen2": (25, 19, {"chat.llama-cpp-builtin": 19}),
    "qwen35": (25, 19, {"chat.llama-cpp-builtin": 19}),
    # Phi-3's template drops system messages and writes <s>; the built-in keeps them and the tokenizer adds the BOS
    "phi-3": (25, 9, {"chat.bos-added+chat.llama-cpp-builtin": 9}),
    # Command R's template refuses roles out of turn and keeps a whitespace-only system message;
    # the built-in takes the first and trims the second
    "command-r": (25, 3, {"chat.bos-added+chat.llama-cpp-builtin": 3}),
    # no built-in template matches Gemma 4's: llama.cpp without --jinja cannot format it (every conversation skipped)
    "gemma-4": (0, 0, {}),
    # the GGUFs tokparity converts from the tokenizer.json carry tokenizer_config.json's template
    "gemma-3": (25, 3, {"chat.bos-added+chat.llama-cpp-builtin": 3}),
    "deepseek-v3": (25, 6, {"chat.bos-added+chat.llama-cpp-builtin": 6}),
}


@pytest.mark.parametrize("model", sorted(BUILTINS))
def test_llama_cpp_builtins_against_the_models_templates(zoo, model):
    zoo(model)
    results = run_compare([model], ["chats"], ["llama.cpp"], CompareOptions(ops=("chat",),
                                                                           services=Services(known=load_known(None))))
    (run,) = [r for r in results.runs if r.backend == "llama.cpp" and r.op == "chat"]
    judged, differ, causes = BUILTINS[model]
    assert (run.cases, run.mismatches, run.skipped) == (judged, differ, CONVERSATIONS - judged)
    mismatches = [m for m in results.mismatches if m.backend == "llama.cpp"]
    assert Counter(m.cause for m in mismatches) == Counter(causes)
    assert {m.cls for m in mismatches} <= {"chat-text", "chat-raises"}
    # each is a reviewed known divergence of the built-in list: the run's verdict is about the other backends
    assert run.unexplained == 0 and all(m.known.startswith("llama-cpp-builtin-") for m in mismatches)


@pytest.mark.parametrize("model, judged, differ", [("gemma-3", 28, 0), ("gemma-4", 33, 7), ("command-r", 0, 0)])
def test_templates_that_read_parts_take_string_and_parts_alike(zoo, model, judged, differ):
    """Where a template reads list-of-parts content, the same conversation with its strings sent as
    parts must give the same prompt (``template:parts``; skipped where the template refuses parts,
    as Command R's does). Gemma 4's writes a system message's parts as Python's text of the list."""
    zoo(model)
    results = run_compare([model], ["chats"], ["hf" if model == "gemma-3" else "llama.cpp"],
                          CompareOptions(ops=("chat",), services=Services(known=load_known(None))))
    (run,) = [r for r in results.runs if r.backend == "template:parts"]
    assert (run.cases, run.mismatches, run.unexplained) == (judged, differ, 0)
    parts = [m for m in results.mismatches if m.backend == "template:parts"]
    assert all(m.cause == "chat.content-as-parts" and m.known == "gemma4-template-system-parts" for m in parts)
    assert all(json.loads(m.text)["messages"][0]["role"] == "system" for m in parts)


def test_templates_saved_as_files_and_split_special_tokens(zoo, tmp_path):
    """As transformers 5 saves a tokenizer: the template in chat_template.jinja, the other named ones
    in additional_chat_templates/ (tool_use for a conversation with tools), and split_special_tokens
    (special-token text in the prompt left as text): the reference reads them as apply_chat_template
    does, and agrees with it on every conversation."""
    qwen3 = zoo("qwen3")
    folder = tmp_path / "saved"
    (folder / "additional_chat_templates").mkdir(parents=True)
    shutil.copy(qwen3.path("tokenizer_json"), folder / "tokenizer.json")
    config = json.loads(Path(qwen3.path("tokenizer_config")).read_text("utf-8"))
    template = config.pop("chat_template")
    (folder / "chat_template.jinja").write_text(template, "utf-8")
    (folder / "additional_chat_templates" / "tool_use.jinja").write_text(
        "{{ 'TOOLS:' }}{{ tools | tojson }}{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
        "{% endfor %}", "utf-8")
    (folder / "tokenizer_config.json").write_text(json.dumps(config | {"split_special_tokens": True}), "utf-8")
    template_found = find_template(resolve_model(str(folder)))
    assert set(template_found.templates) == {"default", "tool_use"} and not template_found.parse_special
    results = run_compare([str(folder)], ["chats"], ["hf"], CHAT)
    (run,) = [r for r in results.runs if r.backend == "hf"]
    assert (run.cases, run.mismatches) == (CONVERSATIONS, 0), [m.evidence for m in results.mismatches][:2]


def test_llama_cpps_builtin_is_tried_on_the_ggufs_template_where_the_files_carry_two(zoo, tmp_path):
    """A folder whose tokenizer_config.json holds Qwen3's ChatML template and whose GGUF (converted
    by tokparity from the same tokenizer.json with Llama 3's template in its config) holds Llama 3's:
    transformers renders the first, llama.cpp recognizes its built-in by the second (the one it
    reads). The cause ``chat.llama-cpp-builtin`` is reproduced with the GGUF's template: named on
    24 of the 25 conversations llama.cpp takes (the 25th, a user's message of other models' special
    tokens, llama.cpp tokenizes otherwise than transformers on this GGUF)."""
    from tokparity.convert import convert

    qwen3, llama = zoo("qwen3"), zoo("llama-bpe")
    config = json.loads(Path(qwen3.path("tokenizer_config")).read_text("utf-8"))
    llama3 = json.loads(Path(llama.path("tokenizer_config")).read_text("utf-8"))["chat_template"]
    made, folder = tmp_path / "with-llama3", tmp_path / "two-templates"
    for d, template in ((made, llama3), (folder, config["chat_template"])):
        d.mkdir()
        shutil.copy(qwen3.path("tokenizer_json"), d / "tokenizer.json")
        (d / "tokenizer_config.json").write_text(json.dumps(config | {"chat_template": template}), "utf-8")
    convert(str(made / "tokenizer.json"), "gguf", str(folder / "model.gguf"))
    results = run_compare([str(folder)], ["chats"], ["hf", "llama.cpp"], CHAT)
    runs = {r.backend: r for r in results.runs}
    assert (runs["hf"].cases, runs["hf"].mismatches) == (CONVERSATIONS, 0)
    assert (runs["llama.cpp"].cases, runs["llama.cpp"].mismatches) == (25, 25)
    causes = Counter(m.cause for m in results.mismatches if m.backend == "llama.cpp")
    assert causes["chat.llama-cpp-builtin"] >= 24, causes
