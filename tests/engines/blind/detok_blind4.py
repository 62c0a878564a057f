"""An engine on Hugging Face `tokenizers` that encodes, decodes, streams and lists its pieces, with
one bug on request. Written on 2026-11-28 from docs/contracts.md, docs/guides/streaming.md and one
paragraph per bug; its author read no diagnosis code.

It speaks tokparity's `cmd:` protocol (docs/contracts.md): one JSON request per line on stdin,
one reply per line on stdout, in order; ops `encode`, `decode`, `stream`, `pieces`.

    python detok_blind4.py TOKENIZER_JSON [--bug NAME] [--lag N]

Without `--bug` every op is right (the bug-free twin): `encode` and `decode` are the library's
own, `pieces` is each id's bytes (special tokens as their text), and `stream` re-decodes the ids
so far, sends what the text grew by, holds back a character whose bytes are not all there yet,
does not send the prompt's text, and sends a character the prompt began once the ids complete it.

One `--bug` at a time:

- `lag` (stream): the right stream, sent N steps late (`--lag N`, default 3). At each step it
  sends what the right stream would have sent N steps earlier; at the last id it sends all that
  is still held in the last delta. So a stream of N + 1 ids or fewer (after the prompt) arrives
  whole in its last delta. The deltas add up to the right text. A writer has this bug when a
  streamer keeps a delay of a few tokens so that the detokenization settles before it sends (a
  GenAI `TextStreamer` that keeps three tokens back): the text is right, only late.
- `byte-shaped` (decode, and stream, which decodes through it): a token is taken for a
  byte-fallback token by its shape. Any token whose text is exactly six characters, starts with
  `<` and ends with `>` is read as `<0xHH>`: characters 3-4 (from 0) are parsed as hex. A real
  byte token (`<0x41>`) comes out right. Another token of that shape (Gemma 3's `<mask>`,
  `<html>`, `<body>`, `<span>`, `<bbox>`, `</sub>`, `</sup>`, `</img>`, `</div>`) fails the parse
  and becomes the invalid byte 0xFF, which decodes as U+FFFD: `The capital is <mask>.` decodes
  as `The capital is \ufffd.`. `<code>` parses (`de`: 0xDE), a lone lead byte, U+FFFD as well.
  The fake byte joins the run of byte tokens around it, and the decoder's ByteFallback writes
  one U+FFFD per byte of a run that is not UTF-8, so a real character spelled in byte tokens
  right beside it is lost too (`\U000F0000<mask>` gives five U+FFFD). `<unk>` and `<pad>` have
  five characters and are right; Llama 2's and Mistral's vocabularies have no other token of
  that shape, so nothing changes there. A writer has this bug when they test
  `len(t) == 6 and t[0] == "<" and t[-1] == ">"` instead of the token's type (SentencePiece's
  BYTE), which is right on the vocabulary they tried. `pieces` is left right (its table is
  built another way).
- `byte-token-text` (encode): on a byte-fallback vocabulary (tokens `<0x00>`..`<0xFF>`), the
  input text is scanned for the literal six-character spelling of a byte token, `<0xHH>` as the
  vocabulary spells it (upper-case hex), and each match becomes that byte token's id, as if the
  user had typed the byte, even with `parse_special` off: `<0x0A>` gives the newline's byte
  token, not `<`, `0`, `x`, ... The text between the matches is encoded normally, piece by piece
  (each piece alone, so a normalizer that prepends `▁` does so to every piece, as for added
  tokens). `<0x0a>` (lower case) and `<0x100>` are not matched. A writer has this bug when the
  engine matches every vocabulary entry that is not of normal type in the text, as it does with
  added tokens, and byte tokens are of BYTE type. On a vocabulary with no byte tokens it changes
  nothing.
- `metaspace-first` (encode): for a `tokenizer.json` whose normalizer is Llama 2's (a `Sequence`
  of `Prepend` `▁` and `Replace` `" "` -> `▁`), the normalizer is removed and a `Metaspace`
  pre-tokenizer (replacement `▁`, `prepend_scheme` `"first"`, `split` false) put in its place,
  as a converter written for transformers' `legacy=False` does. What differs: Metaspace does not
  prepend `▁` to a text that already starts with `▁` once the spaces are replaced, so a text
  that starts with a space (or with a literal `▁`) gets no extra `▁` (`" Hello"` is `▁Hello`,
  not `▁▁Hello`; `"▁hello"` loses its lone `▁` token); and with `"first"` only the first piece
  of the text gets the `▁`, not a piece after an added token (`a<s>b` with `parse_special`:
  `b`, not `▁b`). Any other normalizer (Gemma 3's Replace alone) is refused at start (exit 1,
  with a message). The decoder is not touched.
- `fixed-out-buffer` (decode; added 2026-12-01, also written blind): a port of a C detokenizer
  whose output buffer is allocated once per call with room for 4 bytes per id plus 64
  (`4 * len(ids) + 64`, every id of the request counted, skipped special tokens too). The text
  is the library's own; when its UTF-8 is longer than that room, the request is answered with an
  error (`"status": "error"`: a crash of the case) instead of a text. A text that fits is
  returned unchanged, so only ids whose text averages more than 4 bytes per id (long tokens,
  runs of spaces or code indentation, special tokens written as their text, few ids) fail.
  `stream` and `pieces` are left right.
- `fixed-out-buffer-1k` (decode): the same with a fixed room of 1024 bytes whatever the number
  of ids: any text of more than 1024 UTF-8 bytes is an error; shorter texts are right.

An exception on one request is that request's `error` (with `"status": "error"`), never a crash.
"""

