"""blind12 decode / stream / pieces engine on the real `tokenizers` library, one bug per `--bug`.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md). Without `--bug` it is the
bug-free twin: `decode` is `tokenizers`' decode (`skip_special_tokens` as asked, clean-up as the
model's tokenizer_config.json says); `stream` decodes the growing window of all ids (prompt
included) and sends what grew past the prompt's text, holding back a trailing U+FFFD (an unfinished
character) and sending a character the prompt began whole once it is complete; `pieces` gives every
id's bytes from the vocabulary (byte-level characters mapped back to bytes, `<0xHH>` to its byte,
`▁` to a space, added tokens as their text). `encode` is answered too (`tokenizers`' encode), `chat`
is not. Each bug below is the behaviour of a real engine, written from its public report (and,
where the report or its fix shows it, its code); each touches only its own op, and only the named
mechanism differs from the twin.

Decode:

`--bug bos-only-strip` (karpathy/llama2.c #41, "The inferenced text has a leading space because of
the vocab", and PR #89, "omit the leading space on the first token"; the rule that landed in
`run.c`): llama2.c writes each piece with `▁` already turned into a space in tokenizer.bin and
decodes token by token: `char *piece = t->vocab[token]; // following BOS (1) token, sentencepiece
decoder strips any leading whitespace (see PR #89)` `if (prev_token == 1 && piece[0] == ' ') {
piece++; }`. So only a piece right after id 1 loses its space; the first piece of ids that do not
start with BOS keeps it (the report's `▁Once` printed as ` Once`), and a piece after a BOS in the
middle of the ids loses it. Here: the ids' pieces (the twin's piece bytes; special tokens as their
text, or nothing with `skip_special`) are joined with that rule (id 1 as llama2.c hard-codes it)
and read as UTF-8 with replacement, where the twin's decoder strips one leading space of the whole
text (`Strip(" ", 1, 0)`). Shows on lenml-llama2 (BOS id 1, a `Strip` decoder).

`--bug legacy-sp-chunks` (huggingface/transformers #29452, fixed by PR #29453 "[`TokenizationLlama`]
fix the way we convert tokens to strings to keep leading spaces 🚨 breaking fix": "`input_ids =
tokenizer.encode("hello", add_special_tokens=True)` would produce `["<s>", "▁hello"]` but decoded as
`"<s>hello"`"): the slow `LlamaTokenizer.convert_tokens_to_string` of transformers 4.38:
`if tokens[0].startswith(SPIECE_UNDERLINE) and self.add_prefix_space: tokens[0] = tokens[0][1:]`,
then for each token `if token in self.all_special_tokens: if not prev_is_special and i != 0 and
self.legacy: out_string += " "` / `out_string += self.sp_model.decode(current_sub_tokens) + token`,
and `out_string += self.sp_model.decode(current_sub_tokens)` at the end: each run of ordinary tokens
between special tokens is decoded alone by SentencePiece (which drops the run's leading space),
and with `legacy` (lenml-llama2's tokenizer_config.json says `"legacy": true`) a space goes before
a special token that follows text. Here: the ids' tokens (special ones left out first with
`skip_special`, as `convert_ids_to_tokens(skip_special_tokens=True)` does) go through that
function, `sp_model.decode` being the model's own decoder on the run. Shows on lenml-llama2 where
special tokens are written: with `--add-special` (`<s>` first) and on the id sequences with special
tokens between words (`-c ids`).

`--bug gpt2-linear-offset` (paiml/aprender PR #2121, "fix(serve): GPT-2 byte-level BPE decode
mangled all non-ASCII output (PMAT-837)"): "`BPETokenizer::gpt2_char_to_byte` inverted the GPT-2
byte-level map with a linear `code - 0x100` offset (accepting only `0..=32 | 127..=160 | 173`) and
omitted the Latin-1 self-mapped bytes entirely ... 129 of 256 byte values returned `None`, so
`decode()` re-encoded the codepoint as multi-byte UTF-8 — turning every non-ASCII generation ...
into mojibake (中 → `ä¸Ń`)". Here: each character of a byte-level token is its byte when it is
printable ASCII (the fast arm) or when `ord(c) - 0x100` is in 0..=32, 127..=160 or 173, and its own
UTF-8 otherwise; added tokens are written as their text as the twin does; the bytes are read as
UTF-8 with replacement. Shows on byte-level vocabularies (llama-bpe, qwen3) for any non-ASCII text.

Stream:

`--bug ignore-invalid` (abetlen/llama-cpp-python PR #118, "Fix UnicodeDecodeError permanently":
"This detects a multibyte UTF8 character, and doesn't return if its incomplete. If there otherwise
wasn't enough tokens or the model somehow returns invalid bytes, we use errors="ignore" to remove
invalid characters."): `_create_completion` after that PR detokenizes the generated ids only
(`all_text = self.detokenize(completion_tokens)`), looks at the last three bytes — `for k,char in
enumerate(all_text[-3:]): k = 3 - k; for num,pattern in [(2, 192), (3, 224), (4, 240)]: if (num > k
and pattern & char == pattern): multibyte_fix = num - k` — skips the token while
`multibyte_fix > 0` (`multibyte_fix -= 1; continue`), and otherwise yields
`text[start:].decode("utf-8", errors="ignore")` from `returned_characters` on; the last chunk is
`text[returned_characters:].decode("utf-8", errors="ignore")`. Here: that loop, run over the ids
after the prompt (the prompt's bytes are not part of `all_text`) with the twin's piece bytes (special
tokens as their text, or nothing with `skip_special`), one delta per id, the final chunk added to
the last. Bytes that do not make a character (a lone continuation byte, 0xFF, a character cut at
the end, the rest of a character the prompt began) vanish where the decoder writes U+FFFD. Shows on
`-c ids` (qwen3, lenml-llama2).

`--bug first-space-trim` (ml-explore/mlx-lm PR #1754, "Keep the leading space in the streaming
detokenizers": "**BPE.** `_maybe_trim_space` strips one leading space off the first flushed chunk.
Byte level BPE is lossless, `Ġ` is a real space, and `tokenizer.decode` keeps it"; and for SPM the
trim "is guarded by `not self.text`, which is still true after the trim empties the first chunk, so
it can fire twice"): mlx-lm's `BPEStreamingDetokenizer` (`elif not self.text: return
current_text[1:]`) and `SPMStreamingDetokenizer` with `trim_space=True` (chosen for a
`Replace ▁ / ByteFallback / Fuse / Strip` decoder; Gemma's decoder without `Strip` gets
`trim_space=False`) see only the generated ids, so the first text they flush after a prompt loses
its leading space. Here: the twin's deltas, except that while nothing has been sent yet a delta
starting with a space loses that space (again on the next delta if that left it empty), where the
decoder is one mlx-lm gives those detokenizers (`ByteLevel`, or SentencePiece's with `Strip`). Shows
on qwen3 (a `ByteLevel` decoder) and lenml-llama2, wherever the first id after the prompt starts
with a space; not on gemma-3.

Pieces:

`--bug user-defined-empty` (utilityai/llama-cpp-rs PR #93, "Process user defined tokens": "I wasn't
getting any of the spaces / tabs ... we were just skipping over user defined tokens, and for this
model, spaces and tabs are specialized user defined tokens"): `LlamaModel::token_to_str_with_size`
before it: `if token == self.token_nl() { return Ok(String::from("\\n")); }` then `match
self.token_type(token) { LlamaTokenType::Normal => {} ... LlamaTokenType::Unknown |
LlamaTokenType::Undefined | LlamaTokenType::Byte | LlamaTokenType::UserDefined |
LlamaTokenType::Unused => { return Ok(String::new()); } }` (the PR moves `UserDefined` to the
`Normal` arm). Here: each id's piece is the twin's, except a user-defined token (an added token not
marked special, other than the newline token, that llama.cpp's converter does not take for a control
token by its look: `<|...|>`, `<unused...>`, `<pad>`, `<mask>`, `[@BOS@]`), which has no bytes (an
empty piece). Shows on gemma-3 (its `\\n\\n`... runs, `▁▁`... runs, tabs and HTML tags) and qwen3
(`<think>`, `<tool_call>` ...).

`--bug latin1-byte-pieces` (karpathy/llama2.c, `tokenizer.py` `export()` from commit 3bfa566,
"delete the run_wrap file! yay. ty @python273 and @ggerganov for code snippets", as in python273's
PR #15 "Tokenizer in C"; replaced by commit c02865d, "prompt tokenizer improvements: utf8 support,
add_dummy_prefix and byte_fallback options to match sentencepiece"): tokenizer.bin was written as
`if i == self.bos_id: t = '\\n<s>\\n'` / `elif i == self.eos_id: t = '\\n</s>\\n'` / `elif len(t) == 6
and t.startswith('<0x') and t.endswith('>'): t = chr(int(t[3:5], 16)) # e.g. make '<0x01>' into
'\\x01'` / `t = t.replace('▁', ' ')` and `bytes = token.encode('utf-8')`: a byte token 0x80..0xFF
becomes the two UTF-8 bytes of the Latin-1 character, and BOS and EOS are wrapped in newlines.
Here: the twin's table with those three changes (BOS and EOS from tokenizer_config.json). Shows
on lenml-llama2 and gemma-3 (SentencePiece-style vocabularies with byte-fallback tokens).
"""
import argparse
import json
import os
import sys

