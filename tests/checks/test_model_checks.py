"""`tokparity check`: what a model's files must hold, on real files.

Where a property needs a file the zoo lacks (generation_config.json, config.json), the test copies a
zoo model's real tokenizer files into a folder and writes that one file beside them, saying so.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tokparity.checks import BROKEN, HELD, NOT_CHECKED
from tokparity.run.model_checks import check_model


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokparity.cli", "check", *args], capture_output=True, text=True,
                          timeout=300)


def prop(result, name):
    (found,) = [p for p in result.properties if p.name == name]
    return found


def broken_said(check) -> list[str]:
    return [f.said for f in check.findings if f.broken]


def llama3_folder(zoo, tmp_path, eos_token: str | None = None, **beside: dict):
    """Llama 3's tokenizer.json and tokenizer_config.json as published (``eos_token`` changed when given),
    with the files ``beside`` written by the test (``generation_config``: generation_config.json)."""
    model = zoo("llama-bpe")
    folder = tmp_path / "llama3"
    folder.mkdir()
    shutil.copyfile(model.files["tokenizer_json"], folder / "tokenizer.json")
    config = json.loads(model.files["tokenizer_config"].read_text())
    if eos_token is not None:
        config["eos_token"] = eos_token
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    for name, content in beside.items():
        (folder / f"{name}.json").write_text(json.dumps(content))
    return folder


# -- end of generation --------------------------------------------------------------------------------


def test_llama3_files_that_stop_only_at_end_of_text_are_broken(zoo):
    """The zoo's Llama 3 files: the template closes a turn with <|eot_id|>, the GGUF and
    tokenizer_config.json name <|end_of_text|> alone. llama.cpp stops at both, by the token's text."""
    ends = prop(check_model("llama-bpe", ("end-of-generation",)), "end-of-generation")
    assert ends.status == BROKEN
    said = broken_said(ends)
    assert len(said) == 2
    keys, config = said
    assert keys.startswith("128009 '<|eot_id|>' is missing from the GGUF's keys, though the chat template writes it")
    assert "llama.cpp stops there only because it knows the token's text" in keys
    assert config.startswith("128009 '<|eot_id|>' is missing from tokenizer_config.json eos_token")
    assert "llama.cpp: 128001 '<|end_of_text|>', 128009 '<|eot_id|>'" in ends.facts


def test_a_generation_config_without_the_end_of_turn_is_named_with_its_key(zoo, tmp_path):
    folder = llama3_folder(zoo, tmp_path, eos_token="<|eot_id|>", generation_config={"eos_token_id": 128001})
    proc = run(str(folder), "--only", "end-of-generation")
    assert proc.returncode == 1, proc.stderr
    assert "✗ 128009 '<|eot_id|>' is missing from generation_config.json eos_token_id" in proc.stdout
    assert f"where: {folder / 'generation_config.json'} eos_token_id" in proc.stdout
    assert "A generation by transformers' generate() runs on past the end of the model's turn" in proc.stdout


def test_the_same_files_with_the_end_of_turn_in_every_set_hold(zoo, tmp_path):
    """The bug-free twin: the end of turn in the tokenizer's eos_token and in generation_config.json."""
    folder = llama3_folder(zoo, tmp_path, eos_token="<|eot_id|>", generation_config={"eos_token_id": [128001, 128009]})
    proc = run(str(folder), "--only", "end-of-generation", "--only", "vocabulary-size")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "end-of-generation  ✓ held" in proc.stdout
    assert "generation_config.json eos_token_id: 128001 '<|end_of_text|>', 128009 '<|eot_id|>'" in proc.stdout


def test_generate_reads_config_json_only_without_a_generation_config(zoo, tmp_path):
    folder = llama3_folder(zoo, tmp_path, eos_token="<|eot_id|>", config={"eos_token_id": 128001},
                           generation_config={"eos_token_id": [128001, 128009]})
    ends = prop(check_model(str(folder), ("end-of-generation",)), "end-of-generation")
    assert ends.status == HELD
    assert not any(fact.startswith("config.json") for fact in ends.facts)


def test_llama_cpp_stopping_at_a_token_no_text_encodes_to_is_said_not_broken(zoo):
    """Qwen2's vocabulary holds '</s>' as an ordinary BPE token (128247), and llama.cpp ends a generation
    at any token spelled '</s>'. But the pre-tokenizer splits the text '</s>': the model never learnt
    to write that id (a blind helper's find: it was called broken)."""
    ends = prop(check_model("qwen2", ("end-of-generation",)), "end-of-generation")
    (stop,) = [f for f in ends.findings if "'</s>'" in f.said]
    assert not stop.broken
    assert stop.said.startswith("A generation by llama.cpp and llama-server stops at 128247 '</s>', which no "
                                "tokenizer file names as an end")
    assert "Its text does not encode to it (llama.cpp gives 522 '</', 82 's', 29 '>')" in stop.said
    assert stop.where.endswith("llama_vocab_is_eog")


