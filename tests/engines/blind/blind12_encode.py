"""blind12 encode engine on the real `tokenizers` library, one bug per `--bug`.

A `cmd:` engine speaking tokparity's line protocol (docs/contracts.md): it answers `encode` and
nothing else (`decode`, `stream`, `pieces` and `chat` get an error with no status: not tried).
Without `--bug` it is the bug-free twin: `tokenizers`' own `encode` on the model's
`tokenizer.json` (`encode_special_tokens = not parse_special`). Each bug below is the behaviour of a
real engine, written from its public report (and, where the report or its fix shows it, its code);
the rest of the pipeline (added tokens, normalizer, pre-tokenizer, BPE, post-processor) stays
`tokenizers`' own, so that only the named mechanism differs.

`--bug java-ascii-space` (knuddelsgmbh/jtokkit #33, "different token values between java and
python"): jtokkit, a Java port of tiktoken, compiled the split pattern with
`final Pattern regex = Pattern.compile(patternString);`, no flags. Java's `\\s` is then
`[ \\t\\n\\x0B\\f\\r]` only (Unicode whitespace needs `UNICODE_CHARACTER_CLASS`), and `(?i:...)` folds
US-ASCII only; `\\p{L}` and `\\p{N}` stay Unicode. The report: `"\\u3000\\u3000a"` gives `[44529, 64]` in
Java and `[23249, 23249, 64]` in Python for cl100k (U+3000 IDEOGRAPHIC SPACE is no `\\s` for Java,
so the run falls into ` ?[^\\s\\p{L}\\p{N}]+`). Later jtokkit compiles with
`Pattern.compile(patternString, Pattern.UNICODE_CHARACTER_CLASS)` (falling back to the flagless
pattern where Android refuses the flag). Here: the model's `Split` regex is rewritten to Java's
default meaning (`\\s` → `[ \\t\\n\\x0B\\f\\r]`, `\\S` → its complement, inside a class likewise, each
letter of a `(?i:...)` group → `[xX]`) and loaded into `tokenizers`. Shows on the cl100k-style splits
(llama-bpe, gpt35turbo, qwen3) with U+00A0, U+2003, U+3000, U+0085, U+2028 ... in the text.

`--bug php-range-bytemap` (Gioni06/GPT3Tokenizer #5, "Encoding text that contains certain some
emojis"; fixed by PR #6, commit a75e606, "The root cause is a generation of the bytes_to_unicode
map"): the PHP port built GPT-2's byte map with PHP's `range()`, which includes its end:
`$bs = array_merge(range(mb_ord('!'), mb_ord('~') + 1), range(mb_ord('¡'), mb_ord('¬') + 1),
range(mb_ord('®'), mb_ord('ÿ') + 1));` (Python's `range` stops before `+ 1`). Bytes 0x7F and 0xAD
become "printable" and map to themselves, 256 is dropped (`unset($result[256])`), and the bytes
left over are numbered from 256 without them: 0x80..0xA0 get the characters GPT-2 gives
0x7F..0x9F. `encode` maps each byte of a pre-token through that table, runs GPT-2's BPE
(`bpe()`: lowest-ranked pair, every occurrence merged, until no pair is ranked) and looks each
symbol up with `$this->vocab[$x]`: a symbol that is not in the vocabulary is PHP's `null`. Here:
the model's added tokens, normalizer and pre-tokenizer are `tokenizers`' own; a pre-token whose
UTF-8 holds none of the bytes 0x7F..0xA0, 0xAD is encoded by the model as the twin does; any other is
mapped through the PHP table, merged with the model's merges by that loop, and looked up (an
unknown symbol answered as `null`, which the protocol takes for a failed case). Shows on byte-level
vocabularies (llama-bpe, qwen3) for text with `—`, `€`, emoji, most CJK (wrong ids), and `í`,
`ح`, U+007F (null ids).

`--bug whitespace-run-whole` (NVIDIA/TensorRT-Model-Connect #928, fixed by PR #942, "fix(lfm2):
match pinned pretokenizer whitespace splitting"): the native pre-tokenizer re-implementing the
tokenizer.json `Split` regex: "Its whitespace branch consumes newline-free whitespace runs whole,
which drops the `\\s+(?!\\S)` alternative: a run followed by non-whitespace must yield its final
whitespace unit to the following piece." (`a  b`: HF `a`|` `|` b`, before the PR `a`|`  `|`b`;
`    return` → `    `|`return`). Here: `\\s+(?!\\S)|` is taken out of the model's `Split` regex,
the rest of the pattern and pipeline unchanged. Shows on llama-bpe and qwen3 (the same alternation)
wherever two or more spaces or tabs precede a word.

`--bug utf16-code-units` (latitudegames/GPT-3-Encoder #1, "Input with emojis tokenizes differently
than python impl": `hello 👋 world 🌍` gives 4 ids, decoded `hello  world`; fixed in 1.1.0 by commit
5766918 "fixed emoji bug"): the JavaScript port turned each pre-token into "bytes" with
`const encodeStr = str => { return str.split('').map(x => ord(x)) }` (`ord = x => x.charCodeAt(0)`):
UTF-16 code units, not UTF-8 bytes, then `encodeStr(token).map(x => byte_encoder[x]).join('')`.
A code unit below 256 (Latin-1: `é`, `ñ`, `°`, NBSP) is taken for that single byte; any other
(`—`, CJK, both halves of an emoji) finds no entry, is `undefined`, and `join('')` writes it as
nothing; the BPE of the rest is looked up with `encoder[x]`, `undefined` (JSON `null`) for a
pre-token left empty. The fix: `Array.from(textEncoder.encode(str))`. Here: the model's added tokens,
normalizer and pre-tokenizer are `tokenizers`' own; a pre-token of ASCII only is encoded by the
model as the twin does; any other is rebuilt from its code units that way, merged with the model's
merges (GPT-2's `bpe()`: lowest-ranked pair, every occurrence) and looked up (`null` where nothing is
left or a symbol is unknown). Shows on byte-level vocabularies (llama-bpe, qwen3) for any non-ASCII
text.
"""
import argparse
import json
import re
import sys