BUGS = ["bos-only-strip", "legacy-sp-chunks", "gpt2-linear-offset",
        "ignore-invalid", "first-space-trim",
        "user-defined-empty", "latin1-byte-pieces"]
FFFD = "\ufffd"


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def looks_special(text):
    """llama.cpp convert_hf_to_gguf.py `does_token_look_special`."""
    return (text in ("<pad>", "<mask>", "<2mass>", "[@BOS@]")
            or (text.startswith("<|") and text.endswith("|>"))
            or (text.startswith("<｜") and text.endswith("｜>"))
            or (text.startswith("<unused") and text.endswith(">")))


def aprender_char_to_byte(c):
    """aprender before PR #2121: printable ASCII, then a linear code - 0x100 offset."""
    code = ord(c)
    if 0x21 <= code <= 0x7E:
        return code
    b = code - 0x100
    if 0 <= b <= 32 or 127 <= b <= 160 or b == 173:
        return b
    return None


class Engine:
    def __init__(self, path, bug):
        from tokenizers import Tokenizer
        self.path = path
        self.tok = Tokenizer.from_file(path)
        self.bug = bug
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        self.spec = spec
        self.added = {a["id"]: a for a in spec.get("added_tokens", [])}
        self.special_ids = {i for i, a in self.added.items() if a.get("special")}
        dec = spec.get("decoder")
        dec_text = json.dumps(dec, ensure_ascii=False)
        self.byte_level = '"ByteLevel"' in dec_text
        self.replace_meta = '"Replace"' in dec_text and "\u2581" in dec_text
        self.spm_strip = self.replace_meta and '"Strip"' in dec_text
        self.byte_decoder = {c: b for b, c in bytes_to_unicode().items()}
        self.n = self.tok.get_vocab_size(with_added_tokens=True)
        self.vocab = self.tok.get_vocab(with_added_tokens=True)
        self.cleanup_default = False
        self.config = {}
        cfg = os.path.join(os.path.dirname(path), "tokenizer_config.json")
        if os.path.exists(cfg):
            with open(cfg, encoding="utf-8") as f:
                self.config = json.load(f)
            self.cleanup_default = bool(self.config.get("clean_up_tokenization_spaces", False))
        self.cleanup = self.cleanup_default

    def config_token(self, key):
        v = self.config.get(key)
        if isinstance(v, dict):
            v = v.get("content")
        return self.vocab.get(v) if isinstance(v, str) else None

    # ---------------------------------------------------------------- pieces (the twin's table)
    def piece_bytes(self, i, skip=False):
        if i in self.added:
            if skip and i in self.special_ids:
                return b""
            content = self.added[i]["content"]
            if self.replace_meta:
                content = content.replace("\u2581", " ")
            return content.encode("utf-8")
        s = self.tok.id_to_token(i)
        if s is None:
            return None
        if self.byte_level:
            try:
                return bytes(self.byte_decoder[c] for c in s)
            except KeyError:
                return s.encode("utf-8")
        if len(s) == 6 and s.startswith("<0x") and s.endswith(">"):
            try:
                return bytes([int(s[3:5], 16)])
            except ValueError:
                pass
        return s.replace("\u2581", " ").encode("utf-8")

    def pieces(self):
        table = [self.piece_bytes(i) for i in range(self.n)]
        if self.bug == "user-defined-empty":
            nl = self.vocab.get("\n")
            for i, a in self.added.items():
                if not a.get("special") and i != nl and not looks_special(a["content"]) and i < self.n:
                    table[i] = b""
        elif self.bug == "latin1-byte-pieces":
            for i in range(self.n):
                s = self.tok.id_to_token(i)
                if s is not None and i not in self.added and len(s) == 6 and s.startswith("<0x") and s.endswith(">"):
                    table[i] = chr(int(s[3:5], 16)).replace("\u2581", " ").encode("utf-8")
            bos, eos = self.config_token("bos_token"), self.config_token("eos_token")
            if bos is not None:
                table[bos] = b"\n<s>\n"
            if eos is not None:
                table[eos] = b"\n</s>\n"
        return table

    # ---------------------------------------------------------------- decode
    def cleaned(self, text):
        if not self.cleanup:
            return text
        for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                     (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
            text = text.replace(a, b)
        return text

    def hf_decode(self, ids, skip):
        return self.tok.decode(ids, skip_special_tokens=skip)

    def decode(self, ids, skip):
        if self.bug == "bos-only-strip":
            out = b""
            prev = -1
            for i in ids:
                piece = self.piece_bytes(i, skip) or b""
                if prev == 1 and piece[:1] == b" ":
                    piece = piece[1:]
                out += piece
                prev = i
            return self.cleaned(out.decode("utf-8", errors="replace"))
        if self.bug == "legacy-sp-chunks":
            tokens = [self.tok.id_to_token(i) for i in ids if not (skip and i in self.special_ids)]
            tokens = [t for t in tokens if t is not None]
            return self.cleaned(self.llama_convert_tokens_to_string(tokens) if tokens else "")
        if self.bug == "gpt2-linear-offset" and self.byte_level:
            out = bytearray()
            for i in ids:
                if i in self.added:
                    out += self.piece_bytes(i, skip)
                    continue
                s = self.tok.id_to_token(i)
                if s is None:
                    continue
                for c in s:
                    b = aprender_char_to_byte(c)
                    out += bytes([b]) if b is not None else c.encode("utf-8")
            return self.cleaned(out.decode("utf-8", errors="replace"))
        return self.cleaned(self.hf_decode(ids, skip))

    def sp_decode(self, tokens):
        if not tokens:
            return ""
        return self.tok.decoder.decode(tokens)

    def llama_convert_tokens_to_string(self, tokens):
        """transformers 4.38 LlamaTokenizer.convert_tokens_to_string (add_prefix_space, legacy from the config)."""
        legacy = self.config.get("legacy", True)
        specials = {self.added[i]["content"] for i in self.special_ids}
        tokens = list(tokens)
        if tokens[0].startswith("\u2581"):
            tokens[0] = tokens[0][1:]
        current, out, prev_is_special = [], "", False
        for i, token in enumerate(tokens):
            if token in specials:
                if not prev_is_special and i != 0 and legacy:
                    out += " "
                out += self.sp_decode(current) + token
                prev_is_special = True
                current = []
            else:
                current.append(token)
                prev_is_special = False
        out += self.sp_decode(current)
        return out

    # ---------------------------------------------------------------- stream
    def twin_stream(self, ids, prompt, skip):
        base = self.hf_decode(ids[:prompt], skip) if prompt else ""
        while base.endswith(FFFD):
            base = base[:-1]
        sent = base
        deltas = []
        last = len(ids) - 1
        for k in range(prompt, len(ids)):
            text = self.hf_decode(ids[:k + 1], skip)
            if text.endswith(FFFD) and k < last:
                deltas.append("")
                continue
            if text.startswith(sent):
                deltas.append(text[len(sent):])
            else:
                common = os.path.commonprefix([text, sent])
                deltas.append(text[len(common):])
            sent = text
        return deltas

    def stream(self, ids, prompt, skip):
        if self.bug == "ignore-invalid":
            return self.llama_cpp_python_stream(ids[prompt:], skip)
        deltas = self.twin_stream(ids, prompt, skip)
        if self.bug == "first-space-trim" and (self.byte_level or self.spm_strip):
            emitted = False
            for k, d in enumerate(deltas):
                if emitted or not d:
                    continue
                if d[0] == " ":
                    d = d[1:]
                deltas[k] = d
                emitted = bool(d)
        return deltas

    def llama_cpp_python_stream(self, completion, skip):
        deltas = []
        all_text = b""
        returned = 0
        multibyte_fix = 0
        for token in completion:
            all_text += self.piece_bytes(token, skip) or b""
            for k, char in enumerate(all_text[-3:]):
                k = 3 - k
                for num, pattern in [(2, 192), (3, 224), (4, 240)]:
                    if num > k and pattern & char == pattern:
                        multibyte_fix = num - k
            if multibyte_fix > 0:
                multibyte_fix -= 1
                deltas.append("")
                continue
            start = returned
            returned += len(all_text[start:])
            deltas.append(all_text[start:].decode("utf-8", errors="ignore"))
        if deltas:
            deltas[-1] += all_text[returned:].decode("utf-8", errors="ignore")
        return deltas

    # ---------------------------------------------------------------- protocol
    def handle(self, req):
        op = req.get("op")
        for key in ("spaces_between_specials", "remove_special"):
            if req.get(key):
                return {"error": f"{key} not supported"}
        self.cleanup = req["clean_up_spaces"] if "clean_up_spaces" in req else self.cleanup_default
        if req.get("step", 1) != 1:
            return {"error": "step not supported"}
        skip = bool(req.get("skip_special", False))
        if op == "encode":
            self.tok.encode_special_tokens = not req.get("parse_special", False)
            return {"ids": self.tok.encode(req["text"], add_special_tokens=req.get("add_special", False)).ids}
        if op == "decode":
            return {"text": self.decode(req["ids"], skip)}
        if op == "stream":
            return {"deltas": self.stream(req["ids"], req["prompt"], skip)}
        if op == "pieces":
            return {"pieces": [None if b is None else b.hex() for b in self.pieces()]}
        return {"error": f"op {op} not supported"}


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
