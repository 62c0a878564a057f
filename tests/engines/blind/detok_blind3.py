"""A streaming detokenizer engine on Hugging Face `tokenizers`, with bugs on request.

It speaks tokparity's `cmd:` protocol (docs/contracts.md): one JSON request per line on stdin,
one reply per line on stdout, in order; ops `encode`, `decode`, `stream`, `pieces`.

    python detok_blind3.py TOKENIZER_JSON [--bug NAME]

Without `--bug` every op is correct: `encode` and `decode` are the library's own, `pieces` is
each id's bytes (special tokens as their text), and `stream` re-decodes the ids so far, sends what
the text grew by, holds back a character whose bytes are not all there yet (judged on the bytes,
so a lone invalid byte is not held), does not send the prompt's text, and sends a character the
prompt began once the ids complete it.

Each `--bug` changes the `stream` op only:

- `cumulative-slice`: decodes the growing list of generated ids alone (the prompt left out) and
  sends `text[len(previous_text):]`. A batching server that keeps only the generated ids per
  request and slices by length writes this; a byte token's U+FFFD is sent as soon as it appears,
  never taken back, and a character the prompt began is lost.
- `cluster-prefix`: decodes all ids so far and sends the new text past its common prefix with
  the previous text, the prefix counted in grapheme clusters (Swift `Character`s), holding back a
  text that ends in U+FFFD. A Swift port (mlx-swift's `NaiveStreamingDetokenizer`) counts
  `String` in `Character`s, so a combining mark, variation selector or ZWJ joining the previous
  character makes that whole cluster be sent again (its base character twice); and an unfinished
  character at the very end is never sent.
- `cleanup-drop`: re-decodes all ids with transformers' `clean_up_tokenization_spaces`, and when
  the new text no longer begins with what was sent (a space sent before `.` or `n't` is taken
  out), sends nothing and takes the new text as sent. A server that decodes with the model's
  default clean-up and guards against non-monotonic text this way silently loses the punctuation
  (or the contraction) that arrived with the clean-up.
- `flush-replace-at-space`: one byte buffer per request; a token whose text begins with a space
  flushes what the buffer holds with `errors="replace"` first, even inside a character; otherwise
  the buffer is flushed only once it decodes strictly; the rest is flushed with replace at the end.
  mlx-vlm's BPE streaming detokenizer flushes at word starts, as SentencePiece-minded code
  assumes a word never starts inside a character; bytes before a space are cut off as U+FFFD and
  text after a lone invalid byte waits for the next space. On a byte-level vocabulary the text
  comes out right all the same (a space ends any UTF-8 decoder's unfinished character); it shows
  where the decoder writes U+FFFD per byte (ByteFallback: `<0xE7><0xA7>▁a` gives two, it one).

An exception on one request is that request's `error` (with `"status": "error"`), never a crash.
"""

import codecs
import json
import re
import sys

from tokenizers import Tokenizer

try:
    import regex as _regex
except ImportError:  # only cluster-prefix needs it
    _regex = None

REPL = "\ufffd"
BUGS = ("cumulative-slice", "cluster-prefix", "cleanup-drop", "flush-replace-at-space")
BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>")


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