def test_a_token_of_ordinary_text_in_a_generation_config_is_broken(zoo, tmp_path):
    """Llama 3's files with generation_config.json written by the test: the right ids and, by mistake, the
    id of '+' (10), which the text '+' encodes to."""
    folder = llama3_folder(zoo, tmp_path, eos_token="<|eot_id|>",
                           generation_config={"eos_token_id": [128001, 128009, 10]})
    ends = prop(check_model(str(folder), ("end-of-generation",)), "end-of-generation")
    (plus,) = broken_said(ends)
    assert plus == ("A generation by transformers' generate() stops at 10 '+', which no tokenizer file names as an "
                    "end and the tokenizer_json types as ordinary text. hf gives that id for the text '+', so an "
                    "answer that writes it ends there.")


def test_an_added_marker_llama_cpp_stops_at_is_said_not_broken(zoo):
    """Gemma 4's '<|tool_response>' is user-defined: the model writes it to wait for a tool."""
    ends = prop(check_model("gemma-4", ("end-of-generation",)), "end-of-generation")
    (marker,) = [f for f in ends.findings if "<|tool_response>" in f.said]
    assert not marker.broken


def test_a_model_whose_files_agree_holds(zoo):
    for name in ("qwen3", "deepseek-v3"):
        assert prop(check_model(name, ("end-of-generation",)), "end-of-generation").status == HELD, name


def test_a_model_with_no_end_named_is_not_checked(zoo):
    assert prop(check_model("cl100k-tiktoken", ("end-of-generation",)), "end-of-generation").status == NOT_CHECKED


def test_an_unreadable_configuration_is_one_line_and_exit_2(zoo, tmp_path):
    folder = llama3_folder(zoo, tmp_path)
    (folder / "generation_config.json").write_text("{not json")
    proc = run(str(folder))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "generation_config.json: cannot read it as JSON" in lines[0], proc.stderr


def test_a_folder_without_model_files_is_exit_2(tmp_path):
    proc = run(str(tmp_path))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


# -- vocabulary size -------------------------------------------------------------------------------


@pytest.mark.parametrize("edit, said", [
    # ("²" is a digit to str.isdigit but no number to int: a fifth hostile campaign's traceback)
    (lambda added: added.update({"²": {"content": "<x>"}}), 'added_tokens_decoder key "\\u00b2" is no id'),
    # (5,000 digits: Python's int() refuses it, a seventh campaign's traceback)
    (lambda added: added.update({"9" * 5000: {"content": "<y>"}}), 'added_tokens_decoder key "9999'),
    (lambda added: added.clear() or added.update({"-1": {"content": "<z>"}}), 'added_tokens_decoder key "-1" is no id'),
])
def test_an_added_token_key_that_is_no_id_is_one_line(zoo, tmp_path, edit, said):
    """transformers reads each key as an id with int(key). An eighth campaign found a key that is
    none left out silently: check judged another vocabulary than the one the file holds."""
    folder = llama3_folder(zoo, tmp_path)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    edit(config["added_tokens_decoder"])
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    done = run(str(folder), "--only", "vocabulary-size")
    assert done.returncode == 2 and "Traceback" not in done.stderr, (done.stdout, done.stderr)
    (line,) = done.stderr.strip().splitlines()
    assert said in line and "fix the file" in line, line


def test_an_added_tokens_decoder_that_is_no_object_is_one_line(zoo, tmp_path):
    folder = llama3_folder(zoo, tmp_path)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["added_tokens_decoder"] = ["<x>"]
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    done = run(str(folder), "--only", "vocabulary-size")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "added_tokens_decoder must be an object from ids to tokens, not list" in done.stderr


def test_a_vocab_size_past_any_id_is_one_line(zoo, tmp_path):
    """An eighth campaign's vocab_size of 10^400 was printed whole, all 401 digits: no model has
    more ids than a signed 32-bit integer holds."""
    folder = llama3_folder(zoo, tmp_path, config={"vocab_size": 10 ** 400})
    done = run(str(folder), "--only", "vocabulary-size")
    assert done.returncode == 2, (done.stdout, done.stderr)
    (line,) = done.stderr.strip().splitlines()
    assert "vocab_size must be a whole number from 1 to 2,147,483,647" in line and len(line) < 300, line