import codecs
import json
import re
import sys

from tokenizers import Tokenizer

REPL = "\ufffd"
BUGS = ("lag", "byte-shaped", "byte-token-text", "metaspace-first", "fixed-out-buffer",
        "fixed-out-buffer-1k")
BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")
BYTE_SPELLING = re.compile(r"<0x[0-9A-F]{2}>")


def bytes_to_unicode():
    """GPT-2's byte -> printable character table (the ByteLevel pre-tokenizer's)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


BYTE_OF_CHAR = {c: b for b, c in bytes_to_unicode().items()}


def flatten_decoders(d):
    if not d:
        return []
    if d.get("type") == "Sequence":
        out = []
        for sub in d.get("decoders", []):
            out.extend(flatten_decoders(sub))
        return out
    return [d]


def utf8_pending(data):
    """The bytes at the end of `data` that begin a character not finished yet."""
    dec = codecs.getincrementaldecoder("utf-8")("replace")
    dec.decode(data, final=False)
    return dec.getstate()[0]


def is_llama2_normalizer(n):
    """A Sequence of Prepend '▁' and Replace ' ' -> '▁' (in either order)."""
    if not n or n.get("type") != "Sequence":
        return False
    subs = n.get("normalizers", [])
    kinds = set()
    for s in subs:
        if s.get("type") == "Prepend" and s.get("prepend") == "\u2581":
            kinds.add("prepend")
        elif (s.get("type") == "Replace" and s.get("pattern") == {"String": " "}
              and s.get("content") == "\u2581"):
            kinds.add("replace")
        else:
            return False
    return kinds == {"prepend", "replace"} and len(subs) == 2


def metaspace_first_json(spec):
    """The converter's rewrite: no normalizer, a Metaspace pre-tokenizer with prepend 'first'."""
    if not is_llama2_normalizer(spec.get("normalizer")):
        raise SystemExit("metaspace-first needs Llama 2's normalizer (Prepend '\u2581', Replace ' ')")
    if spec.get("pre_tokenizer") is not None:
        raise SystemExit("metaspace-first: the file already has a pre-tokenizer")
    spec = dict(spec)
    spec["normalizer"] = None
    spec["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581",
                             "prepend_scheme": "first", "split": False}
    return spec


