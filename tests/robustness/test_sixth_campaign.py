"""What a sixth hostile campaign broke (2026-11-28, a helper told only the promises of
docs/robustness.md), each as a user runs it:

- a corpus file that is a link out of its folder (``corpora/extra.txt`` -> ``/proc/self/environ``)
  put the environment, or the journal key, in the reports: it is refused in one line;
- ``convert`` read a ``tokenizer_config.json`` linked from outside the model folder, and wrote
  over that file with ``-o``: both refused;
- an engine that never answers passed (✅, exit 0) where a ``--known`` entry covered its
  timeouts: it answered no case, so nothing was compared;
- ``--junit`` wrote over a file an engine's command names in a list (``--files=a,b``) or in an
  ``@file`` of arguments: refused;
- smaller: ``encode -`` of bytes that are not UTF-8 gave five backend errors and exit 1;
  ``zoo path ''`` read the current folder; ``--try-release`` installed a release before it refused
  a later name. Each is one line, exit 2, now."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli_runs import tokparity

ROOT = Path(__file__).resolve().parents[2]
ANSWERS_ZERO = "import sys, json\nfor line in sys.stdin:\n    r = json.loads(line)\n" \
               "    print(json.dumps({'id': r['id'], 'ids': [0]}), flush=True)\n"


def the_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("tokparity: error:")]
    return line


def test_a_corpus_linked_out_of_its_folder_is_refused(tmp_path, zoo):
    zoo("botchan-unigram")
    (tmp_path / "corpora").mkdir()
    (tmp_path / "corpora" / "a.txt").write_text("hello\n", "utf-8")
    (tmp_path / "corpora" / "extra.txt").symlink_to("/proc/self/environ")
    (tmp_path / "eng.py").write_text(ANSWERS_ZERO, "utf-8")
    for corpus in ("corpora/*.txt", "corpora/extra.txt"):
        done = tokparity("compare", "botchan-unigram", "-c", corpus, "-b", f"mine=cmd:{sys.executable} eng.py",
                         "-o", "out", "-q", cwd=tmp_path, env={"SECRET_TOKEN": "hunter2"})
        assert "extra.txt: is a link to /proc/" in the_error(done) and "outside its folder" in the_error(done)
        assert not any("hunter2" in f.read_text("utf-8", errors="replace")
                       for f in (tmp_path / "out").glob("*") if f.is_file())
    (tmp_path / "corpora" / "b.txt").symlink_to("a.txt")  # (a link inside the folder is read)
    done = tokparity("compare", "botchan-unigram", "-c", "corpora/b.txt", "-b", f"mine=cmd:{sys.executable} eng.py",
                     "-o", "out2", "-q", cwd=tmp_path)
    assert done.returncode == 1, done.stderr


def test_a_glob_through_a_linked_folder_is_refused_and_a_dataset_cache_is_read(tmp_path, zoo):
    """``corp/*/*.txt`` with ``corp/sub`` linked to a folder elsewhere read that folder's files (a
    second read's find); a Hugging Face cache snapshot, whose files link into its blobs, is read."""
    zoo("botchan-unigram")
    (tmp_path / "eng.py").write_text(ANSWERS_ZERO, "utf-8")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "key.txt").write_text("hunter2\n", "utf-8")
    (tmp_path / "corp").mkdir()
    (tmp_path / "corp" / "sub").symlink_to(tmp_path / "secret")
    done = tokparity("compare", "botchan-unigram", "-c", "corp/*/*.txt", "-b", f"mine=cmd:{sys.executable} eng.py",
                     "-o", "out", "-q", cwd=tmp_path)
    assert "outside its folder corp" in the_error(done)
    repo = tmp_path / "hub" / "datasets--org--texts"
    (repo / "blobs").mkdir(parents=True)
    (repo / "blobs" / "abc123").write_text("hello\n", "utf-8")
    (repo / "snapshots" / "rev1").mkdir(parents=True)
    (repo / "snapshots" / "rev1" / "texts.txt").symlink_to("../../blobs/abc123")
    done = tokparity("compare", "botchan-unigram", "-c", str(repo / "snapshots" / "rev1" / "texts.txt"), "-b",
                     f"mine=cmd:{sys.executable} eng.py", "-o", "out2", "-q", cwd=tmp_path)
    assert done.returncode == 1, done.stderr


