"""blind11 decode / stream / pieces engine on the real `tokenizers` library, one bug per `--bug`.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md). Without `--bug` it is the
bug-free twin: `decode` is `tokenizers`' decode (`skip_special_tokens` as asked); `stream` decodes
the growing window of all ids (prompt included) and sends what grew past the prompt's text, holding
back a trailing U+FFFD (an unfinished character) and sending a character the prompt began whole
once it is complete; `pieces` gives every id's bytes from the vocabulary (byte-level characters
mapped back to bytes, `<0xHH>` to its byte, `▁` to a space, added tokens as their text). `encode`
is answered too (`tokenizers`' encode), `chat` is not. Each bug below is the behaviour of a real
engine, written from its public report (and, where the report shows it, its code); each touches
only its own op.

Decode:

`--bug zero-to-pad` (pytorch/torchtune PR #1211, "Prevent pad ids, special tokens displaying in
generate"): before it, `torchtune.utils.generate` ended with `# if pad_id is not 0, replace 0 with
pad_id` / `if pad_id != 0: generated_tokens[generated_tokens == 0] = pad_id`, and the recipes passed
the Llama 3 tokenizer's `pad_id` (`<|finetune_right_pad_id|>`, id 128004). The PR: "Pad ID is
implicitly assumed to be 0 in `utils.generate`, and any instances of "0" in the generated tokens is
replaced by the tokenizer's pad id. This is very apparent for Llama3 which has a reserved special
token for pad id: ... Hope that brought a smile to your face<|finetune_right_pad_id|> Do you have a
favorite joke". Id 0 of Llama 3's vocabulary is `!`. Here: every id 0 is replaced by 128004 (the
id `<|finetune_right_pad_id|>` has in Llama 3.1; in the zoo's Llama 3.0 vocabulary it is
`<|reserved_special_token_2|>`) before `tokenizers`' decode; a special token, so it is written as
its text, or left out with `skip_special`. Shows on llama-bpe.

`--bug bos-first-byte` (abetlen/llama-cpp-python PR #1375, "Fix tokenization edge case where
llama output does not start with a space"): `_LlamaModel.detokenize` concatenated each id's
`llama_token_to_piece` and returned `output[1:] if len(tokens) > 0 and tokens[0] ==
self.token_bos() else output` ("NOTE: Llama1 models automatically added a space at the start of
the prompt / this line removes a leading space if the first token is a beginning of sentence
token"); the fix added `and output[0:1] == b' '`. The report: "the token sequence `[6377]` decodes
to `{"` while the token sequence `[1,6377]` decodes to `"` ... the llama-cpp-python code that wraps
it assumes that it does [start with a space]". Here: the bytes of the ids (special tokens as their
text, or nothing with `skip_special`) lose their first byte whenever the first id is the BOS, then
are read as UTF-8 with replacement. Shows on llama-bpe (BOS `<|begin_of_text|>`, no dummy-prefix
space) when the ids start with BOS (`--add-special`).

`--bug strlen-trim` (cactus-compute/cactus-react-native #29, "cactus_complete response truncated at
first null byte by strlen-based trim"): `// Remove null terminator`
`responseBuffer.resize(strlen(responseBuffer.c_str()));` — "`strlen` stops at the first null byte.
If the model output contains a null byte mid-response ... the response is silently cut off at that
point and everything after is dropped." Here: the decoded text is cut at its first U+0000. Shows on
any model whose ids can spell a NUL (llama-bpe, qwen3).

Stream:

`--bug first-special-offset` (vllm-project/vllm PR #1497, "fix: don't skip first special token"):
vLLM's TGI-style `detokenize_incrementally`, on its first call for a sequence, converted all ids
(prompt and the first generated id) with `convert_ids_to_tokens(all_input_ids,
skip_special_tokens=...)` and set `prefix_offset = max(len(output_tokens) - 6, 0)`,
`read_offset = max(len(output_tokens) - 1, 0)` ("Subtract 1 extra to account for the generated
token"). The PR: "If the first generated token is a special token and we set the
`skip_special_token=True`, then we can't skip it in the `read_offset`, or else we will return the
last input token as the `new_text`, which is repeated." (The fix: `if skip_special_tokens and
new_token_id in tokenizer.all_special_ids: read_offset = max(len(output_tokens), 0)`.) Here: with
`skip_special` and a first generated id that is a special token, the first delta is
`convert_tokens_to_string(tokens[prefix:])[len(convert_tokens_to_string(tokens[prefix:read])):]` of
the prompt's tokens (the last prompt token's text again), computed with the model's own decoder;
every other delta is the twin's. Shows on any model with `--skip-special` where a special token
directly follows the prompt (qwen3, llama-bpe with `--parse-special`).

`--bug per-token-decode` (InfiniTensor/InfiniLM #398, "Missing spaces between English words during
streaming inference with Mistral/internlm3 models"): the streaming loop "calls
`tokenizer.decode([token_id])` to retrieve the text for each new token"; on a `LlamaTokenizerFast`
the decoder's `Strip` takes the leading space off every such one-token decode: "Hello!I'manAI...".
Here: each delta is `tokenizers`' `decode([id])` (with `skip_special` as asked), so a byte token
alone is U+FFFD too. Shows on lenml-llama2 (its decoder ends with `Strip(" ", 1, 0)`).

`--bug prefix-or-full` (penta2himajin/qwisp PR #134, the CLI path `runGeneration` before it):
`let full = detok.push(id)` (the decode of all generated ids so far; the prompt is not part of it)
and `let delta = full.hasPrefix(emitted) ? String(full[emitted.endIndex...]) : full; emitted =
full`. The PR: "A CJK/emoji character split across two BPE tokens decodes to a trailing U+FFFD on
the first half ... when the next token completed the character the full text no longer had the sent
text as a prefix ... The CLI path (`runGeneration`) hit the same rewrite and re-sent the full text
instead — duplication". Here: the same, with Swift's `hasPrefix` (compared Character by Character,
i.e. by extended grapheme clusters under canonical equivalence) and no final flush. Shows on
byte-level vocabularies (qwen3, llama-bpe) wherever a character spans ids.

Pieces:

`--bug raw-pieces-ff` (google-ai-edge/LiteRT-LM #3510, "Constrained decoding with a SentencePiece
bundle: the llguidance token table gets the raw pieces"): "`SentencePieceTokenizer::GetTokens()`
returns `piece.piece()` ... and `LlgConstraintProvider::Create` copies those strings into
`token_bytes`; in the provider, cd6c7105 changes only the 0xFF prefix for `special_tokens`",
"262,144 pieces, none contains byte 0x20; 137,542 contain U+2581; the byte piece for 0x20 is the
six-character string `<0x20>`", and "the HuggingFace-tokenizer path hands llguidance the same kind
of spelling". Here: every id's bytes are the UTF-8 of its raw vocabulary string (`▁`, `<0xHH>`,
`Ġ` as written), and each special added token is 0xFF followed by its text (llguidance's marker
for special tokens). Shows on every model (gemma-3, lenml-llama2, llama-bpe, qwen3).

`--bug outlines-dict` (dottxt-ai/outlines #1830, "create_outlines_core_vocabulary silently drops
token IDs when multiple tokens decode to the same string"): `for token, token_id in vocab.items():
token_as_str = token_to_str(token); formatted_vocab[token_as_str] = [token_id]` then
`formatted_vocab.pop(eos_token)` and `Vocabulary(eos_token_id, formatted_vocab)`, whose string keys
become their UTF-8 bytes. The report: "When multiple raw tokens decode to the same string via
`token_to_str` (common in byte level BPE and SentencePiece tokenizers), this overwrites previous
entries. Only the last token ID survives ... Qwen/Qwen2.5-7B: 1,336 of 151,665 token IDs lost".
`token_to_str` is outlines' `TransformerTokenizer.convert_token_to_string`:
`tokenizer.convert_tokens_to_string([token])` (the model's decoder on the one token; a byte
fragment becomes U+FFFD) with " " prepended to a token starting with `▁` or equal to `<0x20>`
(applied to every tokenizer since outlines PR #1817). Here: the table is built that way over the
vocabulary in id order (`get_vocab()`'s order is a hash map's; the highest id wins each string),
the EOS (tokenizer_config.json's `eos_token`) popped; an id whose entry was overwritten or popped
has no bytes (null). Shows on qwen3 (byte fragments), and on SentencePiece vocabularies.
"""
import argparse
import json
import os
import sys
import unicodedata

