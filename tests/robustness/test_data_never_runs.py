"""Nothing a data file or the current folder holds ever runs (issue: hostile input, round 3).

A goldens file is data a pull request can change: one that names a program (``cmd:``, ``py:``,
a release to install) where ``--update`` writes a built-in backend is refused, and nothing runs.
A model repository is a folder someone else made: its ``json.py`` or ``tokenizers.py`` never runs
inside tokparity's children (the template sandbox, isolated backends, ``-j`` workers), even when
tokparity is started in that folder. Each case here ran the program or the module before."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tokparity.cli import main

ROOT = Path(__file__).resolve().parents[2]


# --- goldens never name a program ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def goldens(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("goldens")
    assert main(["regress", "--update", "llama-spm", "-c", "edge", "--goldens", str(folder), "-q"]) == 0
    return folder


def _edited(goldens: Path, into: Path, change) -> Path:
    """A copy of the goldens folder whose llama-spm file has its lines passed through ``change``."""
    folder = Path(shutil.copytree(goldens, into))
    path = folder / "llama-spm.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = [json.loads(line) for line in fh]
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(obj, ensure_ascii=False) + "\n" for obj in change(lines))
    return folder


def _header(edit):
    def change(lines):
        edit(lines[0])
        return lines
    return change


def _appended(line):
    return lambda lines: [*lines, line]


@pytest.mark.parametrize("ops, change", [
    pytest.param("encode", _header(lambda h: h["oracles"]["plain"].append("cmd:touch {marker}")), id="oracle-cmd"),
    pytest.param("encode", _header(lambda h: h["oracles"]["add_special"].insert(0, "py:{engine}:encode")),
                 id="oracle-py"),
    pytest.param("encode", _header(lambda h: h["oracles"]["plain"].insert(0, "mine=cmd:touch {marker}")),
                 id="oracle-labelled"),
    pytest.param("encode", _header(lambda h: h["oracles"]["plain"].insert(0, "hf@0.0.1")), id="oracle-release"),
    pytest.param("encode", _header(lambda h: h["oracles"]["plain"].insert(0, "llama-server")), id="oracle-server"),
    pytest.param("encode", _header(lambda h: h["oracles"]["plain"].insert(0, "x=http:llama-server@9")),
                 id="oracle-http"),
    pytest.param("pieces", _appended({"decoding": {"decoder": "cmd:touch {marker}", "version": "1",
                                                   "pieces_sha256": None}}), id="decoder-cmd"),
    pytest.param("encode", _appended({"corpus": "planted", "cases": 0, "texts_sha256": "", "ids_sha256": "",
                                      "per_case": True, "prompts": {"encoder": "py:{engine}:encode"}}),
                 id="prompt-encoder-py"),
])
def test_goldens_that_name_a_program_are_refused_and_nothing_runs(capsys, goldens, tmp_path, ops, change):
    marker = tmp_path / "PWNED"
    engine = tmp_path / "evil.py"
    engine.write_text(f"open({str(marker)!r}, 'w').close()\ndef encode(text, a, p):\n    return []\n", "utf-8")

    def planted(lines):
        text = json.dumps(change(lines)[:])
        return json.loads(text.replace("{marker}", str(marker)).replace("{engine}", str(engine)))

    folder = _edited(goldens, tmp_path / "goldens", planted)
    code = main(["regress", "llama-spm", "--goldens", str(folder), "--ops", ops, "-q"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "llama-spm.jsonl.gz" in err, err
    assert "which goldens may not name" in err and "--update" in err, err
    assert not marker.exists()


def test_goldens_of_built_in_backends_still_pass(capsys, goldens):
    """The twin: the goldens as ``--update`` wrote them (golden, llama.cpp) are read and agree."""
    assert main(["regress", "llama-spm", "--goldens", str(goldens), "-q"]) == 0, capsys.readouterr().err


# --- the current folder's modules never run in a child -------------------------------------------------

POISONED = ("json", "jinja2", "tokenizers", "regex", "numpy", "venv", "pip")


@pytest.fixture
def repository(tmp_path: Path, zoo) -> Path:
    """A model repository as someone else made it: Qwen3's tokenizer files with its chat template,
    and a module named like each library tokparity's children import, which leaves a mark if run."""
    model = zoo("qwen3")
    folder = tmp_path / "repo"
    folder.mkdir()
    shutil.copy(model.files["tokenizer_json"], folder / "tokenizer.json")
    shutil.copy(model.files["tokenizer_config"], folder / "tokenizer_config.json")
    if "chat_template" in model.files:
        shutil.copy(model.files["chat_template"], folder / "chat_template.jinja")
    for name in POISONED:
        (folder / f"{name}.py").write_text(
            f"open({str(tmp_path / ('RAN-' + name))!r}, 'w').close()\nraise ImportError('a planted {name}.py')\n",
            "utf-8")
    (tmp_path / "texts.jsonl").write_text("".join(json.dumps({"id": f"t{i}", "text": t}) + "\n"
                                                  for i, t in enumerate(["Hello world", "  x\n", "héllo"])), "utf-8")
    (tmp_path / "engine.py").write_text("def encode(text, add_special, parse_special):\n    return [1]\n", "utf-8")
    return folder