def cleanup_spaces(text):
    """transformers' clean_up_tokenization, in its order."""
    for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                 (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        text = text.replace(a, b)
    return text


def utf8_pending(data):
    """The bytes at the end of `data` that begin a character not finished yet."""
    dec = codecs.getincrementaldecoder("utf-8")("replace")
    dec.decode(data, final=False)
    return dec.getstate()[0]


def clusters(text):
    if _regex is None:
        raise RuntimeError("the regex package is needed for grapheme clusters")
    return _regex.findall(r"\X", text)


class Engine:
    def __init__(self, path, bug=None):
        self.tok = Tokenizer.from_file(path)
        with open(path, encoding="utf-8") as f:
            self.decoders = flatten_decoders(json.load(f).get("decoder"))
        self.types = {d.get("type") for d in self.decoders}
        self.added = {i: (t.content, t.special) for i, t in self.tok.get_added_tokens_decoder().items()}
        self.bug = bug
        self._bytes = {}

    # ---- the library's own ops
    def encode(self, text, add_special, parse_special):
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def decode(self, ids, skip):
        return self.tok.decode(list(ids), skip_special_tokens=skip)

    # ---- bytes of one id
    def token_bytes(self, i):
        """The bytes id `i` stands for alone (special tokens as their text); None: no token."""
        if i in self._bytes:
            return self._bytes[i]
        if i in self.added:
            b = self.added[i][0].encode("utf-8")
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
                    s = t
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
                    if not self.decoders:
                        s = self.tok.decode([i])
                    b = s.encode("utf-8")
        self._bytes[i] = b
        return b

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
        if not 0 <= prompt <= len(ids):
            raise ValueError(f"prompt {prompt} outside 0..{len(ids)}")
        fn = {
            None: self.stream_correct,
            "cumulative-slice": self.stream_cumulative_slice,
            "cluster-prefix": self.stream_cluster_prefix,
            "cleanup-drop": self.stream_cleanup_drop,
            "flush-replace-at-space": self.stream_flush_replace_at_space,
        }[self.bug]
        deltas = fn(list(ids), prompt, skip)
        assert len(deltas) == len(ids) - prompt
        return deltas

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

    def stream_cumulative_slice(self, ids, prompt, skip):
        generated, previous, deltas = [], "", []
        for i in ids[prompt:]:
            generated.append(i)
            text = self.decode(generated, skip)
            deltas.append(text[len(previous):])
            previous = text
        return deltas

    def stream_cluster_prefix(self, ids, prompt, skip):
        previous = self.decode(ids[:prompt], skip) if prompt else ""
        deltas = []
        for k in range(prompt + 1, len(ids) + 1):
            text = self.decode(ids[:k], skip)
            if text.endswith(REPL):
                deltas.append("")
                continue
            old, new = clusters(previous), clusters(text)
            n = 0
            while n < min(len(old), len(new)) and old[n] == new[n]:
                n += 1
            deltas.append("".join(new[n:]))
            previous = text
        return deltas

    def stream_cleanup_drop(self, ids, prompt, skip):
        sent, _ = self.prompt_state(ids, prompt, skip)
        sent = cleanup_spaces(sent)
        deltas = []
        for k in range(prompt + 1, len(ids) + 1):
            text = cleanup_spaces(self.decode(ids[:k], skip))
            if text.endswith(REPL) and k < len(ids):
                deltas.append("")
                continue
            if text.startswith(sent):
                deltas.append(text[len(sent):])
            else:
                deltas.append("")  # the bug: what changed is dropped, never sent
            sent = text
        return deltas

    def starts_word(self, i, b):
        if b[:1] == b" ":
            return True
        if i in self.added:
            return False
        t = self.tok.id_to_token(i) or ""
        return t.startswith("\u2581") or t.startswith("\u0120")

    def stream_flush_replace_at_space(self, ids, prompt, skip):
        _, buf = self.prompt_state(ids, prompt, skip)
        buf = bytes(buf)
        # a decoder's Strip (SentencePiece's first space) applies to the first text of all
        strip = [d for d in self.decoders if d.get("type") == "Strip"]
        lead = 0
        if strip and not any(self.stream_bytes(i, skip) for i in ids[:prompt]):
            lead, lead_char = strip[-1].get("start", 0), strip[-1].get("content", " ")
        deltas = []
        for i in ids[prompt:]:
            b = self.stream_bytes(i, skip)
            out = ""
            if self.starts_word(i, b):
                out = buf.decode("utf-8", errors="replace")  # the bug: even inside a character
                buf = b
            else:
                buf += b
            try:
                out += buf.decode("utf-8")
                buf = b""
            except UnicodeDecodeError:
                pass
            if out and lead:
                n = 0
                while n < lead and out[n:n + 1] == lead_char:
                    n += 1
                out, lead = out[n:], 0
            deltas.append(out)
        if deltas and buf:
            deltas[-1] += buf.decode("utf-8", errors="replace")
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
        return {"text": engine.decode(req["ids"], bool(req.get("skip_special", False)))}
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
    bug = None
    if "--bug" in args:
        j = args.index("--bug")
        bug = args[j + 1] if j + 1 < len(args) else None
        del args[j:j + 2]
        if bug not in BUGS:
            sys.exit(f"unknown --bug {bug!r}; one of {', '.join(BUGS)}")
    if len(args) != 1:
        sys.exit("usage: detok_blind3.py TOKENIZER_JSON [--bug NAME]")
    engine = Engine(args[0], bug)
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
