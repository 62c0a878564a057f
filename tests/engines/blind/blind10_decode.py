"""blind10 decode / stream / pieces engine on the real `tokenizers` library, one bug per `--bug`.

Without `--bug` it decodes with `tokenizers`, streams by decoding the growing window and sending what
grew (holding back a trailing U+FFFD), and gives every id's bytes from the vocabulary. Each bug below
is a behaviour of a real engine, written from its public report (and, where the report quotes or
links it, its code); each touches only its own op.

Decode:

`--bug quote-space` (Dylan-Harden3/llama3.2.c #2): llama2.c's `decode(prev_token, token)` kept in a
Llama 3 port: "following BOS (1) token, sentencepiece decoder strips any leading whitespace" —
`if (prev_token == 1 && piece[0] == ' ') { piece++; }` — but in the Llama 3 vocabulary id 1 is `"`, so
the space that begins any token after a `"` is dropped; each piece is the vocabulary's bytes as a C
string (cut at a NUL) and a piece that `sscanf`s as `<0x%02hhX>` becomes that byte. The report: "when
decoding tokens with the tokenizer at llama3.2.c, the space between two tokens disappears if the first
token ends with a quotation mark (`\"`) ... `I am \"cool\"and good.`"; the maintainer: "The decode
function wasn't updated to the llama 3 BOS token id so it was deleting the space in the first token
after" a `\"`. The port has no switch to leave special tokens out (not tried with `skip_special`).

`--bug specials-always-dropped` (mistralai/mistral-inference #162): the tokenizer's `decode(ids)` has
no `skip_special_tokens` argument and always leaves control tokens out of the text (SentencePiece's
decode drops them). The report: "when I decode the output from the results the special tokens are not
present and there is no argument while decode like in huggingface for `skip_speical_tokens=False`".
Here every decode is `tokenizers`' decode with `skip_special_tokens=True`, whatever is asked.

`--bug long-piece-dropped` (abetlen/llama-cpp-python #2362): `LlamaModel.detokenize()` hands
`llama_token_to_piece` a fixed 32-byte buffer; for a longer piece llama.cpp writes nothing and returns
`-(needed size)`, `assert n <= size` passes and `bytes(buffer[:n])` is empty, so every token whose piece
needs more than 32 bytes vanishes; a leading space is then taken off when the first id is the BOS.
The report (PR #2363): "So for a piece of 64 bytes, `n == -64`. `assert n <= size` still passes
(`-64 <= 32`), and `bytes(buffer[:n])` becomes `bytes(buffer[:-64])` on a 32-byte buffer — which is
`b''`. The token is dropped, silently." Pieces are llama.cpp's: control tokens as their text only with
`special` (= not `skip_special`), user-defined (non-special added) tokens always, the others as their
bytes; the bytes are then read as UTF-8 with replacement.

Stream:

`--bug prefix-stall` (leonickson1/Swiftlet #9, fixed in its commit "Fix silent stream truncation on
multi-byte characters"): each step decodes all generated ids (the prompt is not part of the window)
and, Swift-style, `if text.hasPrefix(printed) { delta = text.dropFirst(printed.count); if
!delta.isEmpty { yield delta; printed = text } }` — comparing and dropping by Characters (grapheme
clusters, canonical equivalence); nothing is flushed at the end. A character split across ids is
printed as U+FFFD, after which the text never again starts with what was printed. The report: "That
got emitted and stored as the \"already shown\" text. One token later the character completed, the
fresh decode no longer matched the stored prefix, and from that point every delta was dropped".

`--bug byte-length-gate` (smg-project/smg #710): smg's `Sequence::append_token` (TGI-style offsets,
a fresh `Sequence` per request, so the prompt is not decoded), with Rust byte lengths: it always moves
`read_offset` to the end, moves `prefix_offset` only when it returns text, emits only when
`new_text.len() > prefix_text.len()` (bytes) and `new_text` does not end with U+FFFD, slices at the
char boundary at or before `prefix_text.len()` and `.replace(\"�\", \"\")`s the slice; nothing is
flushed at the end. The report: \"This silently fails for byte-fallback tokenizers ... when `\\u{FFFD}`
resolves to a real character of the **same UTF-8 byte length**. ... the decoded text changes from
`\"prefix\\u{FFFD}\"` to `\"prefix中\"` but the byte length stays identical, so the length check returns
false and the character is **never emitted**.\"

`--bug per-token-ignore` (oobabooga/textgen #3106): llama-cpp-python's streaming completion sends each
id as `\"text\": self.detokenize([token]).decode(\"utf-8\", errors=\"ignore\")`, so every byte of a
character split across ids is thrown away. The report: \"We can see that if the token only contains
part of a character, things will go wrong. The \\\"ignore\\\" arg makes it hard to spot. The outcome is
that some chars such as Chinese will be missing\".

Pieces:

`--bug reduced-vocab` (vllm-project/vllm #31389): vLLM's `_reduced_vocabulary()` for outlines, before
its fix: for every `(token, id)` of `get_vocab()` but the special tokens, `token_str =
convert_tokens_to_string([token])` (plus a space for a `▁`-led token or `<0x20>`); an empty string is
left out; a string holding U+FFFD that does *not* match `^.{0,6}\\ufffd+.{0,6}$` is mapped back (a
`<0xXX>` token to its byte, a GPT-2 token through `unicode_to_bytes`), and every other string is
`token_str.encode(\"utf-8\")` — so a byte-fallback token such as `<0xE4>`, whose string is a lone
`\\ufffd`, becomes the three bytes of U+FFFD; the EOS id is left out. The report: \"these byte tokens
were not being handled correctly ... legitimate byte tokens that were being incorrectly classified as
merely invalid UTF-8 characters\".

`--bug base-vocab-only` (guidance-ai/guidance #434): guidance's byte table for a transformers
tokenizer without `byte_decoder` is `[bytes(tkz.convert_tokens_to_string(['a',
tkz.convert_ids_to_tokens(i)])[1:], encoding=\"utf8\") for i in range(tkz.vocab_size)]`, and
`vocab_size` leaves the added tokens out, so every added token has no bytes. The report: \"`tkz.vocab_size`
should be replaced by `len(tkz.get_vocab())` because in its definition, `tkz.vocab_size` exclude the
added tokens.\"
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import unicodedata

import regex
from tokenizers import Tokenizer

BUGS = ["quote-space", "specials-always-dropped", "long-piece-dropped",
        "prefix-stall", "byte-length-gate", "per-token-ignore",
        "reduced-vocab", "base-vocab-only"]
FFFD = "\ufffd"
META = "\u2581"
BYTE_TOKEN = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
SSCANF_BYTE = re.compile(rb"^<0x([0-9A-Fa-f]{1,2})")
RE_LLAMA_BYTE_TOKEN = regex.compile(r"^<0x[0-9A-F]{2}>$")
RE_REPLACEMENT_SEQ = regex.compile(r"^.{0,6}\ufffd+.{0,6}$")
GRAPHEME = regex.compile(r"\X")
EOS_NAMES = ("</s>", "<eos>", "<|endoftext|>", "<|end_of_text|>", "<｜end▁of▁sentence｜>")


def bytes_to_unicode() -> dict[int, str]:
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def _has_type(node, name) -> bool:
    if isinstance(node, dict):
        if node.get("type") == name:
            return True
        return any(_has_type(v, name) for v in node.values())
    if isinstance(node, list):
        return any(_has_type(v, name) for v in node)
    return False


def _is_char_boundary(b: bytes, i: int) -> bool:
    if i == 0 or i == len(b):
        return True
    if i > len(b):
        return False
    return (b[i] & 0xC0) != 0x80


def _clusters(s: str) -> list[str]:
    return GRAPHEME.findall(s)


def _swift_has_prefix(text: list[str], prefix: list[str]) -> bool:
    """Swift's String.hasPrefix: Character by Character, canonical equivalence."""
    if len(prefix) > len(text):
        return False
    return all(unicodedata.normalize("NFD", a) == unicodedata.normalize("NFD", b) for a, b in zip(text, prefix))