BUGS = ["java-ascii-space", "php-range-bytemap", "whitespace-run-whole", "utf16-code-units"]


# ------------------------------------------------------------------ regex rewrites
JAVA_SPACE = r" \t\n\x0B\x0C\r"


def java_default_regex(pattern):
    """The pattern as java.util.regex reads it without UNICODE_CHARACTER_CLASS / UNICODE_CASE."""
    out = []
    i = 0
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt == "s":
                out.append(JAVA_SPACE if in_class else "[" + JAVA_SPACE + "]")
            elif nxt == "S":
                if in_class:
                    raise ValueError("\\S inside a class")
                out.append("[^" + JAVA_SPACE + "]")
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    text = "".join(out)

    def ascii_fold(m):
        body = m.group(1)
        return "(?:" + "".join(f"[{ch.lower()}{ch.upper()}]" if ch.isascii() and ch.isalpha() else ch
                               for ch in body) + ")"
    return re.sub(r"\(\?i:([^()]*)\)", ascii_fold, text)


def drop_lookahead_run(pattern):
    return pattern.replace(r"\s+(?!\S)|", "")


def rewrite_split(spec, fn):
    """Apply fn to every Split regex of the pre-tokenizer; returns how many were rewritten."""
    n = 0

    def walk(node):
        nonlocal n
        if isinstance(node, dict):
            if node.get("type") == "Split" and isinstance(node.get("pattern"), dict) and "Regex" in node["pattern"]:
                new = fn(node["pattern"]["Regex"])
                if new != node["pattern"]["Regex"]:
                    node["pattern"]["Regex"] = new
                    n += 1
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(spec.get("pre_tokenizer"))
    return n


# ------------------------------------------------------------------ GPT-2 byte maps
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


def php_bytes_to_unicode():
    """Gioni06/GPT3Tokenizer before PR #6: PHP's range() includes its end."""
    bs = list(range(ord("!"), ord("~") + 2)) + list(range(ord("¡"), ord("¬") + 2)) + list(range(ord("®"), ord("ÿ") + 2))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    result = dict(zip(bs, map(chr, cs)))
    result.pop(256, None)  # unset($result[256])
    return result


PHP_AFFECTED = set(range(0x7F, 0xA1)) | {0xAD}


