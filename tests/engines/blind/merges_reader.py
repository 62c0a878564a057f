"""DOCSTRING_PLACEHOLDER"""

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
    tok.model = models.BPE(
        vocab=dict(model.get("vocab") or {}),
        merges=merges,
        dropout=model.get("dropout"),
        unk_token=model.get("unk_token"),
        continuing_subword_prefix=model.get("continuing_subword_prefix"),
        end_of_word_suffix=model.get("end_of_word_suffix"),
        fuse_unk=bool(model.get("fuse_unk", False)),
        byte_fallback=bool(model.get("byte_fallback", False)),
        ignore_merges=bool(model.get("ignore_merges", False)),
    )
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