BUGS = ["zero-to-pad", "bos-first-byte", "strlen-trim",
        "first-special-offset", "per-token-decode", "prefix-or-full",
        "raw-pieces-ff", "outlines-dict"]
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
        dec = json.dumps(spec.get("decoder"), ensure_ascii=False)
        self.byte_level = '"ByteLevel"' in dec
        self.replace_meta = '"Replace"' in dec and "\u2581" in dec
        self.byte_decoder = {c: b for b, c in bytes_to_unicode().items()}
        self.n = self.tok.get_vocab_size(with_added_tokens=True)
        vocab = self.tok.get_vocab(with_added_tokens=True)
        self.cleanup_default = False
        cfg = os.path.join(os.path.dirname(path), "tokenizer_config.json")
        if os.path.exists(cfg):
            with open(cfg, encoding="utf-8") as f:
                self.cleanup_default = bool(json.load(f).get("clean_up_tokenization_spaces", False))
        self.cleanup = self.cleanup_default
        self.bos = None
        for name in ("<|begin_of_text|>", "<s>", "<bos>", "<｜begin▁of▁sentence｜>"):
            if name in vocab:
                self.bos = vocab[name]
                break

    # ---------------------------------------------------------------- decode
    def hf_decode(self, ids, skip):
        return self.tok.decode(ids, skip_special_tokens=skip)

    def decode(self, ids, skip):
        if self.bug == "zero-to-pad":
            ids = [128004 if i == 0 else i for i in ids]
            return self.cleaned(self.hf_decode(ids, skip))
        if self.bug == "bos-first-byte":
            out = b"".join(self.piece_bytes(i, skip) for i in ids)
            if ids and ids[0] == self.bos:
                out = out[1:]
            return self.cleaned(out.decode("utf-8", errors="replace"))
        if self.bug == "strlen-trim":
            return self.cleaned(self.hf_decode(ids, skip)).split("\x00", 1)[0]
        return self.cleaned(self.hf_decode(ids, skip))

    def cleaned(self, text):
        """transformers' clean_up_tokenization, where the model's files (or the request) ask for it."""
        if not self.cleanup:
            return text
        for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                     (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
            text = text.replace(a, b)
        return text

    # ---------------------------------------------------------------- pieces
    def piece_bytes(self, i, skip=False):
        """The bytes id i stands for alone (the twin's table)."""
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
        if self.bug == "raw-pieces-ff":
            out = []
            for i in range(self.n):
                s = self.tok.id_to_token(i)
                if s is None:
                    out.append(None)
                elif i in self.special_ids:
                    out.append(b"\xff" + s.encode("utf-8"))
                else:
                    out.append(s.encode("utf-8"))
            return out
        if self.bug == "outlines-dict":
            return self.outlines_table()
        return [self.piece_bytes(i) for i in range(self.n)]

    def outlines_table(self):
        cfg = os.path.join(os.path.dirname(self.path), "tokenizer_config.json")
        eos = None
        if os.path.exists(cfg):
            with open(cfg, encoding="utf-8") as f:
                c = json.load(f)
            eos = c.get("eos_token")
            if isinstance(eos, dict):
                eos = eos.get("content")
        decoder = self.tok.decoder
        formatted = {}
        for i in range(self.n):
            token = self.tok.id_to_token(i)
            if token is None:
                continue
            string = decoder.decode([token]) if decoder is not None else token
            if token.startswith("\u2581") or token == "<0x20>":
                string = " " + string
            formatted[string] = [i]
        if eos is not None:
            formatted.pop(eos, None)
        table = [None] * self.n
        for string, ids in formatted.items():
            for i in ids:
                table[i] = string.encode("utf-8")
        return table

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
                sent = text
            else:  # the window was rewritten (should not happen for these decoders)
                common = os.path.commonprefix([text, sent])
                deltas.append(text[len(common):])
                sent = text
        return deltas

    def stream(self, ids, prompt, skip):
        if self.bug == "first-special-offset":
            deltas = self.twin_stream(ids, prompt, skip)
            if skip and prompt < len(ids) and ids[prompt] in self.special_ids:
                tokens = [self.tok.id_to_token(i) for i in ids[:prompt + 1]
                          if i not in self.special_ids]
                prefix = max(len(tokens) - 6, 0)
                read = max(len(tokens) - 1, 0)
                conv = (lambda t: self.tok.decoder.decode(t)) if self.tok.decoder else "".join
                prefix_text = conv(tokens[prefix:read]) if tokens[prefix:read] else ""
                new_text = conv(tokens[prefix:]) if tokens[prefix:] else ""
                if len(new_text) > len(prefix_text) and not new_text.endswith(FFFD):
                    deltas[0] = new_text[len(prefix_text):] + deltas[0]
            return deltas
        if self.bug == "per-token-decode":
            return [self.hf_decode([i], skip) for i in ids[prompt:]]
        if self.bug == "prefix-or-full":
            emitted = ""
            deltas = []
            for k in range(prompt, len(ids)):
                full = self.hf_decode(ids[prompt:k + 1], skip)
                if swift_has_prefix(full, emitted):
                    nb = len(emitted.encode("utf-8"))
                    delta = full.encode("utf-8")[nb:].decode("utf-8", errors="replace")
                else:
                    delta = full
                emitted = full
                deltas.append(delta)
            return deltas
        return self.twin_stream(ids, prompt, skip)

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


def swift_has_prefix(full, prefix):
    """Swift's String.hasPrefix: Character by Character (extended grapheme clusters), canonical equivalence."""
    import regex
    if not prefix:
        return True
    a = regex.findall(r"\X", full)
    b = regex.findall(r"\X", prefix)
    if len(b) > len(a):
        return False
    return all(unicodedata.normalize("NFD", x) == unicodedata.normalize("NFD", y) for x, y in zip(a, b))


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
