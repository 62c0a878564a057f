"""A model folder is read as its own files, and never written (issue: hostile input, round 3).

A link in a model folder that points out of it (``chat_template.jinja`` → ``/proc/self/environ``)
put that file's text into the prompts, and so every environment variable into the reports; now
the model is refused in one line before anything is read or written. ``--junit`` and
``$GITHUB_STEP_SUMMARY`` naming a file of the model folder or of tokparity's cache (the key that
signs journals) overwrote it; now they are refused, the file unchanged. Each case here read or
wrote the file before."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import cli_runs
import pytest

from tokparity.chat.template import find_template
from tokparity.errors import TokparityError
from tokparity.zoo import resolve_model

ROOT = Path(__file__).resolve().parents[2]
SECRET = "tokparity-test-secret-7f3a"


def tokparity(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    quiet = [] if args[0] in ("convert", "check") else ["-q"]  # (convert and check have no -q)
    return cli_runs.tokparity(*args, *quiet, cwd=cwd, env={"TOKPARITY_TEST_SECRET": SECRET, **(env or {})})


def one_line(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokparity: error: ") and "Traceback" not in done.stderr, lines
    assert all(w in lines[0] for w in words), lines[0]


@pytest.fixture
def model(tmp_path: Path, zoo) -> Path:
    """Qwen3's tokenizer files in a folder of their own, its template in tokenizer_config.json."""
    files = zoo("qwen3").files
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(files["tokenizer_json"], folder / "tokenizer.json")
    shutil.copy(files["tokenizer_config"], folder / "tokenizer_config.json")
    (tmp_path / "texts.jsonl").write_text(json.dumps({"id": "a", "text": "Hello world"}) + "\n", "utf-8")
    return folder


def no_secret_anywhere(folder: Path) -> None:
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            assert SECRET not in path.read_text("utf-8", "replace"), path


@pytest.mark.parametrize("name", ["chat_template.jinja", "additional_chat_templates/tool_use.jinja",
                                  "tokenizer_config.json", "special_tokens_map.json"])
def test_a_link_to_the_environment_is_refused_and_no_report_holds_it(model, name):
    link = model / name
    link.parent.mkdir(exist_ok=True)
    if link.exists():
        link.unlink()
    link.symlink_to("/proc/self/environ")
    done = tokparity("compare", "model", "--ops", "chat", "-b", "hf", "-o", "out", cwd=model.parent)
    one_line(done, name.split("/")[-1], "outside the model folder", "copy the file in")
    assert SECRET not in done.stdout + done.stderr
    no_secret_anywhere(model.parent)


def test_a_folder_linked_out_is_refused(model, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "tool_use.jinja").write_text("{{ 'x' }}", "utf-8")
    (model / "additional_chat_templates").symlink_to(elsewhere)
    one_line(tokparity("compare", "model", "--ops", "chat", "-b", "hf", "-o", "out", cwd=model.parent),
             "additional_chat_templates", "outside the model folder")


def test_links_inside_the_folder_and_a_hub_snapshot_are_read(model, tmp_path):
    """The twins: a link to a file of the folder itself, and the Hugging Face cache's layout
    (a snapshot's files are links into its repository's blobs) are model files like any other."""
    template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    (model / "templates").mkdir()
    (model / "templates" / "chat.jinja").write_text(template, "utf-8")
    (model / "chat_template.jinja").symlink_to("templates/chat.jinja")
    found = find_template(resolve_model(str(model)))
    assert found is not None and found.templates["default"] == template

    repository = tmp_path / "hub" / "models--org--name"
    (repository / "blobs").mkdir(parents=True)
    snapshot = repository / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        source = model / name
        blob = repository / "blobs" / f"blob-{name}"
        shutil.copy(source.resolve(), blob)
        (snapshot / name).symlink_to(Path("..", "..", "blobs", blob.name))
    found = find_template(resolve_model(str(snapshot)))
    assert found is not None and found.templates["default"] == template