class Engine:
    def __init__(self, path, bug):
        from tokenizers import Tokenizer
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        self.bug = bug
        if bug == "java-ascii-space":
            rewrite_split(spec, java_default_regex)
        elif bug == "whitespace-run-whole":
            rewrite_split(spec, drop_lookahead_run)
        self.tok = Tokenizer.from_str(json.dumps(spec))
        model = spec["model"]
        self.vocab = model.get("vocab") or {}
        self.added_ids = {a["id"] for a in spec.get("added_tokens", [])}
        if bug in ("php-range-bytemap", "utf16-code-units"):
            self.ranks = {}
            for i, m in enumerate(model.get("merges") or []):
                a, b = m.split(" ", 1) if isinstance(m, str) else m
                self.ranks.setdefault((a, b), i)
            self.byte_encoder = bytes_to_unicode()
            self.byte_decoder = {c: b for b, c in self.byte_encoder.items()}
            self.php_encoder = php_bytes_to_unicode()

    def hf_encode(self, text, add_special, parse_special):
        self.tok.encode_special_tokens = not parse_special
        return self.tok.encode(text, add_special_tokens=add_special).ids

    def encode(self, text, add_special, parse_special):
        if self.bug in ("php-range-bytemap", "utf16-code-units"):
            return self.php_encode(text, add_special, parse_special)
        return self.hf_encode(text, add_special, parse_special)

    # ---------------------------------------------------------------- the PHP port
    def php_encode(self, text, add_special, parse_special):
        self.tok.encode_special_tokens = not parse_special
        enc = self.tok.encode(text, add_special_tokens=False)
        spans = [(s, e, tid) for tid, (s, e) in zip(enc.ids, enc.offsets) if tid in self.added_ids]
        ids = []
        pos = 0
        for s, e, tid in spans + [(len(text), len(text), None)]:
            if text[pos:s]:
                ids.extend(self.php_segment(text[pos:s]))
            if tid is not None:
                ids.append(tid)
            pos = e
        if add_special:
            plain = enc.ids
            full = self.tok.encode(text, add_special_tokens=True).ids
            k = 0
            while k <= len(full) - len(plain) and full[k:k + len(plain)] != plain:
                k += 1
            ids = full[:k] + ids + full[k + len(plain):]
        return ids

    def php_segment(self, seg):
        norm = self.tok.normalizer.normalize_str(seg) if self.tok.normalizer else seg
        words = [w for w, _ in self.tok.pre_tokenizer.pre_tokenize_str(norm)] if self.tok.pre_tokenizer else [norm]
        out = []
        for w in words:
            if not w:
                continue
            raw = bytes(self.byte_decoder[c] for c in w)
            if self.bug == "utf16-code-units":
                if raw.isascii():
                    out.extend(t.id for t in self.tok.model.tokenize(w))
                    continue
                units = raw.decode("utf-8", errors="replace").encode("utf-16-le")
                units = [units[k] | units[k + 1] << 8 for k in range(0, len(units), 2)]
                token = "".join(self.byte_encoder.get(u, "") for u in units)  # undefined joins as ""
                if not token:
                    out.append(None)  # encoder[""]: undefined
                    continue
                out.extend(self.vocab.get(sym) for sym in self.php_bpe(token))
                continue
            if not PHP_AFFECTED.intersection(raw):
                out.extend(t.id for t in self.tok.model.tokenize(w))
                continue
            token = "".join(self.php_encoder[b] for b in raw)
            out.extend(self.vocab.get(sym) for sym in self.php_bpe(token))  # $this->vocab[$x]: null when absent
        return out

    def php_bpe(self, token):
        chars = list(token)
        if len(chars) < 2:
            return chars
        while True:
            pairs = set(zip(chars, chars[1:]))
            ranked = [(self.ranks[p], p) for p in pairs if p in self.ranks]
            if not ranked:
                break
            first, second = min(ranked)[1]
            new, i = [], 0
            while i < len(chars):
                if i < len(chars) - 1 and chars[i] == first and chars[i + 1] == second:
                    new.append(first + second)
                    i += 2
                else:
                    new.append(chars[i])
                    i += 1
            chars = new
            if len(chars) == 1:
                break
        return chars

    def handle(self, req):
        op = req.get("op")
        if op == "encode":
            return {"ids": self.encode(req["text"], req.get("add_special", False), req.get("parse_special", False))}
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
