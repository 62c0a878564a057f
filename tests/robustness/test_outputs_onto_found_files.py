"""``--junit`` and ``$GITHUB_STEP_SUMMARY`` never overwrite a file the run reads, however the run
found it (a fourth hostile campaign's finds, each written over before): a ``cmd:`` program found on
``$PATH``, a ``py:`` module found on ``$PYTHONPATH``, a file named inside an option word
(``--data=FILE``, ``-dFILE``), a file inside ``sh -c "…"``, a module of a ``py:`` engine's package,
a corpus file a glob matched, and tokparity's own files (a built-in corpus, the shipped known divergences). Each is one line, exit 2, and the file is left as it was."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tokparity
from tokparity.commands.compare import OWN, refuse_inputs_in_outputs
from tokparity.corpus import corpora_dir
from tokparity.errors import TokparityError

ROOT = Path(__file__).resolve().parents[2]
GREEDY = ROOT / "examples" / "engines" / "greedy_engine.py"


def run(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    environment["PYTHONPATH"] = str(ROOT)
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-spm", *args, "-o", str(tmp_path / "out"),
                           "-q"], env=environment, capture_output=True, text=True, timeout=300, cwd=tmp_path)


def refused(done: subprocess.CompletedProcess, named: Path) -> bool:
    lines = done.stderr.strip().splitlines()
    return done.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"tokparity: error: --junit {named}: is ")


def test_a_program_found_on_the_path(tmp_path, zoo):
    zoo("llama-spm")
    (tmp_path / "bin").mkdir()
    program = tmp_path / "bin" / "myengine"
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {GREEDY} \"$@\"\n", "utf-8")
    program.chmod(0o755)
    before = program.read_bytes()
    done = run(tmp_path, "-c", "edge", "-b", "g=cmd:myengine {gguf}", "--junit", str(program),
               env={"PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"})
    assert refused(done, program), done.stderr
    assert program.read_bytes() == before


def test_a_module_found_on_the_pythonpath_and_a_file_inside_an_option_word(tmp_path, zoo):
    zoo("llama-spm")
    package = tmp_path / "pp" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", "utf-8")
    module = package / "eng.py"
    module.write_text("def encode(text, add_special, parse_special):\n    return [1]\n", "utf-8")
    for named in (module, package / "__init__.py"):
        done = run(tmp_path, "-c", "edge", "-b", "py:pkg.eng:encode", "--junit", str(named),
                   env={"PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path / 'pp'}"})
        assert refused(done, named), done.stderr
    data = tmp_path / "data.bin"
    data.write_bytes(b"x")
    done = run(tmp_path, "-c", "edge", "-b", f"g=cmd:{{python}} {GREEDY} {{gguf}} --data={data}", "--junit", str(data))
    assert refused(done, data), done.stderr
    assert data.read_bytes() == b"x"
    assert module.read_text("utf-8").startswith("def encode")


def test_a_file_inside_a_shell_command_a_glued_option_or_a_package(tmp_path, zoo):
    """A fifth campaign's finds, each written over before: an engine run through ``sh -c "…"``
    (the engine's guide shows that form), a file glued to a short option (``-dFILE``), and a module
    of the ``py:`` engine's package that its ``__init__`` imports."""
    zoo("llama-spm")
    engine = tmp_path / "engine.py"
    engine.write_bytes(GREEDY.read_bytes())
    done = run(tmp_path, "-c", "edge", "-b", f"g=cmd:sh -c '{sys.executable} engine.py \"$TOKPARITY_GGUF\"'",
               "--junit", "engine.py")
    assert refused(done, Path("engine.py")), done.stderr
    data = tmp_path / "data.bin"
    data.write_bytes(b"x")
    done = run(tmp_path, "-c", "edge", "-b", f"g=cmd:{{python}} {GREEDY} {{gguf}} -d{data}", "--junit", str(data))
    assert refused(done, data), done.stderr
    package = tmp_path / "pp" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from . import helper\n\ndef encode(text, add_special, parse_special):\n"
                                         "    return [1]\n", "utf-8")
    (package / "helper.py").write_text("X = 1\n", "utf-8")
    done = run(tmp_path, "-c", "edge", "-b", "py:pkg:encode", "--junit", str(package / "helper.py"),
               env={"PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path / 'pp'}"})
    assert refused(done, package / "helper.py"), done.stderr
    # (a second read's spellings: a module run with -m, KEY=FILE, a file named after `cd DIR`)
    (tmp_path / "eng").mkdir()
    (tmp_path / "eng" / "__init__.py").write_text("", "utf-8")
    module = tmp_path / "eng" / "main.py"
    module.write_bytes(GREEDY.read_bytes())
    for command in ("{python} -m eng.main {gguf}", "env ENGINE=eng/main.py python3 run.py",
                    "sh -c 'cd eng && python3 main.py;'",
                    # (a fifteenth campaign's: cd's options, and a folder given to the script as $1)
                    "sh -c 'cd -P eng && python3 main.py'", "sh -c 'cd -- eng && python3 main.py'",
                    """sh -c 'cd "$1" && python3 main.py' sh eng""", "bash -c 'pushd eng; python3 main.py'"):
        done = run(tmp_path, "-c", "edge", "-b", f"g=cmd:{command}", "--junit", "eng/main.py")
        assert refused(done, Path("eng/main.py")), (command, done.stderr)
    assert module.read_bytes() == GREEDY.read_bytes()
    assert engine.read_bytes() == GREEDY.read_bytes() and data.read_bytes() == b"x"
    assert (package / "helper.py").read_text("utf-8") == "X = 1\n"


