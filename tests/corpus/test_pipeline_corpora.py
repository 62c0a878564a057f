"""Corpora as data pipelines keep them (issue 21, item 3): Parquet files and folders, saved
``datasets`` (Arrow), gzip and zstd JSONL/text, globs, seeded samples, and the bad input each can
be. Every file is written here, from tokparity's own corpora, with pyarrow, gzip and zstandard."""

from __future__ import annotations

import gzip
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tokparity.corpus import BadCorpus, load_corpus
from tokparity.corpus.pipeline import ReadOptions, with_options

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
zstandard = pytest.importorskip("zstandard")

ROOT = Path(__file__).resolve().parents[2]
EDGE = list(load_corpus("edge"))


def tokparity(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "tokparity", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def edge_table(cases=EDGE):
    return pa.table({"body": [c.text for c in cases], "doc_id": [c.id for c in cases],
                     "n": list(range(len(cases)))})


def write_jsonl(path: Path, cases) -> Path:
    path.write_text("".join(json.dumps({"id": c.id, "text": c.text}, ensure_ascii=False) + "\n" for c in cases),
                    encoding="utf-8")
    return path


def counts(out: Path) -> list[tuple]:
    runs = json.loads((out / "summary.json").read_text())["runs"]
    return [(r["backend"], r["cases"], r["mismatches"], r["unexplained"], r["classes"]) for r in runs]


def read(spec: str, **options) -> list:
    return list(load_corpus(with_options(spec, ReadOptions(**options))))


def texts_and_ids(cases) -> list[tuple[str, str]]:
    return [(c.id, c.text) for c in cases]


# -- the same cases and verdicts as the JSONL they were made from -----------------------------

def test_parquet_file_gives_the_cases_and_verdicts_of_its_jsonl(tmp_path):
    pq.write_table(edge_table(), tmp_path / "edge.parquet", row_group_size=100)
    cases = read(str(tmp_path / "edge.parquet"), text_column="body", id_column="doc_id")
    assert cases == EDGE  # ids, texts and the corpus name (the file's stem)

    mine = tokparity("compare", "llama-spm", "-c", str(tmp_path / "edge.parquet"), "--text-column", "body",
                     "--id-column", "doc_id", "-b", "ref", "-q", "-o", str(tmp_path / "p"))
    theirs = tokparity("compare", "llama-spm", "-c", "edge", "-b", "ref", "-q", "-o", str(tmp_path / "j"))
    assert (mine.returncode, theirs.returncode) == (0, 0), mine.stderr + theirs.stderr
    assert counts(tmp_path / "p") == counts(tmp_path / "j")
    assert any(c[1] == len(EDGE) for c in counts(tmp_path / "p"))


def test_parquet_folder_default_ids_are_file_and_row(tmp_path):
    folder = tmp_path / "shards" / "lang=any"
    folder.mkdir(parents=True)
    pq.write_table(edge_table(EDGE[:500]).rename_columns(["text", "doc_id", "n"]), folder / "part-0.parquet")
    pq.write_table(edge_table(EDGE[500:]).rename_columns(["text", "doc_id", "n"]), folder / "part-1.parquet")
    cases = read(str(tmp_path / "shards"))
    assert [c.text for c in cases] == [c.text for c in EDGE]
    assert cases[0].id == "part-0.parquet:0" and cases[500].id == "part-1.parquet:0"
    assert {c.corpus for c in cases} == {"shards"}


def test_saved_dataset_with_the_datasets_library(tmp_path):
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_dict({"text": [c.text for c in EDGE], "id": [c.id for c in EDGE]}).save_to_disk(
        str(tmp_path / "ds"), max_shard_size="20KB")
    assert len(list((tmp_path / "ds").glob("*.arrow"))) > 1  # several shards, read in state.json's order
    assert texts_and_ids(read(str(tmp_path / "ds"), id_column="id")) == texts_and_ids(EDGE)


def test_arrow_stream_folder_written_as_datasets_writes_it(tmp_path):
    """Without the datasets library: an IPC stream per shard and a state.json listing them."""
    folder = tmp_path / "ds"
    folder.mkdir()
    names = []
    for k, part in enumerate((EDGE[:300], EDGE[300:])):
        names.append(f"data-{k:05d}-of-00002.arrow")
        table = pa.table({"text": [c.text for c in part], "id": [c.id for c in part]})
        with pa.ipc.new_stream(folder / names[-1], table.schema) as writer:
            for batch in table.to_batches(max_chunksize=100):
                writer.write_batch(batch)
    (folder / "state.json").write_text(json.dumps({"_data_files": [{"filename": n} for n in names]}))
    (folder / "dataset_info.json").write_text("{}")
    assert texts_and_ids(read(str(folder), id_column="id")) == texts_and_ids(EDGE)


# -- compressed files and globs ------------------------------------------------------------------

def test_gzip_and_zstd_jsonl_and_text(tmp_path):
    plain = write_jsonl(tmp_path / "edge.jsonl", EDGE).read_bytes()
    (tmp_path / "edge.jsonl.gz").write_bytes(gzip.compress(plain))
    # two frames: a file appended to is read across them
    half = len(plain) // 2 + plain[len(plain) // 2:].index(b"\n") + 1
    z = zstandard.ZstdCompressor()
    (tmp_path / "edge.jsonl.zst").write_bytes(z.compress(plain[:half]) + z.compress(plain[half:]))
    for name in ("edge.jsonl.gz", "edge.jsonl.zst"):
        assert read(str(tmp_path / name)) == EDGE, name
    lines = b"first line\nsecond line\n"
    (tmp_path / "few.txt.zst").write_bytes(z.compress(lines))
    (tmp_path / "few.txt.gz").write_bytes(gzip.compress(lines))
    assert [c.text for c in read(str(tmp_path / "few.txt.zst"))] == ["first line", "second line"]
    assert [c.text for c in read(str(tmp_path / "few.txt.gz"))] == ["first line", "second line"]


def test_glob_is_expanded_by_tokparity_and_an_empty_one_is_named(tmp_path):
    pq.write_table(edge_table(EDGE[:400]), tmp_path / "a.parquet")
    pq.write_table(edge_table(EDGE[400:]), tmp_path / "b.parquet")
    (tmp_path / "c.jsonl.gz").write_bytes(gzip.compress(b'{"id": "x", "text": "zzz"}\n'))
    cases = read(str(tmp_path / "*.parquet"), text_column="body")
    assert [c.text for c in cases] == [c.text for c in EDGE] and cases[0].corpus == "a"
    assert [c.text for c in read(str(tmp_path / "*"), text_column="body")][-1] == "zzz"

    result = tokparity("compare", "llama-spm", "-c", str(tmp_path / "nothing-*.parquet"), "-b", "ref", "-q",
                       "-o", str(tmp_path / "o"))
    assert result.returncode == 2
    assert "nothing-*.parquet: the pattern matches no file" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


# -- streaming: a big file is read a batch at a time ----------------------------------------

def test_parquet_is_read_lazily_row_group_by_row_group(tmp_path):
    """Row groups past the first ones are overwritten with garbage (the footer intact): the first
    cases still come, so reading them did not touch the rest; reading on names the file."""
    rows = 40_000
    table = pa.table({"text": [f"{EDGE[i % len(EDGE)].text} #{i}" for i in range(rows)]})
    path = tmp_path / "big.parquet"
    pq.write_table(table, path, row_group_size=2000, compression="none")
    meta = pq.ParquetFile(path).metadata

    def chunk_start(group: int) -> int:
        column = meta.row_group(group).column(0)
        return column.dictionary_page_offset or column.data_page_offset

    last = meta.row_group(meta.num_row_groups - 1).column(0)
    start, end = chunk_start(5), chunk_start(meta.num_row_groups - 1) + last.total_compressed_size
    with open(path, "r+b") as f:
        f.seek(start)
        f.write(b"\xff" * (end - start))
    first = list(itertools.islice(load_corpus(str(path)), 8000))
    assert [c.text for c in first] == [table["text"][i].as_py() for i in range(8000)]
    with pytest.raises(BadCorpus, match=r"big\.parquet: not a readable Parquet file at row (\d+) .*corrupt or truncated"
                       ) as refused:
        list(load_corpus(str(path)))
    assert 8000 <= int(re.search(r"at row (\d+)", str(refused.value))[1]) <= 10000  # a batch from the bad group


# The peak RSS of reading a corpus whole, in MB. A child process starts with its parent's RSS as
# its peak (this test's process holds the texts), so the peak is reset first (clear_refs 5).
PEAK_RSS = """
import sys
from tokparity.corpus import load_corpus

def mb(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) // 1024

with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
n = sum(len(c.text) for c in load_corpus(sys.argv[1]))
print(n, mb("VmHWM"))
"""


def test_memory_stays_flat_on_a_100_mb_parquet(tmp_path):
    """Peak RSS reading a ~90 MB Parquet file (unique texts, uncompressed, 20k-row groups) whole,
    against reading a 1 MB one. Measured: 82 MB for the small file (pyarrow's import and its
    allocator's warm-up), 126-129 MB for the big one, and the same 129 MB for a 180 MB file (flat);
    with pyarrow's pre_buffer on, which reads every column chunk ahead, it was 211 MB. A bound of
    80 MB over the small file fails a reader that holds the file."""
    if not os.access("/proc/self/clear_refs", os.W_OK):
        pytest.skip("no /proc/self/clear_refs to reset the peak RSS")
    texts = [f"{EDGE[i % len(EDGE)].text} {i:08d} " + os.urandom(30).hex() for i in range(1_000_000)]
    pq.write_table(pa.table({"text": texts}), tmp_path / "big.parquet", row_group_size=20_000, compression="none")
    pq.write_table(pa.table({"text": texts[:10_000]}), tmp_path / "small.parquet", compression="none")
    total = sum(map(len, texts))
    del texts
    assert (tmp_path / "big.parquet").stat().st_size > 85 << 20
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    peaks = {}
    for name in ("small", "big"):
        out = subprocess.run([sys.executable, "-c", PEAK_RSS, str(tmp_path / f"{name}.parquet")], env=env,
                             capture_output=True, text=True, timeout=60, check=True).stdout.split()
        peaks[name] = int(out[1])
    assert int(out[0]) == total  # every text was read
    assert peaks["big"] - peaks["small"] < 80, peaks


# -- --sample and --fraction ----------------------------------------------------------------

def test_sample_and_fraction_are_seeded_and_work_on_every_kind(tmp_path):
    pq.write_table(edge_table(), tmp_path / "edge.parquet", row_group_size=64)
    (tmp_path / "edge.jsonl.zst").write_bytes(
        zstandard.ZstdCompressor().compress(write_jsonl(tmp_path / "edge.jsonl", EDGE).read_bytes()))
    for spec, options in ((str(tmp_path / "edge.parquet"), {"text_column": "body", "id_column": "doc_id"}),
                          (str(tmp_path / "edge.jsonl.zst"), {}), ("edge", {})):
        a = read(spec, sample=50, seed=7, **options)
        assert len(a) == 50 and texts_and_ids(a) == texts_and_ids(read(spec, sample=50, seed=7, **options))
        assert texts_and_ids(a) != texts_and_ids(read(spec, sample=50, seed=8, **options))
        positions = [EDGE.index(c) for c in a]
        assert positions == sorted(positions)  # in corpus order
        f = read(spec, fraction=0.25, seed=3, **options)
        assert texts_and_ids(f) == texts_and_ids(read(spec, fraction=0.25, seed=3, **options))
        assert 0.15 * len(EDGE) < len(f) < 0.35 * len(EDGE)
    assert len(read("edge", sample=10_000)) == len(EDGE)  # fewer cases than asked: all of them


def test_sample_with_resume_runs_the_same_cases(tmp_path):
    pq.write_table(edge_table(), tmp_path / "edge.parquet", row_group_size=64)
    args = ["compare", "llama-spm", "-c", str(tmp_path / "edge.parquet"), "--text-column", "body",
            "--id-column", "doc_id", "--sample", "120", "--seed", "5", "-b", "ref", "-q"]
    assert tokparity(*args, "-o", str(tmp_path / "full")).returncode == 0
    lines = (tmp_path / "full" / "cases.jsonl").read_text().splitlines()
    header, records = json.loads(lines[0]), lines[1:]
    assert header["args"]["sample"] == 120 and len(records) == 120
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "cases.jsonl").write_text("\n".join(lines[:61]) + "\n")  # an interrupted run: 60 cases judged
    resumed = tokparity("compare", "--resume", str(cut))
    assert resumed.returncode == 0, resumed.stderr
    ids = [json.loads(line)["case_id"] for line in (cut / "cases.jsonl").read_text().splitlines()[1:]]
    assert ids == [json.loads(r)["case_id"] for r in records]
    assert counts(cut) == counts(tmp_path / "full")


