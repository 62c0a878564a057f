"""``regress --ops chat``: goldens hold the prompts a model's chat template gave (text and ids) for
the built-in conversations; a later run judges every backend's prompt against them, and the
template as tokparity renders it today (``template``). An engine with a bug is named by its cause,
a template edited since the goldens shows on the template and on transformers alike, and a
goldens file without prompts, or prompts asked of a text op, is one clear line.

Every run is real: Qwen3's files from the zoo, transformers, and the blind chat engine
(tests/engines/blind/chat_blind.py) over the protocol.
"""

from __future__ import annotations

import csv
import gzip
import json
import shutil
import sys
from pathlib import Path

import pytest

from tokparity.cli import main
from tokparity.regress.goldens import read_goldens

BLIND = Path(__file__).parents[1] / "engines" / "blind" / "chat_blind.py"


def regress(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["regress", "-q", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def qwen3_folder(zoo, tmp_path_factory) -> Path:
    """Qwen3's tokenizer.json and tokenizer_config.json (its chat template) as a folder model."""
    qwen3 = zoo("qwen3")
    folder = tmp_path_factory.mktemp("qwen3-model") / "qwen3-chat"
    folder.mkdir()
    shutil.copy(qwen3.path("tokenizer_json"), folder / "tokenizer.json")
    shutil.copy(qwen3.path("tokenizer_config"), folder / "tokenizer_config.json")
    return folder


@pytest.fixture(scope="module")
def goldens(qwen3_folder, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("goldens")
    assert main(["regress", "--update", str(qwen3_folder), "-c", "edge", "-c", "chats", "--goldens", str(folder),
                 "-q"]) == 0
    return folder


def runs_of(report: Path) -> dict[str, dict]:
    return {r["backend"]: r for r in json.loads((report / "summary.json").read_text())["runs"] if r["op"] == "chat"}


def test_update_stores_each_conversations_prompt(goldens):
    stored = read_goldens(goldens / "qwen3-chat.jsonl.gz")
    chats = stored.corpora["chats"]
    assert chats.prompts_made is not None and chats.prompts_made["encoder"] == "hf"
    assert len(chats.prompts_made["template_sha256"]) == 64
    assert chats.cases == len(chats.prompts) == 35
    first = chats.prompts[chats.case_ids.index("single-01")]
    assert first.text == "<|im_start|>user\nHello, who are you?<|im_end|>\n<|im_start|>assistant\n"
    assert first.ids[0] == 151644  # <|im_start|> as one id: special-token text parsed
    assert stored.corpora["edge"].prompts_made is None and len(stored.corpora["edge"].plain) == 884


def test_unchanged_prompts_pass_and_a_buggy_engine_is_named(capsys, goldens, qwen3_folder, tmp_path):
    engine = f"eng=cmd:{sys.executable} {BLIND} {{tokenizer_json}} --bug drop-final-newline"
    code, out, _ = regress(capsys, str(qwen3_folder), "--ops", "chat", "--goldens", str(goldens), "-b", "hf",
                           "-b", engine, "-o", str(tmp_path / "r"))
    assert code == 1, out
    runs = runs_of(tmp_path / "r")
    assert set(runs) == {"hf", "eng", "template", "template:specials"}
    assert (runs["hf"]["cases"], runs["hf"]["mismatches"]) == (35, 0)
    assert (runs["template"]["cases"], runs["template"]["mismatches"]) == (35, 0)
    assert runs["eng"]["mismatches"] >= 25 and runs["eng"]["oracle"].startswith("goldens (the template's prompts")
    rows = [r for r in csv.DictReader(open(tmp_path / "r" / "mismatches.csv", encoding="utf-8"))]
    assert {r["cause"] for r in rows} == {"chat.trailing-newline-dropped"}
    assert "CHANGED qwen3-chat chats/single-01 eng chat: chat-text: the prompts first differ at character 68" in out
    # the twin, without the bug, passes
    code, out, _ = regress(capsys, str(qwen3_folder), "--ops", "chat", "--goldens", str(goldens),
                           "-b", f"eng=cmd:{sys.executable} {BLIND} {{tokenizer_json}}", "-o", str(tmp_path / "r2"))
    assert code == 0, out
    runs = runs_of(tmp_path / "r2")
    assert runs["eng"]["mismatches"] == 0
    assert set(runs) == {"eng", "template", "template:specials"}  # -b names who is judged (hf only encodes)


def test_an_edited_template_shows_on_the_template_and_on_transformers(capsys, goldens, qwen3_folder, tmp_path):
    """The template file gains a newline after the generation prompt: transformers renders the new
    file, and so does tokparity; both now differ from the goldens, on the conversations that ask
    for a generation prompt only."""
    edited = Path(shutil.copytree(qwen3_folder, tmp_path / "qwen3-chat"))
    config = json.loads((edited / "tokenizer_config.json").read_text("utf-8"))
    old = "{{- '<|im_start|>assistant\\n' }}"
    assert config["chat_template"].count(old) == 1
    config["chat_template"] = config["chat_template"].replace(old, "{{- '<|im_start|>assistant\\n\\n' }}")
    (edited / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    code, out, _ = regress(capsys, str(edited), "--ops", "chat", "--goldens", str(goldens), "-b", "hf",
                           "-o", str(tmp_path / "r"))
    assert code == 1, out
    runs = runs_of(tmp_path / "r")
    assert runs["hf"]["mismatches"] == runs["template"]["mismatches"] >= 20
    assert "tokenizer_config file tokenizer_config.json differs from the one the goldens were made with" in out
    assert "its chat template (" in out and "differs from the one the prompts were made with" in out
    rows = list(csv.DictReader(open(tmp_path / "r" / "mismatches.csv", encoding="utf-8")))
    assert {r["cause_evidence"].split(":")[0] for r in rows} == {
        "the backend's prompt is the one the model's template makes today"}
    # the template taken out of the files: one line, exit 2 (every engine would refuse: nothing to judge)
    del config["chat_template"]
    (edited / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    code, _, err = regress(capsys, str(edited), "--ops", "chat", "--goldens", str(goldens), "-b", "hf")
    assert code == 2 and "its prompts were made with a chat template, and qwen3-chat's files carry none now" in err


def test_prompts_are_judged_by_the_chat_op_alone(capsys, goldens, qwen3_folder, tmp_path):
    model = str(qwen3_folder)
    code, _, err = regress(capsys, model, "-c", "chats", "--goldens", str(goldens), "-o", str(tmp_path / "a"))
    assert code == 2 and "corpus 'chats' holds the prompts of conversations: judge them with `regress --ops chat`" in err
    code, _, err = regress(capsys, model, "--ops", "chat", "-c", "edge", "--goldens", str(goldens),
                           "-o", str(tmp_path / "b"))
    assert code == 2 and "corpus 'edge' holds the ids of texts, no prompts" in err
    code, _, err = regress(capsys, model, "--ops", "chat", "--ray", "--goldens", str(goldens))
    assert code == 2 and "run it without --ray" in err
    # the text ops judge the texts only, as before
    code, out, _ = regress(capsys, model, "--goldens", str(goldens), "-b", "hf", "-o", str(tmp_path / "c"))
    assert code == 0, out
    runs = json.loads((tmp_path / "c" / "summary.json").read_text())["runs"]
    assert {(r["backend"], r["op"], r["cases"]) for r in runs if r["backend"] == "hf"} == {("hf", "encode", 2 * 884)}


def test_a_model_without_a_template_stores_no_prompts(capsys, tmp_path):
    folder = tmp_path / "goldens"
    code, _, err = regress(capsys, "--update", "llama-spm", "-c", "edge", "-c", "chats", "--goldens", str(folder))
    assert code == 0
    assert set(read_goldens(folder / "llama-spm.jsonl.gz").corpora) == {"edge"}
    code, _, err = regress(capsys, "llama-spm", "--ops", "chat", "--goldens", str(folder))
    assert code == 2 and "holds no prompts of conversations" in err and "-c chats" in err
    code, _, err = regress(capsys, "--ops", "chat", "--goldens", str(folder))  # no model: those with prompts
    assert code == 2 and "holds no goldens (*.jsonl.gz) with the prompts of conversations" in err


def test_a_damaged_prompt_names_the_file(capsys, goldens, qwen3_folder, tmp_path):
    scratch = Path(shutil.copytree(goldens, tmp_path / "g"))
    path = scratch / "qwen3-chat.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh]
    next(line for line in lines if line.get("id") == "single-01")["prompt"] = 7
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(obj) + "\n" for obj in lines)
    code, _, err = regress(capsys, str(qwen3_folder), "--ops", "chat", "--goldens", str(scratch))
    assert code == 2 and "qwen3-chat.jsonl.gz:" in err and "damaged goldens" in err


def test_the_unknown_token_is_not_a_special_the_template_writes():
    """A prompt whose text the tokenizer cannot all tokenize holds the unknown token's id: that is
    not a special token's text split (``<s>`` and ``</s>`` are their ids)."""
    from tokparity.chat import ChatAnswer
    from tokparity.diff.chat import SpecialTexts

    prompt = ChatAnswer("<s>Hello 😀</s>", [1, 15043, 0, 2])
    assert SpecialTexts({0: "<unk>", 1: "<s>", 2: "</s>"}, unk=0).split(prompt) is None
    split = ChatAnswer("<s>Hello</s>", [1, 15043, 829, 29879, 29958])  # </s> as ordinary tokens
    cls, evidence, first = SpecialTexts({0: "<unk>", 1: "<s>", 2: "</s>"}, unk=0).split(split)
    assert (cls, first) == ("chat-special-split", 1)
    assert evidence.startswith("the prompt writes </s> (id 2) at character 8, its special-token text number 2")
