"""The fourteenth hostile campaign's findings (a helper told only docs/robustness.md's promises,
2026-11-30), each fixed, with the test that failed before."""

from __future__ import annotations

import ctypes
import os
import signal

import pytest

from tokparity.backends.llamacpp import _ctrl_c_after


def test_ctrl_c_during_a_ctypes_callback_is_not_lost():
    """llama.cpp logs through a Python callback while it loads a model. Ctrl-C raised there was
    swallowed by ctypes: the run went on and ended with ✅, exit 0. It now acts once the load returns."""
    comparer = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)

    def compare(a, b):  # (where the signal lands: inside a callback from C)
        os.kill(os.getpid(), signal.SIGINT)
        return 0

    values = (ctypes.c_int * 2)(2, 1)
    libc = ctypes.CDLL(None)
    with pytest.raises(KeyboardInterrupt), _ctrl_c_after():
        libc.qsort(values, 2, ctypes.sizeof(ctypes.c_int), comparer(compare))


def test_a_folder_swapped_for_a_link_during_the_run_gets_no_report(tmp_path, monkeypatch):
    """The output folder renamed and a link to another folder planted in its place during the run:
    the reports went through the link into that folder. The run now writes none there."""
    from tokparity.run.journal import Journal

    monkeypatch.setenv("TOKPARITY_CACHE", str(tmp_path / "cache"))
    out, victim = tmp_path / "out", tmp_path / "victim"
    victim.mkdir()
    journal = Journal.create(out, "compare", {}, [], models=[])
    try:
        assert not journal.gone() and not journal.folder_replaced()
        out.rename(tmp_path / "out.real")
        out.symlink_to(victim)
        assert journal.gone() and journal.folder_replaced()
    finally:
        journal.close()


def test_a_py_engine_named_by_its_path_keeps_its_packages_files(tmp_path, monkeypatch, capsys):
    """``py:/path/pkg/e.py:encode``: the data files of its package were not taken as the engine's,
    so ``-o`` onto the package deleted its summary.json. The module form was refused already."""
    from tokparity.cli import main

    package = tmp_path / "engpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "e.py").write_text("def encode(text, add_special, parse_special):\n    return [1]\n")
    (package / "summary.json").write_text('{"k": 1}\n')
    monkeypatch.chdir(tmp_path)
    code = main(["compare", "llama-spm", "-c", "edge", "-b", f"mine=py:{package / 'e.py'}:encode", "-o", str(package)])
    assert code == 2 and (package / "summary.json").read_text() == '{"k": 1}\n'
    assert "engpkg" in capsys.readouterr().err


def test_convert_writes_no_other_file_of_the_models_folder(tmp_path, zoo, capsys):
    """``convert DIR/tokenizer.json --to gguf -o DIR/special_tokens_map.json`` made that file a
    GGUF (so for added_tokens.json, vocab.json, merges.txt, a tokenizer.model beside it), where
    compare refuses to write any of them. Now refused too; the format's own name stays writable."""
    import shutil

    from tokparity.cli import main

    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(zoo("qwen3").path("tokenizer_json"), folder / "tokenizer.json")
    (folder / "special_tokens_map.json").write_text("{}\n")
    code = main(["convert", str(folder / "tokenizer.json"), "--to", "gguf", "-o", str(folder / "special_tokens_map.json")])
    assert code == 2 and (folder / "special_tokens_map.json").read_text() == "{}\n"
    assert "special_tokens_map.json" in capsys.readouterr().err
    assert main(["convert", str(folder / "tokenizer.json"), "--to", "gguf", "-o", str(folder / "qwen3.gguf")]) == 0


def test_a_file_named_as_a_report_that_is_not_one_is_never_removed(tmp_path, monkeypatch, capsys):
    """``-o`` onto a folder a ``cmd:`` engine reads through ``env -C DIR`` (a spelling the run does
    not follow): its summary.json was deleted as the run began. A report-named file that is not a
    tokparity report now stops the run before anything is removed."""
    from tokparity.cli import main

    engine = tmp_path / "engdir"
    engine.mkdir()
    (engine / "summary.json").write_text('{"ids": [1]}\n')
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")  # (a folder inside the current one that a word names is the engine's: test_sixteenth_campaign.py)
    code = main(["compare", "llama-spm", "-c", "edge", "-b", "mine=cmd:env -C ../engdir python3 eng.py", "-o", "../engdir"])
    assert code == 2 and (engine / "summary.json").read_text() == '{"ids": [1]}\n'
    assert "not a tokparity report" in capsys.readouterr().err and not (engine / "cases.jsonl").exists()


@pytest.mark.parametrize("argv, said", [
    (["compare", "llama-spm", "-c", "edge", "-b", "ref", "--known", "deep.toml"], "nested too deep"),
    (["compare", "llama-spm", "-c", "edge", "-b", "ref", "--junit", ""], "--junit '': names nothing"),
    (["compare", "llama-spm", "--resume", ""], "--resume '': names nothing"),
    (["fuzz", "llama-spm", "--seconds", "1", "-o", ""], "-o '': names nothing"),
    (["compare", "llama-spm", "-c", "", "-b", "ref"], "-c '': names nothing"),
    (["regress", "--update", "llama-spm", "-c", "edge", "--goldens", "afile"], "not a folder"),
    (["regress", "--update", "llama-spm", "-c", "edge", "--goldens", "afile/sub"], "not a folder"),
], ids=["deep-toml", "empty-junit", "empty-resume", "empty-out", "empty-corpus", "goldens-file", "goldens-under-a-file"])
def test_bad_input_is_one_line(tmp_path, monkeypatch, capsys, argv, said):
    """A --known file nested 5,000 deep, ``--junit ''`` (an unset variable in CI) and ``--goldens``
    naming a file: a traceback, or silence, before."""
    from tokparity.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "deep.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    (tmp_path / "afile").write_text("x\n")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err


def test_a_stopped_runs_title_says_it_was_interrupted():
    """Its title said ``❌ 320 unexplained mismatches``, as a whole run's does; only the second line
    said interrupted. ``⏸`` stays the title of a stopped run with nothing unexplained."""
    from tokparity.report.overview import Totals

    def title(unexplained: int, cases: int, interrupted: bool) -> str:
        return Totals(1, cases, unexplained, unexplained, 0, 0, unexplained, interrupted).verdict

    assert title(320, 884, True) == "❌ 320 mismatches to review · interrupted"
    assert title(0, 0, True) == "⚠️ nothing compared: no backend judged a case · interrupted"
    assert title(0, 10, True).startswith("⏸ interrupted")
    assert title(320, 884, False) == "❌ 320 mismatches to review"