def test_resume_refuses_a_parquet_corpus_that_changed(tmp_path):
    pq.write_table(edge_table(), tmp_path / "edge.parquet")
    out = tmp_path / "o"
    assert tokparity("compare", "llama-spm", "-c", str(tmp_path / "edge.parquet"), "--text-column", "body",
                     "-b", "ref", "-q", "-o", str(out)).returncode == 0
    stored = json.loads((out / "cases.jsonl").read_text().splitlines()[0])["corpora"]
    assert list(stored) == [str((tmp_path / "edge.parquet").resolve())]
    assert stored[str((tmp_path / "edge.parquet").resolve())].startswith(
        f"size={(tmp_path / 'edge.parquet').stat().st_size} mtime_ns=")
    pq.write_table(edge_table(EDGE[:-1]), tmp_path / "edge.parquet")
    result = tokparity("compare", "--resume", str(out))
    assert result.returncode == 2
    assert "edge.parquet changed since the run started" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


# -- bad input ------------------------------------------------------------------------------

def test_missing_column_names_the_file_and_its_columns(tmp_path):
    pq.write_table(edge_table(), tmp_path / "edge.parquet")
    result = tokparity("compare", "llama-spm", "-c", str(tmp_path / "edge.parquet"), "-b", "ref", "-q",
                       "-o", str(tmp_path / "o"))
    assert result.returncode == 2
    assert "edge.parquet: no column 'text'; it has: body, doc_id, n (name one with --text-column)" in result.stderr
    with pytest.raises(BadCorpus, match="no column 'key'; it has: body, doc_id, n .*--id-column"):
        read(str(tmp_path / "edge.parquet"), text_column="body", id_column="key")
    with pytest.raises(BadCorpus, match="column 'n' holds int64, not text"):
        read(str(tmp_path / "edge.parquet"), text_column="n")