def _run_in(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """``tokparity ARGS`` started in ``folder`` as its console script starts: ``-P`` keeps the
    folder off the parent's own path (this checkout is on it), so only what tokparity starts
    could import from it."""
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"} | {"PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-P", "-m", "tokparity", *args, "-q"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)


def _ran(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.parent.glob("RAN-*"))


def test_a_chat_run_in_the_repository_runs_none_of_its_modules(repository):
    done = _run_in(repository, "compare", ".", "--ops", "chat", "-b", "hf", "-o", "../out")
    assert done.returncode in (0, 1), done.stderr
    assert _ran(repository) == [], done.stderr
    summary = json.loads((repository.parent / "out" / "summary.json").read_text("utf-8"))
    assert sum(run["cases"] for run in summary["runs"]) > 0  # (the sandbox rendered them, without the modules)


def test_workers_and_isolated_engines_in_the_repository_run_none_of_its_modules(repository):
    engine = f"py:{repository.parent / 'engine.py'}:encode"
    done = _run_in(repository, "compare", ".", "llama-spm", "-c", "../texts.jsonl", "-b", "ref", "-b", engine,
                   "-j", "2", "-o", "../out")
    assert done.returncode in (0, 1), done.stderr
    assert _ran(repository) == [], done.stderr


def test_a_py_engine_takes_only_its_own_module_from_the_current_folder(tmp_path, zoo):
    """``py:MODULE`` once put the current folder on the child's path, last: a library the engine
    imports and that looks for an optional package (transformers looks for torch) then imported a
    planted ``torch.py`` (found by a hostile-input helper). Only the module named comes from there."""
    zoo("llama-spm")
    repo, legit = tmp_path / "repo", tmp_path / "legit"
    repo.mkdir()
    legit.mkdir()
    (repo / "tokparity_optional_lib.py").write_text(f"open({str(tmp_path / 'RAN')!r}, 'w').close()\n", "utf-8")
    probe = ("def encode(text, add_special, parse_special):\n"
             "    try:\n"
             "        import tokparity_optional_lib  # (an optional package a library looks for)\n"
             "    except ImportError:\n"
             "        pass\n"
             "    return [1]\n")
    (legit / "legit_engine.py").write_text(probe, "utf-8")
    (repo / "own_engine.py").write_text(probe, "utf-8")
    (tmp_path / "one.jsonl").write_text('{"id": "a", "text": "Hello"}\n', "utf-8")
    for engine, path in (("legit_engine", f"{ROOT}{os.pathsep}{legit}"), ("own_engine", str(ROOT))):
        done = subprocess.run([sys.executable, "-P", "-m", "tokparity", "compare", "llama-spm", "-c", "../one.jsonl",
                               "-b", f"py:{engine}:encode", "-o", f"../out-{engine}", "-q"], cwd=repo,
                              env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True, timeout=300)
        assert done.returncode == 1, done.stderr  # (the engine ran: its [1] is a mismatch)
        assert not (tmp_path / "RAN").exists(), engine


@pytest.mark.xdist_group("ray")  # (one Ray at a time on this machine: tests/test_cluster.py)
def test_ray_actors_in_the_repository_run_none_of_its_modules(repository):
    """Ray puts the driver's current folder on every worker's path: with ``--ray`` a planted
    ``tomllib.py`` or ``numpy.py`` ran in the actors (a hostile-input helper's find), and ``pydantic.py``
    as each worker started. Ray is started from an empty folder, and the workers take the current
    folder off before any actor is made."""
    # (pydantic and pyarrow: Ray's workers import them while they start, before tokparity's hook runs)
    for name in ("tomllib", "pydantic", "pyarrow"):
        (repository / f"{name}.py").write_text(f"open({str(repository.parent / ('RAN-' + name))!r}, 'w').close()\n"
                                               f"raise ImportError('a planted {name}.py')\n", "utf-8")
    done = _run_in(repository, "compare", ".", "-c", "../texts.jsonl", "-b", "ref", "--ray", "-o", "../out")
    assert done.returncode in (0, 1), done.stderr
    assert _ran(repository) == [], done.stderr


@pytest.mark.xdist_group("ray")  # (one Ray at a time on this machine: tests/test_cluster.py)
def test_regress_on_ray_in_the_repository_runs_none_of_its_modules(repository):
    """``regress --ray`` judges each model in a Ray task, which imports tokenizers late, inside the
    task: Ray had put the current folder back on the path by then, and the planted
    ``tokenizers.py`` ran (an independent hostile campaign's find). Each task takes it off first."""
    (repository / "pydantic.py").write_text(f"open({str(repository.parent / 'RAN-pydantic')!r}, 'w').close()\n",
                                            "utf-8")
    done = _run_in(repository, "regress", "qwen3", "--ray", "-o", "../out-regress")
    assert done.returncode in (0, 1), done.stderr
    assert _ran(repository) == [], done.stderr