class Engine:
    def __init__(self, path: str, bug: str | None):
        self.bug = bug
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            j = json.load(f)
        self.byte_level = _has_type(j.get("decoder"), "ByteLevel")
        self.byte_dec = {c: b for b, c in bytes_to_unicode().items()}
        self.added = {a["id"]: a for a in j.get("added_tokens", [])}
        self.special = {i for i, a in self.added.items() if a.get("special")}
        self.size = self.tok.get_vocab_size(with_added_tokens=True)
        self.bos_id = self._find_bos(path)
        self.eos_id = self._find_eos(path)

    def _cfg_token(self, path, key):
        cfg = os.environ.get("TOKPARITY_TOKENIZER_CONFIG") or os.path.join(os.path.dirname(path), "tokenizer_config.json")
        try:
            with open(cfg, encoding="utf-8") as f:
                v = json.load(f).get(key)
        except (OSError, ValueError):
            return None
        if isinstance(v, dict):
            v = v.get("content")
        return self.tok.token_to_id(v) if isinstance(v, str) else None

    def _find_bos(self, path):
        i = self._cfg_token(path, "bos_token")
        if i is not None:
            return i
        for name in ("<s>", "<bos>", "<|begin_of_text|>", "<｜begin▁of▁sentence｜>"):
            if self.tok.token_to_id(name) is not None:
                return self.tok.token_to_id(name)
        return None

    def _find_eos(self, path):
        i = self._cfg_token(path, "eos_token")
        if i is not None:
            return i
        for name in EOS_NAMES:
            if self.tok.token_to_id(name) is not None:
                return self.tok.token_to_id(name)
        return None

    # ---- the vocabulary's bytes of one id
    def token_bytes(self, i: int):
        if i in self.added:
            a = self.added[i]
            if not self.byte_level and not a.get("special"):
                return a["content"].replace(META, " ").encode("utf-8")
            return a["content"].encode("utf-8")
        t = self.tok.id_to_token(i)
        if t is None:
            return None
        if self.byte_level:
            try:
                return bytes(self.byte_dec[c] for c in t)
            except KeyError:
                return t.encode("utf-8")
        m = BYTE_TOKEN.match(t)
        if m:
            return bytes([int(m.group(1), 16)])
        return t.replace(META, " ").encode("utf-8")

    def decode(self, ids, skip):
        return self.tok.decode(list(ids), skip_special_tokens=skip)

    # ---- llama.cpp's token_to_piece (llama-cpp-python's detokenize)
    def llama_piece(self, i: int, special: bool) -> bytes:
        if i in self.special and not special:
            return b""
        return self.token_bytes(i) or b""

    # ---- ops
    def op_decode(self, ids, skip):
        bug = self.bug
        if bug == "quote-space":
            out = b""
            prev = None
            for i in ids:
                piece = (self.token_bytes(i) or b"").split(b"\x00", 1)[0]  # a C string
                if prev == 1 and piece[:1] == b" ":
                    piece = piece[1:]
                m = SSCANF_BYTE.match(piece)
                if m:
                    piece = bytes([int(m.group(1), 16)]).split(b"\x00", 1)[0]
                out += piece
                prev = i
            return out.decode("utf-8", "replace")
        if bug == "specials-always-dropped":
            return self.decode(ids, True)
        if bug == "long-piece-dropped":
            out = b""
            for i in ids:
                piece = self.llama_piece(i, not skip)
                n = len(piece) if len(piece) <= 32 else -len(piece)
                out += piece[:n] if n >= 0 else b""  # bytes(buffer[:n]) of a 32-byte buffer
            if ids and ids[0] == self.bos_id and out[:1] == b" ":
                out = out[1:]
            return out.decode("utf-8", "replace")
        return self.decode(ids, skip)

    def op_stream(self, ids, prompt, skip, step):
        bug = self.bug
        pre = list(ids[:prompt])
        rest = list(ids[prompt:])
        steps = [rest[k:k + step] for k in range(0, len(rest), step)]
        if bug == "prefix-stall":
            generated = []
            printed: list[str] = []
            deltas = []
            for chunk in steps:
                generated.extend(chunk)
                text = _clusters(self.decode(generated, skip))
                delta = ""
                if _swift_has_prefix(text, printed):
                    d = "".join(text[len(printed):])
                    if d:
                        delta = d
                        printed = text
                deltas.append(delta)
            return deltas
        if bug == "byte-length-gate":
            seq = _SmgSequence(self, skip)
            return ["".join(seq.append_token(t) for t in chunk) for chunk in steps]
        if bug == "per-token-ignore":
            return ["".join(self.llama_piece(t, not skip).decode("utf-8", errors="ignore") for t in chunk)
                    for chunk in steps]
        deltas = []
        base = self.decode(pre, skip) if pre else ""
        base = base.rstrip(FFFD)  # a character the prompt leaves unfinished is not the prompt's
        sent = ""
        seen = list(pre)
        for n, chunk in enumerate(steps):
            seen.extend(chunk)
            whole = self.decode(seen, skip)
            new = whole[len(base):] if whole.startswith(base) else whole
            ready = new if n == len(steps) - 1 else new.rstrip(FFFD)
            if ready.startswith(sent) and len(ready) >= len(sent):
                deltas.append(ready[len(sent):])
                sent = ready
            else:
                deltas.append("")
        return deltas

    def op_pieces(self):
        if self.bug == "reduced-vocab":
            table = self.reduced_vocabulary()
            return [None if table.get(i) is None else table[i].hex() for i in range(self.size)]
        if self.bug == "base-vocab-only":
            base = self.tok.get_vocab_size(with_added_tokens=False)
            out = []
            for i in range(self.size):
                if i >= base:
                    out.append(None)
                    continue
                t = self.tok.id_to_token(i)
                s = self.convert_tokens_to_string(["a", t])[1:]
                out.append(s.encode("utf-8").hex())
            return out
        out = []
        for i in range(self.size):
            b = self.token_bytes(i)
            out.append(None if b is None else b.hex())
        return out

    # ---- transformers' convert_tokens_to_string on a fast tokenizer
    def convert_tokens_to_string(self, tokens):
        dec = self.tok.decoder
        return dec.decode(tokens) if dec is not None else " ".join(tokens)

    def reduced_vocabulary(self) -> dict[int, bytes]:
        unicode_to_bytes = {v: k for k, v in bytes_to_unicode().items()}
        specials = {self.added[i]["content"] for i in self.special}

        def convert_token_to_string(token: str) -> str:
            string = self.convert_tokens_to_string([token])
            if token.startswith(META) or token == "<0x20>":
                return " " + string
            return string

        table: dict[int, bytes] = {}
        for token, token_idx in self.tok.get_vocab(with_added_tokens=True).items():
            if token in specials:
                continue
            token_str = convert_token_to_string(token)
            if not token_str:
                continue
            if FFFD in token_str and not RE_REPLACEMENT_SEQ.match(token_str):
                if RE_LLAMA_BYTE_TOKEN.match(token):
                    token_bytes = bytes([int(token[3:5], 16)])
                else:
                    byte_vals = [unicode_to_bytes.get(c) for c in token]
                    if None in byte_vals:
                        raise RuntimeError(f"Cannot convert token `{token}` ({token_idx}) to bytes: {token_str}")
                    token_bytes = bytes(byte_vals)
            else:
                token_bytes = token_str.encode("utf-8")
            if token_idx != self.eos_id:
                table[token_idx] = token_bytes
        return table

    def handle(self, req):
        op = req.get("op")
        skip = bool(req.get("skip_special"))
        if op == "decode":
            if req.get("clean_up_spaces") or req.get("spaces_between_specials") or req.get("remove_special"):
                return {"error": "setting not supported"}
            if self.bug == "quote-space" and skip:
                return {"error": "no switch to leave special tokens out"}
            return {"text": self.op_decode(req["ids"], skip)}
        if op == "stream":
            step = int(req.get("step") or 1)
            return {"deltas": self.op_stream(req["ids"], int(req.get("prompt") or 0), skip, step)}
        if op == "pieces":
            return {"pieces": self.op_pieces()}
        if op == "encode":
            self.tok.encode_special_tokens = not req.get("parse_special")
            return {"ids": self.tok.encode(req["text"], add_special_tokens=bool(req.get("add_special"))).ids}
        return {"error": f"unsupported op {op}"}