def test_a_corpus_file_a_glob_matched(tmp_path, zoo):
    zoo("llama-spm")
    corpus = tmp_path / "c" / "a.jsonl"
    corpus.parent.mkdir()
    corpus.write_text('{"text": "a b"}\n', "utf-8")
    done = run(tmp_path, "-c", str(tmp_path / "c" / "*.jsonl"), "-b", "ref", "--junit", str(corpus))
    assert refused(done, corpus), done.stderr
    assert corpus.read_text("utf-8") == '{"text": "a b"}\n'


@pytest.mark.parametrize("own", [corpora_dir() / "edge.jsonl", Path(tokparity.__file__).parent / "known_divergences.toml"])
def test_tokparitys_own_files(tmp_path, own):
    """Checked in this process: a run that wrote over them would damage the checkout under test."""
    assert own.is_file()
    with pytest.raises(TokparityError) as refusal:
        refuse_inputs_in_outputs(tmp_path / "out", {"-c": ["edge"]}, str(own))
    assert str(refusal.value) == f"--junit {own}: is {OWN}; the run would overwrite it with JUnit XML: name another file"


@pytest.mark.parametrize("configuration", ["config.json", "generation_config.json"])
def test_the_configuration_beside_a_tokenizer_json_named_as_one_file(tmp_path, zoo, configuration):
    """A seventh campaign's find, written over before: with the model named by its tokenizer.json,
    ``--junit`` or ``$GITHUB_STEP_SUMMARY`` named the configuration beside it, which ``--check`` reads."""
    model = tmp_path / "m"
    model.mkdir()
    (model / "tokenizer.json").write_bytes(zoo("llama-bpe").files["tokenizer_json"].read_bytes())
    config = model / configuration
    config.write_text('{"eos_token_id": 2}\n', "utf-8")
    environment = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    environment["PYTHONPATH"] = str(ROOT)
    for option, env in (("--junit", {}), ("$GITHUB_STEP_SUMMARY", {"GITHUB_STEP_SUMMARY": str(config)})):
        flags = ["--junit", str(config)] if option == "--junit" else []
        done = subprocess.run([sys.executable, "-m", "tokparity", "compare", str(model / "tokenizer.json"), "-c", "edge",
                               "-b", "ref", "-o", str(tmp_path / "out"), "-q", *flags],
                              env={**environment, **env}, capture_output=True, text=True, timeout=300, cwd=tmp_path)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1, done.stderr
        assert lines[0].startswith(f"tokparity: error: {option} {config}: is a file of the model "), done.stderr
        assert config.read_text("utf-8") == '{"eos_token_id": 2}\n'