def test_a_tokenizer_larger_than_the_embedding_is_broken(zoo, tmp_path):
    """config.json written by the test with vocab_size 128,000: Llama 3's 256 added ids have no row."""
    folder = llama3_folder(zoo, tmp_path, config={"vocab_size": 128000})
    sizes = prop(check_model(str(folder), ("vocabulary-size",)), "vocabulary-size")
    assert sizes.status == BROKEN
    (said,) = broken_said(sizes)
    assert "gives ids up to 127,999" not in said and "ids up to 128,255" in said
    assert "An engine reads past the embedding for ids 128,000 and above" in said


def test_embedding_rows_beyond_the_tokenizer_are_padding_when_decoded_alike(zoo, tmp_path):
    """Qwen3's tokenizer files with config.json's vocab_size 151,936 (Qwen3's embedding, written by the test)."""
    model = zoo("qwen3")
    folder = tmp_path / "qwen3"
    folder.mkdir()
    for role in ("tokenizer_json", "tokenizer_config"):
        shutil.copyfile(model.files[role], folder / model.files[role].name)
    (folder / "config.json").write_text(json.dumps({"vocab_size": 151936}))
    sizes = prop(check_model(str(folder), ("vocabulary-size",)), "vocabulary-size")
    assert sizes.status == HELD
    (gap,) = sizes.findings
    assert not gap.broken and "ids 151,669 to 151,935 have no token" in gap.said
    assert "hf 151669: ''" in gap.example


@pytest.mark.parametrize("name", ["llama-bpe", "gemma-3", "qwen2"])
def test_files_of_one_vocabulary_hold(zoo, name):
    assert prop(check_model(name, ("vocabulary-size",)), "vocabulary-size").status == HELD


# -- multi-turn prefix -----------------------------------------------------------------------------


def test_qwen3_drops_its_empty_thinking_and_the_reasoning_from_history(zoo):
    """Qwen3's template writes '<think>\\n\\n</think>\\n\\n' before the last reply and not before the same
    reply once it is history; it drops an earlier turn's reasoning_content."""
    turns = prop(check_model("qwen3", ("multi-turn-prefix",)), "multi-turn-prefix")
    assert turns.status == BROKEN
    said = broken_said(turns)
    assert ("The template writes a turn differently once it is history: the next prompt leaves out "
            "'<think>\\n\\n</think>\\n\\n', which the rollout holds (the reply read as the template writes it)") in said
    assert any(s.startswith("The template drops the reasoning of an earlier turn") for s in said)


def test_a_reply_that_begins_with_a_newline_is_split_otherwise_at_the_boundary(zoo):
    """Qwen2: the prompt ends with '\\n', the reply begins with one; encoded whole, the two are one token."""
    turns = prop(check_model("qwen2", ("multi-turn-prefix",)), "multi-turn-prefix")
    (ids,) = [f for f in turns.findings if f.said.startswith("The texts agree, but the ids do not")]
    assert ids.broken and "with a newline first in the reply" in ids.where
    assert "198 'Ċ', 198 'Ċ', 9707 'Hello'" in ids.example and "271 'ĊĊ', 9707 'Hello'" in ids.example


def test_a_generation_prompt_the_written_reply_does_not_start_with(zoo):
    """Gemma 4's generation prompt opens an empty thought channel that its written reply lacks."""
    turns = prop(check_model("gemma-4", ("multi-turn-prefix",)), "multi-turn-prefix")
    assert ("The template writes an assistant's reply after other text than the prompt it gives the model for that "
            "turn: the written reply leaves out '<|channel>thought\\n<channel|>', which the prompt holds"
            ) in broken_said(turns)


@pytest.mark.parametrize("name", ["llama-bpe", "gemma-3"])
def test_templates_that_trim_every_reply_part_a_reply_that_opens_with_a_space(zoo, name):
    """Llama 3's and Gemma 3's templates trim each message's content, the last reply's too: read as the
    template writes it the turns agree, read as the message's content they do not."""
    turns = prop(check_model(name, ("multi-turn-prefix",)), "multi-turn-prefix")
    said = broken_said(turns)
    assert ("The template strips whitespace from a reply once it is history: the next prompt leaves out '\\n', which "
            "the rollout holds (the reply read as its content, then the end-of-turn token)") in said
    assert not any("as the template writes it" in s for s in said)


def test_a_template_that_keeps_history_as_written_holds(zoo):
    """DeepSeek V3's template writes each reply as it is, and its tokenizer splits a newline off a word."""
    turns = prop(check_model("deepseek-v3", ("multi-turn-prefix",)), "multi-turn-prefix")
    assert turns.status == HELD and turns.facts[0].endswith(": 0 not a prefix of the next prompt")


