"""Backends at other releases of their libraries (``-b hf@0.21.4``) and ``tokparity drift``.

Real virtualenvs, made by pip from the package index once per machine and kept in the cache
(``$TOKPARITY_CACHE/releases/``): tokenizers 0.21.4, transformers 4.57.6 and SentencePiece
0.2.0, beside the releases installed here (on this machine tokenizers 0.23.3, transformers 5.24.0,
SentencePiece 0.2.3: the counts below are theirs). The first run of this file installs them (about
a minute in all, from wheels).
"""

from __future__ import annotations

import csv
import json
import os
import re

import pytest
import sentencepiece
import tokenizers
import transformers

from tokparity.backends.isolated import IsolatedBackend
from tokparity.backends.registry import make_backend, release_of
from tokparity.backends.releases import PARENT_SITE, READY, environment_dir
from tokparity.cli import main
from tokparity.zoo import resolve_model
from tokparity.zoo.fetch import cache_dir

OLD_TOKENIZERS, OLD_TRANSFORMERS, OLD_SENTENCEPIECE = "0.21.4", "4.57.6", "0.2.0"


def rows(folder) -> list[dict]:
    with open(folder / "mismatches.csv", encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_a_release_runs_in_a_virtualenv_of_its_own_and_answers_as_the_installed_one():
    model = resolve_model("llama-bpe")
    old, here = make_backend(f"hf@{OLD_TOKENIZERS}", model), make_backend("hf", model)
    try:
        assert isinstance(old, IsolatedBackend) and old.name == f"hf@{OLD_TOKENIZERS}"
        assert old.version == OLD_TOKENIZERS and here.version.startswith(tokenizers.__version__)
        env = environment_dir(release_of(f"hf@{OLD_TOKENIZERS}"))
        assert json.loads((env / READY).read_text())["version"] == OLD_TOKENIZERS
        assert list(env.glob(f"lib/python*/site-packages/{PARENT_SITE}"))  # tokparity comes from here, after it
        for text in ("Hello world", " 12345 ünïcödé 🙂", "snake_case_name"):
            assert old.encode(text) == here.encode(text) != []
    finally:
        old.close()
        here.close()


def test_a_release_takes_the_parent_site_folders_after_its_own_without_a_checkout_on_its_path():
    """An installed tokparity (pip, a nox session) reaches the release's child only through the
    .pth that adds the parent's site folders: no PYTHONPATH names a checkout there. The child's
    path holds them, after the release's own, and the .pth runs without a traceback (its first
    line used a comprehension, whose scope cannot see what exec() imported: every installed
    tokparity's release child failed to start)."""
    import subprocess

    from tokparity.backends.releases import parent_site
    release = release_of(f"hf@{OLD_TOKENIZERS}")
    make_backend(f"hf@{OLD_TOKENIZERS}", resolve_model("llama-bpe")).close()  # (made, and its .pth brought up to date)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | parent_site()
    python = environment_dir(release) / "bin" / "python"
    done = subprocess.run([str(python), "-P", "-c", "import json, sys; print(json.dumps(sys.path))"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr and "Error" not in done.stderr, done.stderr
    path = json.loads(done.stdout)
    own = path.index(next(p for p in path if p.startswith(str(environment_dir(release)))))
    parents = parent_site()["TOKPARITY_PARENT_SITE"].split(os.pathsep)
    assert parents and all(p in path and path.index(p) > own for p in parents), (path, parents)


def test_a_damaged_cached_virtualenv_is_made_again(capsys):
    """A cached virtualenv whose .pth is a folder (or whose site folder is gone) was a traceback
    (issue: hostile input, round 3); it is said in one line and made again."""
    model = resolve_model("llama-bpe")
    make_backend(f"hf@{OLD_TOKENIZERS}", model).close()
    env = environment_dir(release_of(f"hf@{OLD_TOKENIZERS}"))
    pth = next(env.glob(f"lib/python*/site-packages/{PARENT_SITE}"))
    pth.unlink()
    pth.mkdir()
    capsys.readouterr()
    backend = make_backend(f"hf@{OLD_TOKENIZERS}", model)
    try:
        assert backend.version == OLD_TOKENIZERS and backend.encode("Hello world") != []
    finally:
        backend.close()
    said = capsys.readouterr().err
    assert f"backend hf@{OLD_TOKENIZERS}: its cached virtualenv {env} is damaged" in said and "made again" in said
    assert pth.is_file()


def test_the_release_this_interpreter_has_runs_in_process_under_the_release_name():
    backend = make_backend(f"hf@{tokenizers.__version__}", resolve_model("llama-bpe"))
    assert not isinstance(backend, IsolatedBackend) and backend.name == f"hf@{tokenizers.__version__}"
    backend.close()


def test_a_cross_release_run_reports_as_a_same_release_run_where_the_libraries_agree(tmp_path):
    """tokenizers 0.21.4 and the installed release agree on llama-bpe's edge and seam texts: the
    reports of old=hf@0.21.4 are those of old=hf@(installed), the release's name aside."""
    outs, codes = {}, []
    for version in (OLD_TOKENIZERS, tokenizers.__version__):
        out = outs[version] = tmp_path / version
        codes.append(main(["compare", "llama-bpe", "-b", f"old=hf@{version}", "-c", "edge", "-c", "seams", "-q",
                           "-o", str(out)]))
    # (the label is not hf's: the known divergences of hf, llama.cpp's Unicode tables, do not cover it)
    assert codes == [1, 1]
    a, b = (json.loads((outs[v] / "summary.json").read_text()) for v in outs)
    assert a["backends"]["old"] == {"version": OLD_TOKENIZERS, "spec": f"hf@{OLD_TOKENIZERS}"}
    for summary in (a, b):
        summary.pop("backends"), summary.pop("timing", None), summary.pop("seconds", None)
        for run in summary["runs"]:
            run.pop("seconds", None)
    assert [(r["backend"], r["cases"], r["mismatches"]) for r in a["runs"]] == \
        [(r["backend"], r["cases"], r["mismatches"]) for r in b["runs"]]
    assert (outs[OLD_TOKENIZERS] / "mismatches.csv").read_bytes() == (outs[tokenizers.__version__] /
                                                                      "mismatches.csv").read_bytes()
    # (each line's seal is its own run's: the header's random run is under it)
    cases = [[re.sub(r', "seal": "[0-9a-f]{32}"', "", line)
              for line in (outs[v] / "cases.jsonl").read_text().splitlines()[1:]] for v in outs]
    assert cases[0] == cases[1] and len(cases[0]) == 2402


def test_drift_of_transformers_4_to_5_on_a_sentencepiece_gguf_is_the_dummy_prefix(tmp_path, capsys):
    """Checked by hand in both releases' source: transformers 4.57.6's GGUFLlamaConverter
    (integrations/ggml.py) is "legacy", its normalizer Prepend('▁') + Replace(' ', '▁') adds the
    prefix always, as SentencePiece and llama.cpp do; 5.x's sentencepiece_tokenizer
    (integrations/gguf/gguf_tokenizer_mapping.py) hands the vocabulary to LlamaTokenizer, whose
    Metaspace (prepend_scheme "first") adds it only where the text does not start with '▁': ' x'
    becomes '▁x', not '▁▁x'. Only texts that start with whitespace change."""
    out = tmp_path / "drift"
    assert main(["drift", "llama-spm", "--library", "transformers", "--from", OLD_TRANSFORMERS,
                 "--to", transformers.__version__, "-c", "edge", "-o", str(out)]) == 1
    assert f"drift: transformers {OLD_TRANSFORMERS} → {transformers.__version__} (hf-gguf) on 1 model(s)" in \
        capsys.readouterr().out
    found = rows(out)
    assert len(found) == 139 and {r["backend"] for r in found} == {f"hf-gguf@{transformers.__version__}"}
    assert {r["oracle"] for r in found} == {f"hf-gguf@{OLD_TRANSFORMERS}"}
    assert all(r["text"][:1].isspace() or r["text"].startswith("▁") for r in found)  # (a '▁' typed is one too)
    assert sum(r["cause"] == "space.dummy-prefix" for r in found) / len(found) >= 0.95
    summary = json.loads((out / "summary.json").read_text())
    assert summary["runs"][0]["root_cause"]["cause"] == "space.dummy-prefix"


def test_drift_of_sentencepiece_0_2_0_to_0_2_3_is_a_change_of_viterbi_ties(tmp_path):
    """SentencePiece 0.2.0 and 0.2.3 break Viterbi ties differently: '---' on botchan-unigram is
    '--','-' in 0.2.0 and '-','--' in 0.2.3, both segmentations scoring the same."""
    out = tmp_path / "drift"
    assert main(["drift", "botchan-unigram", "--library", "sentencepiece", "--from", OLD_SENTENCEPIECE,
                 "--to", sentencepiece.__version__, "-c", "edge", "-q", "-o", str(out)]) == 1
    tie = next(r for r in rows(out) if r["case_id"] == "punctuation-0005")
    assert json.loads(tie["oracle_pieces"]) == ["▁", "--", "-"]
    assert json.loads(tie["backend_pieces"]) == ["▁", "-", "--"]
    assert tie["class"] == "viterbi-tie"


def test_drift_where_nothing_changed_exits_0(tmp_path):
    assert main(["drift", "llama-bpe", "--library", "tokenizers", "--from", OLD_TOKENIZERS,
                 "--to", tokenizers.__version__, "-c", "edge", "-q", "-o", str(tmp_path / "d")]) == 0


def test_drift_where_neither_release_loads_the_model_is_nothing_compared(tmp_path, capsys):
    """It exited 0, "no change", with no report (the eleventh hostile campaign's find)."""
    (tmp_path / "tokenizer.json").write_text('{"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0}, '
                                             '"merges": ["a b c d"]}, "added_tokens": []}', "utf-8")
    assert main(["drift", str(tmp_path / "tokenizer.json"), "--library", "tokenizers", "--from", OLD_TOKENIZERS,
                 "--to", tokenizers.__version__, "-c", "edge", "-q", "-o", str(tmp_path / "d")]) == 2
    assert "tokparity: error: nothing was compared: no model loads in both" in capsys.readouterr().err


@pytest.mark.parametrize("argv, says", [
    (["compare", "llama-bpe", "-b", "ref@1"], "ref is part of tokparity, not a library with releases"),
    (["compare", "llama-bpe", "-b", "hf@0.21;rm"], "'0.21;rm' is not a release number"),
    (["compare", "llama-bpe", "-b", "hf@0.0.999"], "tokenizers has no release 0.0.999 on the package index"),
    (["drift", "llama-bpe", "--library", "numpy", "--from", "1", "--to", "2"], "not a library tokparity runs"),
    (["drift", "llama-bpe", "--library", "tokenizers", "--from", "0.21.4", "--to", "0.21.4"], "give two releases"),
    (["drift", "llama-bpe", "--library", "rwkv", "--from", "0.8.0", "--to", "0.8.32"],
     "none of the models has a file rwkv (rwkv) reads"),
])
def test_bad_releases_are_one_line_and_exit_2(argv, says, tmp_path, capsys):
    assert main([*argv, "-c", "edge", "-q", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) <= 2 and says in err[-1], err  # (a line saying it installs may come first)


@pytest.fixture
def own_releases(tmp_path, monkeypatch):
    """A cache of its own for releases (the zoo's files linked from the real one; a key of its own:
    a journal key behind a link is refused)."""
    cache = tmp_path / "cache"
    cache.mkdir()
    for entry in cache_dir().iterdir():
        if entry.name not in ("releases", "journal-key"):
            (cache / entry.name).symlink_to(entry)
    monkeypatch.setenv("TOKPARITY_CACHE", str(cache))
    return cache


def test_offline_is_one_line_and_leaves_no_virtualenv(own_releases, tmp_path, monkeypatch, capsys):
    for name, value in (("PIP_CONFIG_FILE", os.devnull), ("PIP_INDEX_URL", "http://127.0.0.1:9/simple"),
                        ("PIP_FIND_LINKS", ""), ("PIP_EXTRA_INDEX_URL", ""), ("PIP_RETRIES", "0"),
                        ("PIP_TIMEOUT", "2")):
        monkeypatch.setenv(name, value)
    assert main(["compare", "llama-bpe", "-b", "hf@0.21.2", "-c", "edge", "-q", "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "cannot install tokenizers==0.21.2: the package index is not reachable (offline?)" in err
    releases = own_releases / "releases"
    env = environment_dir(release_of("hf@0.21.2"))
    assert env.parent == releases and not env.exists()
    assert env.with_name(env.name + ".pip-install.log").is_file()  # the log the line names


def test_a_failed_build_is_one_line_naming_the_step_and_the_log(own_releases, tmp_path, capsys):
    """SentencePiece 0.1.83 has no wheel for this Python; its sdist cannot build (it reads a
    ../VERSION file that is not in the sdist)."""
    assert main(["compare", "llama-spm", "-b", "sentencepiece@0.1.83", "-c", "edge", "-q",
                 "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "pip could not install sentencepiece==0.1.83 (building it from source failed: Getting requirements " \
           "to build wheel did not run successfully: FileNotFoundError" in err
    env = environment_dir(release_of("sentencepiece@0.1.83"))
    assert err.endswith(f"{env.name}.pip-install.log") and not env.exists()


def test_a_release_is_covered_by_the_known_divergences_of_its_backend(tmp_path):
    """llama.cpp's Unicode tables predate 16.0: a reviewed divergence of hf on llama-bpe, and of
    hf@0.21.4 as well (a label of the user's own is not hf's, above)."""
    out = tmp_path / "o"
    assert main(["compare", "llama-bpe", "-b", f"hf@{OLD_TOKENIZERS}", "-c", "seams", "-q", "-o", str(out)]) == 0
    assert {r["known"] for r in rows(out)} == {"llama-cpp-unicode-tables-before-16"}


def test_regress_on_another_release_says_the_changes_are_that_bump(tmp_path):
    """Goldens of botchan-unigram made by SentencePiece (the installed release), judged on
    SentencePiece 0.2.0: the two tie changes are the bump's, and the report says which."""
    goldens = tmp_path / "goldens"
    assert main(["regress", "botchan-unigram", "--update", "-c", "edge", "--goldens", str(goldens), "-q"]) == 0
    out = tmp_path / "regress"
    assert main(["regress", "botchan-unigram", "-b", f"sentencepiece@{OLD_SENTENCEPIECE}", "-c", "edge",
                 "--goldens", str(goldens), "-q", "-o", str(out)]) == 0  # (ties are not failures)
    run = next(r for r in json.loads((out / "summary.json").read_text())["runs"]
               if r["backend"] == f"sentencepiece@{OLD_SENTENCEPIECE}")
    assert run["mismatches"] == 4  # (both settings, add_special off and on)
    assert f"; sentencepiece {sentencepiece.__version__} made them and sentencepiece@{OLD_SENTENCEPIECE} runs " \
           f"{OLD_SENTENCEPIECE}: its changes are that release bump's" in run["oracle_why"]


def test_an_engine_on_another_release_of_the_oracles_library_is_named_so(tmp_path):
    """The engine here is SentencePiece 0.2.0 under a name of its own, judged by the installed
    SentencePiece: without --try-release its two changes are ties of equal score (no bug of its
    own, and no word of why); with it they are library.release, the run's verdict proven, and a
    known list can pin that."""
    base = ["compare", "botchan-unigram", "-b", f"mine=sentencepiece@{OLD_SENTENCEPIECE}", "--oracle",
            "sentencepiece", "-c", "edge", "-q"]
    assert main([*base, "-o", str(tmp_path / "plain")]) == 0
    assert {r["cause"] for r in rows(tmp_path / "plain")} == {"model.viterbi-tie"}
    tried = [*base, "--try-release", f"sentencepiece@{OLD_SENTENCEPIECE}"]
    assert main([*tried, "-o", str(tmp_path / "tried")]) == 1
    found = rows(tmp_path / "tried")
    assert [r["case_id"] for r in found] == ["punctuation-0005", "punctuation-0075"]
    assert {r["cause"] for r in found} == {"library.release"}
    assert all(r["cause_evidence"].startswith("the reference reproduces the backend's ids exactly with: "
                                              f"sentencepiece@{OLD_SENTENCEPIECE}: release {OLD_SENTENCEPIECE} of the "
                                              "oracle's library") for r in found)
    verdict = json.loads((tmp_path / "tried" / "summary.json").read_text())["runs"][0]["root_cause"]
    assert (verdict["cause"], verdict["explains"], verdict["proven"]) == ("library.release", 2, True)
    pin = tmp_path / "pin.toml"
    pin.write_text('[[divergence]]\nid = "mine-embeds-sentencepiece-0-2-0"\nmodels = ["botchan-unigram"]\n'
                   'backends = ["mine"]\nclasses = ["viterbi-tie", "byte-fallback"]\ncause = "library.release"\n'
                   'reason = "our engine embeds SentencePiece 0.2.0"\nupstream = "our vendor pin"\n')
    assert main([*tried, "--known", str(pin), "-o", str(tmp_path / "pinned")]) == 0
    assert {r["known"] for r in rows(tmp_path / "pinned")} == {"mine-embeds-sentencepiece-0-2-0"}


def test_a_release_to_try_that_is_not_one_is_one_line(tmp_path, capsys):
    assert main(["compare", "botchan-unigram", "--try-release", "sentencepiece", "-c", "edge", "-q",
                 "-o", str(tmp_path / "o")]) == 2
    assert "--try-release 'sentencepiece': give BACKEND@VERSION" in capsys.readouterr().err


def test_a_release_to_try_of_another_library_than_the_oracles_is_not_tried(tmp_path):
    """botchan-unigram's oracle is SentencePiece: tokenizers 0.21.4 (hf, which runs on its
    tokenizer.json too) is no release of the oracle's library, so it names nothing here."""
    out = tmp_path / "o"
    assert main(["compare", "botchan-unigram", "-b", f"mine=sentencepiece@{OLD_SENTENCEPIECE}", "--oracle",
                 "sentencepiece", "-c", "edge", "-q", "--try-release", f"hf@{OLD_TOKENIZERS}", "-o", str(out)]) == 0
    assert {r["cause"] for r in rows(out)} == {"model.viterbi-tie"}


def test_a_stored_release_to_try_is_signed_like_a_command():
    """A resume installs what --try-release names: a journal someone else wrote must not."""
    from tokparity.run.journal.signing import commands_in
    assert commands_in({"backends": ["hf", f"hf@{OLD_TOKENIZERS}"], "try_release": ["sentencepiece@0.2.0"]}) == \
        [f"hf@{OLD_TOKENIZERS}", "--try-release sentencepiece@0.2.0"]


def test_a_drift_that_fixes_the_old_release_says_the_old_one_departs(tmp_path):
    """transformers 4.57.6 splits a Llama 3 GGUF with GPT-2's regex (its GGUFGPTConverter, by
    architecture), 5.24.0 with Llama 3's (tokenizer.ggml.pre): 'snake_case_name' is
    snake _ case _ name before, snake _case _name after, which is the reference's own answer. The
    row says that the old release, the oracle here, is the one that departs."""
    out = tmp_path / "drift"
    assert main(["drift", "llama-bpe", "--library", "transformers", "--from", OLD_TRANSFORMERS,
                 "--to", transformers.__version__, "-c", "edge", "-c", "seams", "-q", "-o", str(out)]) == 1
    row = next(r for r in rows(out) if r["text"] == "snake_case_name")
    assert json.loads(row["oracle_pieces"]) == ["snake", "_", "case", "_", "name"]
    assert json.loads(row["backend_pieces"]) == ["snake", "_case", "_name"]
    assert (row["cause"], row["cause_evidence"]) == ("", "the backend gives the reference's own ids on this text: it "
                                                         "is the oracle that departs from tokparity's reference here, "
                                                         "so no cause of the backend's can be reproduced")
    # Nor does the run's verdict count such a row as reproduced (any set that leaves its text alone
    # would: it claimed unicode.tables "reproduces 272 of 272" on these corpora, where it reproduces
    # the 7 rows that are 5.24.0's own, Unicode 16 code points): they are counted apart.
    found = rows(out)
    departs = sum(r["cause_evidence"].startswith("the backend gives the reference's own ids") for r in found)
    verdict = json.loads((out / "summary.json").read_text())["runs"][0]["root_cause"]
    assert (verdict["cause"], verdict["mismatches"], verdict["oracle_departs"]) == \
        ("unicode.tables", len(found) - departs, departs)
    assert departs > 250 and verdict["explains"] == verdict["mismatches"] == 7


def test_a_full_disk_while_a_virtualenv_is_made_is_said_to_be_the_disk(tmp_path, zoo):
    """On a full disk `python -m venv` fails and its log cannot even be written; the error blamed a
    missing venv module (issue: hostile input, round 3). A 3 MB tmpfs is the full disk."""
    import shutil
    import subprocess
    import sys

    if os.geteuid() != 0:
        pytest.skip("MOUNTING A TMPFS NEEDS ROOT: the full-disk check of release installs did not run")
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(disk)], check=True)
    try:
        model = tmp_path / "model"
        model.mkdir()
        shutil.copy(zoo("llama-bpe").files["tokenizer_json"], model / "tokenizer.json")
        (tmp_path / "one.jsonl").write_text('{"id": "a", "text": "hi"}\n', "utf-8")
        done = subprocess.run([sys.executable, "-m", "tokparity", "compare", str(model), "-c", str(tmp_path / "one.jsonl"),
                               "-b", f"hf@{OLD_TOKENIZERS}", "-o", str(tmp_path / "out"), "-q"],
                              env={**os.environ, "TOKPARITY_CACHE": str(disk)}, capture_output=True, text=True,
                              timeout=300)
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
    assert done.returncode == 2, done.stderr
    error = done.stderr.strip().splitlines()[-1]
    assert "making its virtualenv failed with 0 MiB free" in error and "TOKPARITY_CACHE" in error, error
    assert "venv module" not in error


def test_a_release_runs_beside_jobs_from_an_installed_tokparity(tmp_path):
    """``-j 2`` with a release, from an installed tokparity (a nox session's, pip's): a worker's
    environment put this Python's site folder on PYTHONPATH, the release's child imported this
    tokenizers, and every run failed telling the user to remove a good release (a tenth hostile
    campaign's find). The command runs as a user's would: no checkout on its path."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    found = subprocess.run([sys.executable, "-P", "-c", "import tokparity; print(tokparity.__file__)"], env=env,
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert "site-packages" in found.stdout, ("the test needs tokparity installed, as the README's command does",
                                             found.stdout, found.stderr)
    done = subprocess.run([sys.executable, "-P", "-m", "tokparity", "compare", "llama-bpe", "-c", "edge", "--sample",
                           "10", "-b", "hf", "-b", f"old=hf@{OLD_TOKENIZERS}", "-j", "2", "-o", "out", "-q"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["backends"]["old"]["version"] == OLD_TOKENIZERS
