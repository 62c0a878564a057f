"""A deterministic web-text-like corpus of any size, as Parquet, for the scale benchmark.

    python benchmarks/scale_corpus.py --size-mb 50 [--seed 0] [-o DIR]

Documents of 0.5 to 8 KB (log-uniform, as web pages' text is spread over orders of magnitude),
made of paragraphs of sentences drawn from tokparity's built-in corpora (``load_corpus("all")``:
multilingual, emoji, edge, llama.cpp-tests) and from its seeded generators (multilingual words
with emoji, random characters, numbers, contractions). Every choice comes from one
``random.Random`` seeded with a string, so a seed and a size give the same file, byte for byte
in its rows, on any machine with the same corpora.

The file has the columns ``id`` (``doc-000000001``) and ``text``, in row groups of about 16 MB of
text, written a row group at a time: the whole corpus is never in memory. ``compare -c FILE
--text-column text --id-column id`` reads it.

``cached_corpus(work_dir, seed, size_mb)`` writes ``scale-s<seed>-<size>mb-<key>.parquet`` once
(through a temporary file, renamed when complete) with a ``.json`` beside it saying how it was
made and how long that took; later calls return the same file. The key digests this module's
recipe version and the source texts, so a change to either makes a new file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import sys
import time
from itertools import islice
from pathlib import Path

RECIPE = 1  # bump when the way documents are made changes: cached files are then made again
DOC_BYTES = (512, 8192)
ROW_GROUP_BYTES = 16 << 20
# Lines drawn once from each generator; documents then sample these pools (drawing every sentence
# from a generator would make a GB take many minutes of Python for no more realism).
POOL_SIZE = 20_000
GENERATORS = ("multilingual-words", "random-chars", "numbers", "apostrophes")
# Where a sentence comes from: mostly the multilingual corpus's sentences (prose in many scripts),
# the rest the odd texts real pages hold too (emoji, markup-like edge cases, numbers).
WEIGHTS = {"multilingual": 50, "gen:multilingual-words": 15, "emoji": 10, "edge": 4, "llama.cpp-tests": 3,
           "gen:numbers": 8, "gen:apostrophes": 5, "gen:random-chars": 5}


def source_pools(seed: int) -> dict[str, list[str]]:
    """The texts each source offers: the built-in corpora's cases, and ``POOL_SIZE`` lines of each generator."""
    from tokparity.corpus import load_corpus
    from tokparity.fuzz.generators import generate

    pools: dict[str, list[str]] = {}
    for case in load_corpus("all"):
        if case.text.strip():
            pools.setdefault(case.corpus, []).append(case.text)
    for name in GENERATORS:
        pools[f"gen:{name}"] = [c.text for c in islice(generate(name, seed=seed), POOL_SIZE)]
    return {name: pools[name] for name in WEIGHTS if pools.get(name)}


def pools_digest(pools: dict[str, list[str]]) -> str:
    h = hashlib.sha256(f"recipe {RECIPE}".encode())
    for name in sorted(pools):
        h.update(name.encode() + b"\0")
        for text in pools[name]:
            h.update(text.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()[:12]


class DocumentMaker:
    """Documents, one after another, from the pools and one seeded ``random.Random``."""

    def __init__(self, pools: dict[str, list[str]], seed: int):
        self.rng = random.Random(f"tokparity-scale-corpus {seed}")
        self.pools = [pools[name] for name in pools]
        self.weights = [WEIGHTS[name] for name in pools]

    def target_bytes(self) -> int:
        lo, hi = DOC_BYTES
        return int(math.exp(self.rng.uniform(math.log(lo), math.log(hi))))

    def sentences(self, n: int) -> list[str]:
        rng = self.rng
        chosen = rng.choices(self.pools, self.weights, k=n)
        return [rng.choice(pool) for pool in chosen]

    def document(self) -> str:
        """Paragraphs of 2–8 sentences until the target length (in UTF-8 bytes) is reached."""
        rng, target, size, paragraphs = self.rng, self.target_bytes(), 0, []
        while size < target:
            paragraph = " ".join(self.sentences(rng.randint(2, 8)))
            paragraphs.append(paragraph)
            size += len(paragraph.encode("utf-8", "surrogatepass")) + 2
        return "\n\n".join(paragraphs)


def write_corpus(path: Path, seed: int, size_bytes: int) -> dict:
    """Write documents until ``size_bytes`` of text; what was written (documents, bytes, seconds)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    started = time.perf_counter()
    pools = source_pools(seed)
    maker = DocumentMaker(pools, seed)
    schema = pa.schema([("id", pa.string()), ("text", pa.string())])
    docs = total = 0
    partial = path.with_name(path.name + ".partial")
    with pq.ParquetWriter(partial, schema, compression="zstd") as writer:
        while total < size_bytes:
            ids, texts, group = [], [], 0
            while group < ROW_GROUP_BYTES and total + group < size_bytes:
                text = maker.document()
                ids.append(f"doc-{docs + len(ids):09d}")
                texts.append(text)
                group += len(text.encode("utf-8", "surrogatepass"))
            writer.write_table(pa.table({"id": ids, "text": texts}, schema=schema), row_group_size=len(ids))
            docs, total = docs + len(ids), total + group
    os.replace(partial, path)
    return {"seed": seed, "recipe": RECIPE, "documents": docs, "text_bytes": total, "file_bytes": path.stat().st_size,
            "seconds": round(time.perf_counter() - started, 1), "sources": {k: len(v) for k, v in pools.items()}}


def cached_corpus(work_dir: Path, seed: int, size_mb: int) -> tuple[Path, dict]:
    """The corpus for (seed, size), written on first use; its path and what its ``.json`` says."""
    work_dir.mkdir(parents=True, exist_ok=True)
    key = pools_digest(source_pools(seed))
    path = work_dir / f"scale-s{seed}-{size_mb}mb-{key}.parquet"
    meta = path.with_suffix(".json")
    if path.is_file() and meta.is_file():
        info = json.loads(meta.read_text("utf-8"))
        info["cached"] = True
        return path, info
    print(f"writing a {size_mb} MB corpus to {path} (seed {seed}) ...", flush=True)
    info = write_corpus(path, seed, size_mb << 20)
    meta.write_text(json.dumps(info, indent=2) + "\n", "utf-8")
    print(f"  {info['documents']:,} documents, {info['text_bytes'] / 2**20:,.0f} MiB of text "
          f"({info['file_bytes'] / 2**20:,.0f} MiB on disk) in {info['seconds']:.0f} s", flush=True)
    return path, {**info, "cached": False}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--out", type=Path, default=Path(".bench-work"))
    args = parser.parse_args()
    path, info = cached_corpus(args.out, args.seed, args.size_mb)
    print(path)
    print(json.dumps(info, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