class Engine:
    def __init__(self, path, bug=None, lag=3):
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        self.tok = Tokenizer.from_file(path)
        self.enc_tok = self.tok
        if bug == "metaspace-first":
            self.enc_tok = Tokenizer.from_str(json.dumps(metaspace_first_json(spec)))
        self.decoders = flatten_decoders(spec.get("decoder"))
        self.types = {d.get("type") for d in self.decoders}
        self.added = {i: (t.content, t.special) for i, t in self.tok.get_added_tokens_decoder().items()}
        self.bug = bug
        self.lag = lag
        self._bytes = {}
        # byte-token-text: the model's byte tokens, as the vocabulary spells them
        self.byte_ids = {t: i for t, i in self.tok.get_vocab(with_added_tokens=False).items()
                         if BYTE_SPELLING.fullmatch(t)}
        self._frame = None

    # ---- encode
    def encode(self, text, add_special, parse_special):
        tok = self.enc_tok
        tok.encode_special_tokens = not parse_special
        if self.bug == "byte-token-text" and self.byte_ids:
            return self.encode_byte_text(text, add_special)
        return tok.encode(text, add_special_tokens=add_special).ids

    def special_frame(self):
        """What add_special puts before and after a text's ids (the post-processor's)."""
        if self._frame is None:
            probe = "a"
            plain = self.tok.encode(probe, add_special_tokens=False).ids
            full = self.tok.encode(probe, add_special_tokens=True).ids
            for k in range(len(full) - len(plain) + 1):
                if full[k:k + len(plain)] == plain:
                    self._frame = (full[:k], full[k + len(plain):])
                    break
            else:
                raise RuntimeError("cannot find the text's ids inside the post-processed ids")
        return self._frame

    def encode_byte_text(self, text, add_special):
        ids, pos = [], 0
        for m in BYTE_SPELLING.finditer(text):
            if m.group(0) not in self.byte_ids:
                continue
            if m.start() > pos:
                ids += self.tok.encode(text[pos:m.start()], add_special_tokens=False).ids
            ids.append(self.byte_ids[m.group(0)])  # the bug: the spelling taken for the byte
            pos = m.end()
        if pos < len(text) or not ids:
            ids += self.tok.encode(text[pos:], add_special_tokens=False).ids
        if add_special:
            before, after = self.special_frame()
            ids = before + ids + after
        return ids

    # ---- decode
    def decode(self, ids, skip):
        if self.bug == "byte-shaped":
            return self.decode_byte_shaped(ids, skip)
        return self.tok.decode(list(ids), skip_special_tokens=skip)

    def decode_request(self, ids, skip):
        """The decode op: the fixed-out-buffer bugs refuse a text longer than their buffer."""
        text = self.decode(ids, skip)
        if self.bug in ("fixed-out-buffer", "fixed-out-buffer-1k"):
            room = 4 * len(ids) + 64 if self.bug == "fixed-out-buffer" else 1024
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > room:  # the bug: the C port's output buffer is full
                raise BufferError(f"output buffer too small: {size} bytes, room for {room}")
        return text

    def decode_byte_shaped(self, ids, skip):
        tokens = []
        for i in ids:
            if i in self.added:
                content, special = self.added[i]
                if skip and special:
                    continue
                t = content
            else:
                t = self.tok.id_to_token(i)
                if t is None:
                    continue
            if len(t) == 6 and t[0] == "<" and t[-1] == ">":  # the bug: judged by its shape
                try:
                    b = int(t[3:5], 16)
                except ValueError:
                    b = 0xFF  # the parse failed: the invalid byte
                t = f"<0x{b:02X}>"
            tokens.append(t)
        if self.tok.decoder is None:
            return " ".join(tokens)
        return self.tok.decoder.decode(tokens)

    # ---- bytes of one id
    def token_bytes(self, i):
        """The bytes id `i` stands for alone (special tokens as their text); None: no token."""
        if i in self._bytes:
            return self._bytes[i]
        if i in self.added:
            s = self.added[i][0]
            if "ByteLevel" not in self.types:  # the decoder's Replace steps apply to them too
                s = self.replace_steps(s)
            b = s.encode("utf-8")
        else:
            t = self.tok.id_to_token(i)
            if t is None:
                b = None
            elif "ByteLevel" in self.types:
                try:
                    b = bytes(BYTE_OF_CHAR[c] for c in t)
                except KeyError:
                    b = t.encode("utf-8")
            else:
                m = BYTE_TOKEN.fullmatch(t)
                if m and "ByteFallback" in self.types:
                    b = bytes([int(m.group(1), 16)])
                else:
                    s = self.replace_steps(t)
                    if not self.decoders:
                        s = self.tok.decode([i])
                    b = s.encode("utf-8")
        self._bytes[i] = b
        return b

    def replace_steps(self, s):
        """A token's text through the decoder's per-token string steps."""
        for d in self.decoders:
            typ = d.get("type")
            if typ == "Replace":
                pat = d.get("pattern", {})
                if "String" in pat:
                    s = s.replace(pat["String"], d.get("content", ""))
            elif typ == "Metaspace":
                s = s.replace(d.get("replacement", "\u2581"), " ")
            elif typ == "WordPiece":
                pre = d.get("prefix", "##")
                s = s[len(pre):] if s.startswith(pre) else " " + s
        return s

    def stream_bytes(self, i, skip):
        """What id `i` adds to the byte stream of a decode."""
        if i in self.added and skip and self.added[i][1]:
            return b""
        return self.token_bytes(i) or b""

    def pieces(self):
        n = self.tok.get_vocab_size(with_added_tokens=True)
        if self.added:
            n = max(n, max(self.added) + 1)
        return [None if (b := self.token_bytes(i)) is None else b.hex() for i in range(n)]

    # ---- streaming
    def prompt_state(self, ids, prompt, skip):
        """The prompt's finished text and the bytes of a character it began."""
        data = b"".join(self.stream_bytes(i, skip) for i in ids[:prompt])
        pending = utf8_pending(data)
        text = self.decode(ids[:prompt], skip) if prompt else ""
        if pending and text.endswith(REPL):
            text = text[:-1]
        return text, pending

    def stream(self, ids, prompt, skip):
        ids = list(ids)
        if not 0 <= prompt <= len(ids):
            raise ValueError(f"prompt {prompt} outside 0..{len(ids)}")
        deltas = self.stream_correct(ids, prompt, skip)
        if self.bug == "lag":
            deltas = self.delay(deltas)
        assert len(deltas) == len(ids) - prompt
        return deltas

    def delay(self, right):
        """The right deltas sent `self.lag` steps late, the rest all in the last delta."""
        n, m = self.lag, len(right)
        if m == 0:
            return []
        out = [right[k - n] if k >= n else "" for k in range(m)]
        out[-1] = (right[m - 1 - n] if m - 1 >= n else "") + "".join(right[max(0, m - n):])
        return out

    def stream_correct(self, ids, prompt, skip):
        sent, _ = self.prompt_state(ids, prompt, skip)
        dec = codecs.getincrementaldecoder("utf-8")("replace")
        for i in ids[:prompt]:
            dec.decode(self.stream_bytes(i, skip), final=False)
        deltas = []
        for k in range(prompt + 1, len(ids) + 1):
            dec.decode(self.stream_bytes(ids[k - 1], skip), final=False)
            last = k == len(ids)
            if not last and dec.getstate()[0]:
                deltas.append("")  # an unfinished character: hold it back
                continue
            text = self.decode(ids[:k], skip)
            if text.startswith(sent):
                deltas.append(text[len(sent):])
                sent = text
            elif last:
                n = 0
                while n < min(len(text), len(sent)) and text[n] == sent[n]:
                    n += 1
                deltas.append(text[n:])
                sent = text
            else:
                deltas.append("")  # the decoder took something back: wait for it to settle
        return deltas