def test_a_template_too_large_or_not_utf8_is_one_line(model):
    big = model / "chat_template.jinja"
    with open(big, "wb") as fh:  # sparse: 3 GiB that take no disk
        fh.truncate(3 << 30)
    with pytest.raises(TokparityError, match="larger than 4,000,000 bytes"):
        find_template(resolve_model(str(model)))
    big.write_bytes(b"{{ 'caf\xe9' }}")
    with pytest.raises(TokparityError, match="not UTF-8"):
        find_template(resolve_model(str(model)))
    extra = model / "additional_chat_templates"
    extra.mkdir()
    big.write_text("{{ 'x' }}", "utf-8")
    (extra / "tool_use.jinja").write_bytes(b"\xff\xfe")
    with pytest.raises(TokparityError, match="tool_use.jinja: the chat template is not UTF-8"):
        find_template(resolve_model(str(model)))


def test_a_huge_tokenizer_config_is_refused_before_it_is_read(model):
    """The vocabulary's loader read tokenizer_config.json whole: 3 GiB took 4 GB of memory, and under
    a memory limit ended in a MemoryError traceback (an independent hostile campaign's find)."""
    config = model / "tokenizer_config.json"
    with open(config, "wb") as fh:  # sparse: 3 GiB that take no disk
        fh.truncate(3 << 30)
    done = tokparity("compare", str(model), "--ops", "chat", "-o", str(model.parent / "out"), cwd=model.parent)
    one_line(done, "tokenizer_config.json", "larger than 67,108,864 bytes")


# --- no output onto an input ----------------------------------------------------------------------------

@pytest.mark.parametrize("target", ["model/chat_template.jinja", "model/tokenizer_config.json",
                                    "model/additional_chat_templates/tool_use.jinja", "cache/journal-key"])
@pytest.mark.parametrize("how", ["--junit", "GITHUB_STEP_SUMMARY"])
def test_a_ci_file_onto_a_model_file_or_the_cache_is_refused(model, tmp_path, target, how):
    cache = tmp_path / "cache"
    (cache / "zoo").mkdir(parents=True)
    (model / "chat_template.jinja").write_text("{{ 'x' }}", "utf-8")
    (model / "additional_chat_templates").mkdir()
    (model / "additional_chat_templates" / "tool_use.jinja").write_text("{{ 'y' }}", "utf-8")
    (cache / "journal-key").write_text("ab" * 32 + "\n", "utf-8")
    path = tmp_path / target
    before = path.read_bytes()
    args = ["compare", "model", "-c", "texts.jsonl", "-b", "ref", "-o", "out"]
    env = {"TOKPARITY_CACHE": str(cache)}
    if how == "--junit":
        args += ["--junit", target]
    else:
        env["GITHUB_STEP_SUMMARY"] = str(path)
    done = tokparity(*args, cwd=tmp_path, env=env)
    one_line(done, how.lstrip("$"), "the run would")
    assert path.read_bytes() == before
    assert not (tmp_path / "out" / "cases.jsonl").exists()


def test_a_junit_file_beside_the_model_is_written(model, tmp_path):
    """The twin: a report a user names in the model folder (not a file tokenizers read) is written,
    and written again on the next run."""
    for _ in range(2):
        done = tokparity("compare", "model", "-c", "texts.jsonl", "-b", "ref", "-o", "out", "--junit",
                         "model/junit.xml", cwd=model.parent)
        assert done.returncode in (0, 1), done.stderr
        assert (model / "junit.xml").read_text("utf-8").startswith("<?xml")


# --- a resume judges by the files the run began with -----------------------------------------------------

@pytest.mark.parametrize("edit", ["chat_template.jinja", "tokenizer_config.json", "added"])
def test_a_resume_after_the_model_changed_is_refused(model, tmp_path, edit):
    """Ctrl-C, an edit of the model's chat template, ``--resume``: 11 conversations were judged by the
    old template and 5 by the new, and nothing said. The journal fingerprints the model's files now."""
    (model / "chat_template.jinja").write_text("{% for m in messages %}{{ m['content'] }}{% endfor %}", "utf-8")
    first = tokparity("compare", "model", "-c", "texts.jsonl", "-b", "ref", "-o", "out", cwd=tmp_path)
    assert first.returncode in (0, 1), first.stderr
    again = tokparity("compare", "--resume", "out", cwd=tmp_path)
    assert again.returncode in (0, 1), again.stderr  # (the twin: nothing changed, the resume runs)
    if edit == "added":
        (model / "additional_chat_templates").mkdir()
        (model / "additional_chat_templates" / "tool_use.jinja").write_text("{{ 'tools' }}", "utf-8")
    else:
        with open(model / edit, "a", encoding="utf-8") as fh:
            fh.write("\n")
    one_line(tokparity("compare", "--resume", "out", cwd=tmp_path), "changed since the run started",
             "start a new run")