def test_a_model_without_a_template_has_no_turns_to_check(zoo):
    assert prop(check_model("gpt-2", ("multi-turn-prefix",)), "multi-turn-prefix").status == NOT_CHECKED


@pytest.mark.parametrize("template, why", [
    ("{{ raise_exception('no chats here') }}", "TemplateError: no chats here"),
    ("{{ 'x' * 3000000000 }}", "the template needed more than 2 GiB of memory"),
])
def test_a_template_that_renders_no_conversation_is_broken_not_held(zoo, tmp_path, template, why):
    """A seventh campaign's find: a template that raises on every render was '✓ held' for the
    end of generation, and its turns 'not checked' for want of a conversation. A template that
    needs more memory than the sandbox gives was tried on every turn (403 s); it is given up on
    now, and said so."""
    folder = llama3_folder(zoo, tmp_path)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    (folder / "tokenizer_config.json").write_text(json.dumps(config | {"chat_template": template}))
    result = check_model(str(folder), ("end-of-generation", "multi-turn-prefix"))
    ends, turns = prop(result, "end-of-generation"), prop(result, "multi-turn-prefix")
    refused = why.startswith("TemplateError")
    if refused:  # (a template that refuses the simplest conversation: broken for every engine)
        assert ends.status == BROKEN
        assert broken_said(ends) == [f"The chat template refuses a user's message and a reply ({why}). No engine "
                                     "makes a chat prompt with it, and the end of an assistant turn cannot be read from it"]
    else:  # (past the sandbox's limits: an engine without them may render it, so it is said, not broken)
        assert [f.said for f in ends.findings if not f.broken] == [
            f"The chat template could not be rendered here for a user's message and a reply ({why}), so the end of an "
            "assistant turn was not read from it"]
    assert turns.status == NOT_CHECKED
    assert turns.why.startswith("the template refuses every turn after an assistant's reply: chats/" if refused
                                else "no turn rendered: chats/"), turns.why
    assert turns.why.endswith(why)


# -- round trip ------------------------------------------------------------------------------------


def test_a_byte_level_vocabulary_without_some_bytes_loses_them(zoo):
    """Falcon's byte-level BPE has no token for 0x03, 0x0B and others: llama.cpp drops them at encode."""
    trip = prop(check_model("falcon", ("round-trip",)), "round-trip")
    assert trip.status == BROKEN
    (lost,) = [f for f in trip.findings if f.broken]
    assert lost.said.startswith("llama.cpp does not give back ")
    assert "characters are dropped: the vocabulary has no token for some of their bytes (0x03, 0x04" in lost.said
    assert lost.example == "'\\x0b\\x0c' comes back as '\\x0c' (from character 0)"


@pytest.mark.parametrize("name", ["cl100k-tiktoken", "rwkv-world", "deepseek-v3", "tekken"])
def test_vocabularies_with_every_byte_give_every_text_back(zoo, name):
    trip = prop(check_model(name, ("round-trip",)), "round-trip")
    assert trip.status == HELD and not trip.findings
    assert all(" of " in fact and fact.split(" of ")[0].split()[-1] == fact.split(" of ")[1].split()[0]
               for fact in trip.facts), trip.facts


def test_what_the_files_ask_for_is_said_not_broken(zoo):
    """Llama 3's tokenizer_config.json asks for clean_up_tokenization_spaces; Gemma 3 writes spaces as '▁'."""
    llama = prop(check_model("llama-bpe", ("round-trip",)), "round-trip")
    (cleaned,) = llama.findings
    assert llama.status == HELD and not cleaned.broken
    assert cleaned.said.endswith("By design: tokenizer_config.json asks for it (clean_up_tokenization_spaces: true)")
    gemma = prop(check_model("gemma-3", ("round-trip",)), "round-trip")
    (symbol,) = gemma.findings
    assert not symbol.broken and "the character '▁' (U+2581) comes back as a space" in symbol.said


@pytest.mark.parametrize(("name", "why"), [("bert-bge", "WordPiece lower-cases"),
                                           ("spm-bpe-byte-fallback", "precompiled_charsmap")])
def test_a_model_that_does_not_promise_a_round_trip_is_not_checked(zoo, name, why):
    trip = prop(check_model(name, ("round-trip",)), "round-trip")
    assert trip.status == NOT_CHECKED and why in trip.why


def test_a_vocab_size_that_is_not_a_number_is_exit_2(zoo, tmp_path):
    """A blind helper's find: a string vocab_size was skipped, and a too-small embedding went unseen."""
    folder = llama3_folder(zoo, tmp_path, config={"vocab_size": "128000"})
    proc = run(str(folder), "--only", "vocabulary-size")
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith('config.json: vocab_size must be a whole number from 1 to 2,147,483,647, '
                                        'not "128000"; '
                                        'fix the file'), proc.stderr