def answer(engine, req):
    op = req.get("op")
    if op == "encode":
        return {"ids": engine.encode(req["text"], bool(req.get("add_special", False)),
                                     bool(req.get("parse_special", False)))}
    if op == "decode":
        for key in ("clean_up_spaces", "spaces_between_specials", "remove_special"):
            if req.get(key):
                return {"error": f"{key} is not supported"}
        return {"text": engine.decode_request(req["ids"], bool(req.get("skip_special", False)))}
    if op == "stream":
        if req.get("step", 1) != 1:
            return {"error": "only one id per step"}
        return {"deltas": engine.stream(req["ids"], int(req.get("prompt", 0)),
                                        bool(req.get("skip_special", False)))}
    if op == "pieces":
        return {"pieces": engine.pieces()}
    return {"error": f"unknown op {op!r}"}


def main(argv):
    args = list(argv[1:])
    bug, lag = None, 3
    if "--bug" in args:
        j = args.index("--bug")
        bug = args[j + 1] if j + 1 < len(args) else None
        del args[j:j + 2]
        if bug not in BUGS:
            sys.exit(f"unknown --bug {bug!r}; one of {', '.join(BUGS)}")
    if "--lag" in args:
        j = args.index("--lag")
        try:
            lag = int(args[j + 1])
        except (IndexError, ValueError):
            sys.exit("--lag takes a whole number")
        if lag < 0:
            sys.exit("--lag takes a whole number")
        del args[j:j + 2]
    if len(args) != 1:
        sys.exit("usage: detok_blind4.py TOKENIZER_JSON [--bug NAME] [--lag N]")
    engine = Engine(args[0], bug, lag)
    for line in sys.stdin:
        if not line.strip():
            continue
        rid = None
        try:
            req = json.loads(line)
            rid = req.get("id")
            reply = answer(engine, req)
        except Exception as e:  # one request's failure, never the engine's
            reply = {"error": f"{type(e).__name__}: {e}", "status": "error"}
        reply = {"id": rid, **reply}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