# --- outputs named on the command line: regular files of the user's, nothing else ---------------------------

@pytest.mark.parametrize("kind", ["device", "fifo", "symlink", "cache-key"])
@pytest.mark.parametrize("command", ["junit", "convert"])
def test_a_named_output_that_is_a_device_a_link_or_the_cache_is_refused(model, tmp_path, zoo, kind, command):
    """``--junit /dev/full`` as root replaced the device with a file; ``--junit`` onto a FIFO or a
    link replaced it; ``convert -o $TOKPARITY_CACHE/journal-key`` overwrote the key that signs
    journals, which then let anyone sign one (found by a hostile-input helper)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "journal-key").write_text("ab" * 32 + "\n", "utf-8")
    target = {"device": tmp_path / "null", "fifo": tmp_path / "fifo", "symlink": tmp_path / "link",
              "cache-key": cache / "journal-key"}[kind]
    if kind == "device":
        if os.geteuid() != 0:
            pytest.skip("MAKING A DEVICE NODE NEEDS ROOT: the device case of a named output did not run")
        os.mknod(target, 0o666 | __import__("stat").S_IFCHR, os.makedev(1, 3))
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "symlink":
        (tmp_path / "victim.txt").write_text("precious\n", "utf-8")
        target.symlink_to(tmp_path / "victim.txt")
    before = os.lstat(target)
    if command == "junit":
        args = ["compare", "model", "-c", "texts.jsonl", "-b", "ref", "-o", "out", "--junit", str(target)]
    else:
        shutil.copy(zoo("llama-spm").files["gguf"], tmp_path / "m.gguf")
        args = ["convert", "m.gguf", "--to", "spm", "-o", str(target)]
    one_line(tokparity(*args, cwd=tmp_path, env={"TOKPARITY_CACHE": str(cache)}), "name another file")
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino, after.st_size) == (before.st_mode, before.st_ino, before.st_size)


def test_convert_onto_its_own_input_or_from_a_fifo_is_one_line(tmp_path, zoo):
    shutil.copy(zoo("llama-spm").files["gguf"], tmp_path / "m.gguf")
    one_line(tokparity("convert", "m.gguf", "--to", "gguf", "-o", "m.gguf", cwd=tmp_path), "is the file it reads")
    os.mkfifo(tmp_path / "fifo.gguf")
    one_line(tokparity("convert", "fifo.gguf", "--to", "spm", "-o", "x.model", cwd=tmp_path), "not a regular file")


def test_convert_spells_out_an_escape_sequence_in_the_output_name(tmp_path, zoo):
    """``convert -o`` printed the name it wrote raw: an escape sequence reached the terminal, a newline
    forged a second line (an independent hostile campaign's find)."""
    shutil.copy(zoo("botchan-unigram").files["spm_model"], tmp_path / "b.model")
    done = tokparity("convert", "b.model", "--to", "gguf", "-o", "x\x1b[31mred\nline.gguf", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and done.stdout.count("\n") == 1, repr(done.stdout)
    assert (tmp_path / "x\x1b[31mred\nline.gguf").is_file()


def test_a_hard_link_in_the_model_folder_is_refused(model, tmp_path):
    """A hard link has no target to check: ``chat_template.jinja`` linked to a secret file was read,
    and the secret reached ``cases.jsonl`` (an independent hostile campaign's find)."""
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET, "utf-8")
    os.link(secret, model / "chat_template.jinja")
    done = tokparity("compare", str(model), "--ops", "chat", "-b", "hf", "-o", str(tmp_path / "out"), cwd=tmp_path)
    one_line(done, "chat_template.jinja", "hard link")
    if (tmp_path / "out").exists():
        no_secret_anywhere(tmp_path / "out")


def test_a_fifo_under_a_model_files_name_is_one_line(model):
    """A FIFO named tokenizer_config.json was left out unsaid (a fifth independent campaign's
    find): the run went on without the configuration, and its checks said "not checked"."""
    (model / "tokenizer_config.json").unlink()
    os.mkfifo(model / "tokenizer_config.json")
    one_line(tokparity("check", str(model), cwd=model.parent), "tokenizer_config.json", "not a regular file")
    one_line(tokparity("compare", str(model), "-c", "edge", "-o", "out", cwd=model.parent),
             "tokenizer_config.json", "not a regular file")
