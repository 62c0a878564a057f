"""Faults of the environment, not of the files' contents (issue: hostile input, round 2): a FIFO given
as ``--known``, as the model or as ``$GITHUB_STEP_SUMMARY`` hung the run (reading or appending
blocks until another process opens the other end); ``PYTHONIOENCODING=ascii`` and standard output
on /dev/full ended in a traceback at the summary's first line. Each is now one line (a warning for
the step summary, which never decides a run), and nothing hangs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_runs import tokparity

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def folder(tmp_path: Path, zoo) -> Path:
    zoo("llama-spm")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "texts.jsonl").write_text(json.dumps({"id": "a", "text": "hello world ✅"}) + "\n", "utf-8")
    return tmp_path


RUN = ("compare", "llama-spm", "-c", "texts.jsonl", "-b", "ref", "-q")


@pytest.mark.parametrize("args,words", [
    (("compare", "llama-spm", "-c", "texts.jsonl", "-b", "ref", "--known", "fifo", "-o", "out", "-q"),
     ("fifo: not a regular file", "--known")),
    (("compare", "fifo", "-c", "texts.jsonl", "-b", "ref", "-o", "out", "-q"), ("fifo: not a regular file", "model")),
])
def test_a_fifo_input_is_one_line_not_a_hang(folder, args, words):
    done = tokparity(*args, cwd=folder)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokparity: error: ") and all(w in lines[0] for w in words), lines


def test_a_fifo_step_summary_is_a_warning_not_a_hang(folder):
    done = tokparity(*RUN, "-o", "out", cwd=folder, env={"GITHUB_STEP_SUMMARY": str(folder / "fifo")})
    assert done.returncode == 0, done.stderr
    assert "GITHUB_STEP_SUMMARY" in done.stderr and "not a regular file" in done.stderr


def test_an_ascii_terminal_gets_escapes_not_a_traceback(folder):
    done = tokparity(*RUN, "-o", "out", cwd=folder, env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "\\u2705 no mismatch to review" in done.stdout


def test_standard_output_on_a_full_device_is_one_line(folder):
    with open("/dev/full", "w") as full:
        done = tokparity(*RUN, "-o", "out", cwd=folder, stdout=full)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert lines == ["tokparity: error: cannot write to standard output (No space left on device); the report "
                     "folder holds the results"], lines
    assert (folder / "out" / "summary.json").is_file()


@pytest.mark.parametrize("kind", ["loop", "dangling", "under-a-file"])
def test_a_cache_that_cannot_be_a_folder_is_one_line(folder, kind):
    """``TOKPARITY_CACHE`` a loop of symbolic links, a link to nothing, or a path under a file: each
    ended in a FileExistsError traceback (or NotADirectoryError) when the zoo took its lock there."""
    if kind == "loop":
        (folder / "a").symlink_to(folder / "b")
        (folder / "b").symlink_to(folder / "a")
        cache = folder / "a"
    elif kind == "dangling":
        (folder / "a").symlink_to(folder / "nowhere" / "x")
        cache = folder / "a"
    else:
        (folder / "afile").write_text("x", "utf-8")
        cache = folder / "afile" / "cache"
    done = tokparity(*RUN, "-o", "out", cwd=folder, env={"TOKPARITY_CACHE": str(cache)})
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tokparity: error: ") and "TOKPARITY_CACHE" in lines[0], lines