class _SmgSequence:
    """smg's Sequence::append_token, with Rust's byte lengths and char boundaries."""

    def __init__(self, eng: Engine, skip: bool):
        self.eng = eng
        self.skip = skip
        self.token_ids: list[int] = []
        self.prefix_offset = 0
        self.read_offset = 0

    def append_token(self, token_id: int) -> str:
        old_read_offset = self.read_offset
        self.token_ids.append(token_id)
        self.read_offset = len(self.token_ids)
        if self.prefix_offset == 0 and old_read_offset == 0:
            text = self.eng.decode(self.token_ids, self.skip)
            if text.endswith(FFFD):
                return ""
            self.prefix_offset = 0
            return text
        prefix_text = self.eng.decode(self.token_ids[self.prefix_offset:old_read_offset], self.skip).encode("utf-8")
        new_text = self.eng.decode(self.token_ids[self.prefix_offset:], self.skip).encode("utf-8")
        prefix_text_len = len(prefix_text)
        while not _is_char_boundary(new_text, prefix_text_len) and prefix_text_len > 0:
            prefix_text_len -= 1
        if len(new_text) > len(prefix_text):
            if new_text.decode("utf-8").endswith(FFFD):
                return ""
            incremental = new_text[prefix_text_len:].decode("utf-8").replace(FFFD, "")
            self.prefix_offset = old_read_offset
            return incremental
        return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tokenizer_json")
    ap.add_argument("--bug", choices=BUGS)
    args = ap.parse_args()
    eng = Engine(args.tokenizer_json, args.bug)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            rep = eng.handle(req)
        except Exception as e:
            rep = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        rep["id"] = req.get("id")
        sys.stdout.write(json.dumps(rep) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