def test_convert_reads_only_inside_the_folder_and_never_writes_over_what_it_reads(tmp_path, zoo):
    source = Path(zoo("botchan-unigram").files["tokenizer_json"])
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes(source.read_bytes())
    outside = tmp_path / "outside.json"
    outside.write_text('{"chat_template": "hunter2 {{ messages[0].content }}"}', "utf-8")
    (folder / "tokenizer_config.json").symlink_to(outside)
    error = the_error(tokparity("convert", "m/tokenizer.json", "--to", "gguf", "-o", "m.gguf", cwd=tmp_path))
    assert "tokenizer_config.json: a link to" in error and not (tmp_path / "m.gguf").exists()
    (folder / "tokenizer_config.json").unlink()
    (folder / "tokenizer_config.json").write_text("{}", "utf-8")
    error = the_error(tokparity("convert", "m/tokenizer.json", "--to", "gguf", "-o", "m/tokenizer_config.json",
                                cwd=tmp_path))
    assert "-o m/tokenizer_config.json: is the file it reads" in error
    assert (folder / "tokenizer_config.json").read_text("utf-8") == "{}"
    assert tokparity("convert", "m/tokenizer.json", "--to", "gguf", "-o", "m.gguf", cwd=tmp_path).returncode == 0


def test_an_engine_that_answers_nothing_is_nothing_compared_even_when_known(tmp_path, zoo):
    zoo("botchan-unigram")
    (tmp_path / "hang.py").write_text("import sys, time\nfor line in sys.stdin:\n    time.sleep(3600)\n", "utf-8")
    (tmp_path / "one.txt").write_text("hello\n", "utf-8")
    (tmp_path / "k.toml").write_text('[[divergence]]\nid = "x"\nmodels = ["*"]\nbackends = ["e"]\n'
                                     'classes = ["timeout"]\nreason = "r"\nupstream = "u"\n', "utf-8")
    done = tokparity("compare", "botchan-unigram", "-c", "one.txt", "-b", f"e=cmd:{sys.executable} hang.py",
                     "--known", "k.toml", "--timeout", "1", "-o", "out", "--junit", "j.xml", cwd=tmp_path)
    assert "nothing was compared: e answered no case" in the_error(done)
    assert not (tmp_path / "j.xml").exists()


def test_junit_never_writes_over_a_file_an_engine_names_in_a_list_or_an_argument_file(tmp_path, zoo):
    zoo("botchan-unigram")
    (tmp_path / "eng.py").write_text(ANSWERS_ZERO, "utf-8")
    (tmp_path / "c.txt").write_text("hello\n", "utf-8")
    for name in ("a.bin", "b.bin"):
        (tmp_path / name).write_text("keep\n", "utf-8")
    (tmp_path / "args.txt").write_text("--vocab a.bin\n", "utf-8")
    for command, target in ((f"{sys.executable} eng.py --files=a.bin,b.bin", "b.bin"),
                            (f"{sys.executable} eng.py --path=a.bin:b.bin", "b.bin"),
                            (f"{sys.executable} eng.py @args.txt", "a.bin")):
        done = tokparity("compare", "botchan-unigram", "-c", "c.txt", "-b", f"m=cmd:{command}", "-o", "out",
                         "--junit", target, cwd=tmp_path)
        assert f"--junit {target}: is -b" in the_error(done)
        assert (tmp_path / target).read_text("utf-8") == "keep\n"


def test_a_text_that_is_not_utf8_an_empty_model_and_a_bad_release_name_are_one_line(tmp_path, zoo):
    zoo("llama-spm")
    done = subprocess.run([sys.executable, "-m", "tokparity", "encode", "llama-spm", "-", "-b", "ref"],
                          input=b"ab\xff\n", capture_output=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and done.stderr.decode().strip() == (
        "tokparity: error: stdin is not UTF-8 (byte 0xff at offset 2): give the text in UTF-8, or spell the "
        "character with --escapes"), done.stderr
    exact = subprocess.run([sys.executable, "-m", "tokparity", "encode", "llama-spm", "-", "-b", "ref", "--json"],
                           input=b"a\r\nb", capture_output=True, timeout=300, cwd=tmp_path,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert exact.returncode == 0 and '"text": "a\\r\\nb"' in exact.stdout.decode(), exact.stdout  # CR LF kept
    for args in (("zoo", "path", ""), ("compare", "", "-c", "edge")):
        assert "MODEL '' is empty: give a zoo name" in the_error(tokparity(*args, cwd=tmp_path))
    before = sorted((tmp_path / "cache" / "releases").glob("*")) if (tmp_path / "cache").exists() else []
    line = the_error(tokparity("compare", "llama-spm", "-c", "edge", "--try-release", "sentencepiece@0.1.99",
                               "--try-release", "nosuch@1", cwd=tmp_path, env={"TOKPARITY_CACHE": str(tmp_path / "cache")}))
    assert "unknown backend 'nosuch'" in line
    assert sorted((tmp_path / "cache" / "releases").glob("*")) == before  # nothing installed first