def test_null_text_rows_are_skipped_with_a_note(tmp_path):
    pq.write_table(pa.table({"text": ["a", None, "b", None]}), tmp_path / "holes.parquet")
    result = subprocess.run([sys.executable, "-c", "import sys; from tokparity.corpus import load_corpus; "
                             "print([c.id for c in load_corpus(sys.argv[1])])", str(tmp_path / "holes.parquet")],
                            capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60)
    assert result.stdout.strip() == "['holes.parquet:0', 'holes.parquet:2']"
    assert "holes.parquet: 2 row(s) with no text (null in column 'text') skipped, the first at row 1" in result.stderr


@pytest.mark.parametrize("kind", ["parquet", "gz", "zst"])
def test_truncated_file_is_one_line_and_keeps_the_cases_before(tmp_path, kind):
    path = tmp_path / {"parquet": "edge.parquet", "gz": "edge.jsonl.gz", "zst": "edge.jsonl.zst"}[kind]
    plain = write_jsonl(tmp_path / "edge.jsonl", EDGE).read_bytes()
    if kind == "parquet":
        pq.write_table(edge_table().rename_columns(["text", "id", "n"]), path, row_group_size=100)
        data = path.read_bytes()
        path.write_bytes(data[:len(data) // 2])  # no footer any more: nothing can be read
    else:
        # (zstd: a frame per 100 lines, as a writer that flushes does; one frame would be one 128 KiB
        # block here, and a cut block gives no line at all)
        lines = plain.splitlines(keepends=True)
        data = gzip.compress(plain) if kind == "gz" else b"".join(
            zstandard.ZstdCompressor().compress(b"".join(lines[i:i + 100])) for i in range(0, len(lines), 100))
        path.write_bytes(data[:len(data) * 3 // 4])
    result = tokparity("compare", "llama-spm", "-c", str(path), "-b", "ref", "-q", "-o", str(tmp_path / "o"))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert path.name in result.stderr
    if kind == "parquet":
        assert "not a readable Parquet file" in result.stderr
    else:
        assert "the compressed data is truncated or corrupt" in result.stderr
        judged = (tmp_path / "o" / "cases.jsonl").read_text().splitlines()[1:]
        assert len(judged) > 100  # the cases read before the cut were judged and journaled


def test_a_missing_library_says_how_to_install_it(tmp_path):
    """pyarrow and zstandard made unimportable (a package of their name that raises ImportError
    first on the path): one line naming the extra."""
    blocked = tmp_path / "blocked"
    for name in ("pyarrow", "zstandard"):
        (blocked / name).mkdir(parents=True)
        (blocked / name / "__init__.py").write_text("raise ImportError('not installed')\n")
    pq.write_table(edge_table(), tmp_path / "edge.parquet")
    (tmp_path / "edge.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(b'{"text": "a"}\n'))
    env = dict(os.environ, PYTHONPATH=f"{blocked}{os.pathsep}{ROOT}")
    for corpus in ("edge.parquet", "edge.jsonl.zst"):
        result = subprocess.run([sys.executable, "-m", "tokparity", "compare", "llama-spm", "-c",
                                 str(tmp_path / corpus), "-b", "ref", "-q", "-o", str(tmp_path / "o")],
                                capture_output=True, text=True, env=env, timeout=60)
        assert result.returncode == 2, result.stderr
        assert "pip install 'tokparity[data]'" in result.stderr and corpus in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