def test_nothing_checked_is_exit_2_not_a_green_run(zoo):
    zoo("cl100k-tiktoken")
    proc = run("cl100k-tiktoken", "--only", "end-of-generation", "--only", "multi-turn-prefix")
    assert proc.returncode == 2
    assert "cl100k-tiktoken: nothing checked" in proc.stdout
    assert proc.stderr.strip().startswith("tokparity: error: nothing checked: no property of end-of-generation, "
                                          "multi-turn-prefix could be checked on cl100k-tiktoken"), proc.stderr


# -- end of generation: a tool call's own closing token ----------------------------------------------


def gpt_oss_folder(zoo, tmp_path, eos_token: str, generation_ends: list[int]):
    """gpt-oss's published tokenizer.json and tokenizer_config.json (its ``eos_token`` set by the test),
    openai/gpt-oss-120b's chat template as llama.cpp keeps it, and a generation_config.json the test
    writes with ``generation_ends`` (the published one lists [200002, 199999, 200012])."""
    model = zoo("gpt-oss")
    folder = tmp_path / "gpt-oss"
    folder.mkdir()
    shutil.copyfile(model.files["tokenizer_json"], folder / "tokenizer.json")
    shutil.copyfile(model.files["chat_template"], folder / "chat_template.jinja")
    config = json.loads(model.files["tokenizer_config"].read_text())
    config["eos_token"] = eos_token
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": generation_ends}))
    return folder


def test_a_set_without_the_tool_calls_end_is_broken(zoo):
    """gpt-oss's template closes a reply with <|return|> and a tool call with <|call|>. The zoo's
    tokenizer_config.json names <|return|> alone: an engine that stops at the tokenizer's end token
    writes on past a tool call, inventing the tool's answer."""
    ends = prop(check_model("gpt-oss", ("end-of-generation",)), "end-of-generation")
    assert ends.status == BROKEN
    assert "chat template: closes a tool call with 200012 '<|call|>'" in ends.facts
    (said,) = broken_said(ends)
    assert said.startswith("200012 '<|call|>' is missing from tokenizer_config.json eos_token, though the chat "
                           "template writes it to close a tool call.")
    assert "runs on past the call" in said


def test_the_published_generation_config_list_stops_at_both_closing_tokens(zoo, tmp_path):
    """generation_config.json as published lists both closing tokens (and <|endoftext|>): transformers'
    generate() stops after a reply and after a tool call. The one broken set stays tokenizer_config.json's."""
    folder = gpt_oss_folder(zoo, tmp_path, "<|return|>", [200002, 199999, 200012])
    ends = prop(check_model(str(folder), ("end-of-generation",)), "end-of-generation")
    said = broken_said(ends)
    assert said == [s for s in said if s.startswith("200012 '<|call|>' is missing from tokenizer_config.json")]
    assert len(said) == 1  # (generation_config.json's list holds <|call|>: not broken)
    assert "generation_config.json eos_token_id: 199999 '<|endoftext|>', 200002 '<|return|>', 200012 '<|call|>'" \
        in ends.facts


def test_a_generation_config_without_the_tool_calls_end_is_named_with_its_key(zoo, tmp_path):
    """A generation_config.json that drops <|call|> (as a server does to let the model write several
    calls) is broken for transformers' generate(), named by its file and key."""
    folder = gpt_oss_folder(zoo, tmp_path, "<|return|>", [200002, 199999])
    ends = prop(check_model(str(folder), ("end-of-generation",)), "end-of-generation")
    found = [f for f in ends.findings if f.broken and "generation_config.json" in f.where]
    (finding,) = found
    assert finding.said.startswith("200012 '<|call|>' is missing from generation_config.json eos_token_id")
    assert finding.where.endswith("generation_config.json eos_token_id")
    assert finding.example == "a tool call that ends with '<|call|>'"


def test_a_template_that_closes_a_tool_call_as_a_reply_adds_nothing(zoo):
    """Qwen 3 closes a tool call as it closes a reply (</tool_call><|im_end|>): one closing token, held."""
    from tokparity.checks.ends import ids_vocabulary, template_call_end

    model = zoo("qwen3")
    assert template_call_end(model, ids_vocabulary(model)[1])[0] == 151645
    ends = prop(check_model("qwen3", ("end-of-generation",)), "end-of-generation")
    assert ends.status == HELD
    assert not [f for f in ends.facts if "tool call" in f]
