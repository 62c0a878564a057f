r"""Hugging Face ``tokenizers`` on a tokenizer.json with one thing edited, as a ``cmd:`` engine.

Each flag is an edit a buggy converter or a hand-written config could make; ``tokenizers``
itself then runs everything else right, so the engine has exactly the bug the edit plants:

    --regex OLD=>NEW            replace text in every Split regex (``\p{N}{1,3}=>\p{N}+``)
    --space-class ecmascript|re2|pcre2
                                every ``\s`` / ``\S`` of the Split regexes spelled as that engine's
                                class (ECMAScript: no U+0085, U+FEFF included; RE2: ASCII only;
                                PCRE2 with UCP: Unicode's and U+180E)
    --gpt2-split                the Split regexes replaced by ByteLevel's own (GPT-2's) regex
    --no-pre-tokenizer          only the byte-level mapping left: no split regex at all
    --model KEY=true|false      a field of the model: ignore_merges, byte_fallback, fuse_unk
    --merges-by-id              the merge list sorted by the merged token's id ("a lower id was
                                learned earlier"), not kept in its ranked order
    --drop-normalizer TYPE      the normalizer steps of that type removed (Prepend, Replace, NFC, …)
    --drop-added nonspecial     the added tokens that are not special removed (matched by the model)
    --unicode NFC|NFD|NFKC      Python's unicodedata applied to the text first
    --first-of-nfd              the normalizer's NFC (or NFD) step dropped and, first, each character
                                replaced by the first character of its NFD (Python's unicodedata), as
                                an engine that calls llama.cpp's unicode_cpts_normalize_nfd for it
    --parse-special always      added special tokens matched in the text even when not asked
    --specials-of llama-3.1     the added tokens' texts as Llama 3.1 names its ids 128000-128255 (Meta's
                                llama-models tokenizer.py), on a Llama 3 tokenizer.json
    --prepend-scheme always|first|never  the Metaspace pre-tokenizer's prepend_scheme ("first": the
                                ``▁`` only on the split at the start of the text, none after a special)
    --rank-bpe                  tiktoken's merge by rank in place of the model's merges (ranks: the
                                ids of a vocabulary made by tiktoken, o200k); the twin of --packed-keys
    --packed-keys               with --rank-bpe, every byte string looked up through a key that packs
                                its bytes six at a time into integers, a short last level padded with
                                zero bytes (@microsoft/tiktokenizer's BinaryMap): trailing NULs are lost,
                                and where two tokens' keys meet, the later id answers
    --decoded-keys              with --rank-bpe, the ranks in two tables as ai-tokenizer generates them:
                                a token whose bytes decode to text that encodes back to them keyed by
                                that text, every other one by its bytes; a whole piece looked up as
                                text, every byte string of the merge that is UTF-8 decoded as
                                JavaScript's TextDecoder does (a leading BOM dropped) and looked up as
                                text first, by its bytes only where that text is no token
    --added-unmergeable         every merge that makes an added token that is not special dropped: such a
                                token is still matched whole in the text, never made by a merge (kitoken's
                                tokenizers converter, which takes them out of the BPE vocabulary)
    --added-first-listed        the added tokens cut out of the text by one alternation in id order (the
                                first listed wins where several start at a position), each part between
                                them then encoded alone (kitoken's added-token regex)
    --truncation N              the file's "truncation" set to N ids (as a tokenizer.json saved with
                                truncation on ships it): tokenizers gives back at most N ids of a text
    --plain-object              every pre-token looked up whole in a plain JavaScript object first: one that
                                is no token and names a member of Object.prototype ('toString',
                                'constructor', …) finds that member, and the engine fails on the text
                                (a "TypeError" reply, as a JavaScript engine that writes a function out)

With no flag the file is used as it is (the bug-free twin).

    python tokenizers_engine.py tokenizer.json --model ignore_merges=false
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata

from tokenizers import Tokenizer

# Each regex engine's members of \s, as a class body for Oniguruma (tokenizers' engine).
SPACE_CLASSES = {
    "ecmascript": r"\t\n\x0B\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}",
    "re2": r"\t\n\f\r ",
    "pcre2": r"\t\n\x0B\f\r \x{85}\x{A0}\x{1680}\x{180E}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}",
}


def _components(config: dict | None, key: str) -> list[dict]:
    if not config:
        return []
    if config.get("type") == "Sequence":
        return [c for item in config[key] for c in _components(item, key)]
    return [config]


def _splits(config: dict) -> list[dict]:
    splits = [c for c in _components(config.get("pre_tokenizer"), "pretokenizers")
              if c.get("type") == "Split" and "Regex" in c.get("pattern", {})]
    if not splits:
        raise SystemExit("the tokenizer.json has no Split regex to edit")
    return splits


def respell_spaces(source: str, members: str) -> str:
    r"""``source`` with ``\s`` / ``\S`` written out as ``[members]`` / ``[^members]`` (inside a
    class: the members themselves; a ``\S`` inside a class does not occur in these regexes)."""
    out, inside, i = [], False, 0
    while i < len(source):
        if source[i] == "\\" and i + 1 < len(source):
            esc = source[i:i + 2]
            if esc == "\\s":
                out.append(members if inside else f"[{members}]")
            elif esc == "\\S" and not inside:
                out.append(f"[^{members}]")
            else:
                out.append(esc)
            i += 2
            continue
        if source[i] == "[":
            inside = True
        elif source[i] == "]":
            inside = False
        out.append(source[i])
        i += 1
    return "".join(out)


def planted(config: dict, args: argparse.Namespace) -> dict:
    if args.truncation is not None:
        config["truncation"] = {"direction": "Right", "max_length": args.truncation, "strategy": "LongestFirst",
                                "stride": 0}
    for edit in args.regex:
        old, sep, new = edit.partition("=>")
        if not sep:
            raise SystemExit(f"--regex {edit!r}: write OLD=>NEW")
        for split in _splits(config):
            if old not in split["pattern"]["Regex"]:
                raise SystemExit(f"the split regex has no {old!r}: {split['pattern']['Regex']!r}")
            split["pattern"]["Regex"] = split["pattern"]["Regex"].replace(old, new)
    if args.space_class:
        for split in _splits(config):
            split["pattern"]["Regex"] = respell_spaces(split["pattern"]["Regex"], SPACE_CLASSES[args.space_class])
    if args.gpt2_split:
        _splits(config)
        config["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                   "use_regex": True}
    if args.no_pre_tokenizer:
        config["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                   "use_regex": False}
    for setting in args.model:
        key, _, value = setting.partition("=")
        if key not in ("ignore_merges", "byte_fallback", "fuse_unk") or value not in ("true", "false"):
            raise SystemExit(f"--model {setting!r}: expected ignore_merges|byte_fallback|fuse_unk=true|false")
        config["model"][key] = value == "true"
    if args.merges_by_id:
        vocab = config["model"]["vocab"]
        merges = config["model"]["merges"]

        def merged_id(merge) -> int:
            left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
            return vocab[left + right]

        merges.sort(key=merged_id)  # stable: merges making the same token keep their order
    for kind in args.drop_normalizer:
        steps = _components(config.get("normalizer"), "normalizers")
        if not any(s.get("type") == kind for s in steps):
            raise SystemExit(f"the normalizer has no {kind} step")
        kept = [s for s in steps if s.get("type") != kind]
        config["normalizer"] = {"type": "Sequence", "normalizers": kept} if kept else None
    if args.first_of_nfd:
        steps = _components(config.get("normalizer"), "normalizers")
        if not any(s.get("type") in ("NFC", "NFD") for s in steps):
            raise SystemExit("the normalizer has no NFC or NFD step")
        kept = [s for s in steps if s.get("type") not in ("NFC", "NFD")]
        config["normalizer"] = {"type": "Sequence", "normalizers": kept} if kept else None
    if args.drop_added == "nonspecial":
        dropped = {a["id"] for a in config["added_tokens"] if not a["special"]}
        if not dropped:
            raise SystemExit("no added token that is not special")
        config["added_tokens"] = [a for a in config["added_tokens"] if a["special"]]
    if args.added_unmergeable:
        # (the merges only: tokenizers gives an added token missing from the model's vocabulary a new id)
        kept_apart = {a["content"] for a in config["added_tokens"] if not a["special"]}
        model = config["model"]
        model["merges"] = [m for m in model["merges"]
                           if "".join(m.split(" ", 1) if isinstance(m, str) else m) not in kept_apart]
    if args.prepend_scheme:
        spaces = [c for c in _components(config.get("pre_tokenizer"), "pretokenizers") if c.get("type") == "Metaspace"]
        if not spaces:
            raise SystemExit("the tokenizer.json has no Metaspace pre-tokenizer")
        for step in spaces:
            step["prepend_scheme"] = args.prepend_scheme
    if args.specials_of == "llama-3.1":
        names = ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>",
                 "<|reserved_special_token_1|>", "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>",
                 "<|start_header_id|>", "<|end_header_id|>", "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"]
        names += [f"<|reserved_special_token_{3 + i}|>" for i in range(256 - len(names))]
        for added in config["added_tokens"]:
            if 128000 <= added["id"] < 128256:
                added["content"] = names[added["id"] - 128000]
    return config


def first_listed_encoder(tok: Tokenizer, config: dict):
    """Added tokens cut out by one alternation in id order (Python's ``re`` tries alternatives in
    order), each part between them encoded alone, added tokens and all, by ``tok``."""
    listed = sorted(config["added_tokens"], key=lambda a: a["id"])
    by_content: dict[str, int] = {}
    for a in listed:
        by_content.setdefault(a["content"], a["id"])

    def alternation(parse_special: bool) -> re.Pattern | None:
        matched = [a["content"] for a in listed if a["content"] and (parse_special or not a["special"])]
        return re.compile("|".join(map(re.escape, matched))) if matched else None
    patterns = {parse_special: alternation(parse_special) for parse_special in (False, True)}  # (made once)

    def encode(text: str, parse_special: bool) -> list[int]:
        pattern = patterns[parse_special]
        ids: list[int] = []
        at = 0
        for m in pattern.finditer(text) if pattern else ():
            if m.start() > at:
                ids += tok.encode(text[at:m.start()], add_special_tokens=False).ids
            ids.append(by_content[m.group()])
            at = m.end()
        if at < len(text):
            ids += tok.encode(text[at:], add_special_tokens=False).ids
        return ids
    return encode


# What every JavaScript object inherits (Object.prototype's own properties): what `name in {}` is true for.
OBJECT_PROTOTYPE = {"constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable", "toLocaleString",
                    "toString", "valueOf", "__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__",
                    "__lookupSetter__"}


def inherited_member(tok: Tokenizer, config: dict, text: str) -> str | None:
    """The first pre-token of ``text`` that a plain JavaScript object of the vocabulary would find
    as an inherited member: named like one, and no key of its own (no token)."""
    vocab = config["model"]["vocab"]
    normalized = tok.normalizer.normalize_str(text) if tok.normalizer else text
    pieces = tok.pre_tokenizer.pre_tokenize_str(normalized) if tok.pre_tokenizer else [(normalized, None)]
    return next((piece for piece, _ in pieces if piece in OBJECT_PROTOTYPE and piece not in vocab), None)


def gpt2_bytes() -> dict[str, int]:
    """GPT-2's byte-to-unicode table, reversed: the byte each printable character stands for."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {chr(b): b for b in printable}
    extra = 0
    for b in range(256):
        if b not in printable:
            table[chr(256 + extra)] = b
            extra += 1
    return table


def rank_encoder(config: dict, keys: str):
    """tiktoken's byte-pair merge of one byte-level piece (the whole piece looked up first, then
    the adjacent pair whose join ranks lowest, leftmost first), ranks and ids read by the token's
    spelling (``keys``: "exact"), by its packed key ("packed") or from ai-tokenizer's two tables
    ("decoded")."""
    vocab = config["model"]["vocab"]
    if keys == "decoded":
        whole, rank = decoded_tables(vocab)
    else:
        def key(spelled: str):
            if keys == "exact":
                return spelled
            cut = len(spelled) - len(spelled) % 6  # one character of a byte-level spelling is one byte
            return spelled[:cut], spelled[cut:].rstrip("\u0100")  # (U+0100 spells byte 0)

        ranks: dict = {}
        for token, token_id in sorted(vocab.items(), key=lambda item: item[1]):
            ranks[key(token)] = token_id  # in rank order: a later token takes a key over

        def whole(spelled: str) -> int | None:
            return ranks.get(key(spelled))
        rank = whole

    def encode(piece: str) -> list[int]:
        found = whole(piece)
        if found is not None:
            return [found]
        parts = list(piece)
        while len(parts) > 1:
            joins = [(r, i) for i, (a, b) in enumerate(zip(parts, parts[1:])) if (r := rank(a + b)) is not None]
            if not joins:
                break
            i = min(joins)[1]
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        return [r for r in map(rank, parts) if r is not None]
    return encode


def text_decoder(data: bytes) -> str | None:
    """JavaScript's ``new TextDecoder("utf-8").decode`` of bytes that are UTF-8 (None where they are
    not): a leading BOM is dropped (its ``ignoreBOM`` is false by default)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text[1:] if text.startswith("\ufeff") else text


def decoded_tables(vocab: dict[str, int]):
    """ai-tokenizer 1.0.6's lookups (dist/index.js ``bytePairMerge``'s ``getRankForSlice``, the
    generated ``stringEncoder`` and ``binaryEncoder``), on the bytes each spelling stands for."""
    table = gpt2_bytes()

    def raw(spelled: str) -> bytes:
        return bytes(table[c] for c in spelled)

    by_text: dict[str, int] = {}
    by_bytes: dict[bytes, int] = {}
    for token, token_id in vocab.items():
        data = raw(token)
        text = text_decoder(data)
        if text is not None and text.encode("utf-8") == data:
            by_text[text] = token_id
        else:
            by_bytes[data] = token_id

    def whole(spelled: str) -> int | None:
        # The piece's own text (encodeOrdinaryInto's stringRankEncoder[piece]): a leading BOM stays,
        # so a token that starts with one, in the byte table, is never found whole.
        return by_text.get(raw(spelled).decode("utf-8", "surrogateescape"))

    def rank(spelled: str) -> int | None:
        data = raw(spelled)
        text = text_decoder(data)
        found = by_text.get(text) if text is not None else None
        return found if found is not None else by_bytes.get(data)
    return whole, rank


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tokenizer_json")
    parser.add_argument("--regex", action="append", default=[])
    parser.add_argument("--space-class", choices=tuple(SPACE_CLASSES))
    parser.add_argument("--gpt2-split", action="store_true")
    parser.add_argument("--no-pre-tokenizer", action="store_true")
    parser.add_argument("--model", action="append", default=[])
    parser.add_argument("--merges-by-id", action="store_true")
    parser.add_argument("--drop-normalizer", action="append", default=[])
    parser.add_argument("--drop-added", choices=("nonspecial",))
    parser.add_argument("--unicode", choices=("NFC", "NFD", "NFKC"))
    parser.add_argument("--first-of-nfd", action="store_true")
    parser.add_argument("--parse-special", choices=("asked", "always"), default="asked")
    parser.add_argument("--specials-of", choices=("llama-3.1",))
    parser.add_argument("--prepend-scheme", choices=("always", "first", "never"))
    parser.add_argument("--rank-bpe", action="store_true")
    parser.add_argument("--packed-keys", action="store_true")
    parser.add_argument("--decoded-keys", action="store_true")
    parser.add_argument("--added-unmergeable", action="store_true")
    parser.add_argument("--added-first-listed", action="store_true")
    parser.add_argument("--plain-object", action="store_true")
    parser.add_argument("--truncation", type=int)
    args = parser.parse_args()
    with open(args.tokenizer_json, encoding="utf-8") as f:
        config = planted(json.load(f), args)
    tok = Tokenizer.from_str(json.dumps(config))
    keys = "packed" if args.packed_keys else "decoded" if args.decoded_keys else "exact"
    by_rank = rank_encoder(config, keys) if args.rank_bpe else None
    first_listed = first_listed_encoder(tok, config) if args.added_first_listed else None
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("op") == "encode":
            text = unicodedata.normalize(args.unicode, req["text"]) if args.unicode else req["text"]
            if args.first_of_nfd:
                text = "".join(unicodedata.normalize("NFD", ch)[0] for ch in text)
            # tokenizers matches special added tokens in the text unless told to encode them as text.
            tok.encode_special_tokens = not (req.get("parse_special", False) or args.parse_special == "always")
            if first_listed is not None and req.get("add_special", False):
                reply = {"id": req["id"], "error": "--added-first-listed adds no BOS/EOS (run without add_special)"}
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()
                continue
            inherited = inherited_member(tok, config, text) if args.plain_object else None
            if inherited is not None:
                reply = {"id": req["id"], "error": f"TypeError: ranks[{inherited!r}] is a function, not a token id"}
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()
                continue
            if first_listed is not None:
                ids = first_listed(text, req.get("parse_special", False) or args.parse_special == "always")
            elif by_rank is None:
                ids = tok.encode(text, add_special_tokens=req.get("add_special", False)).ids
            else:  # (texts with no special token: the split, then each piece merged by rank)
                normalized = tok.normalizer.normalize_str(text) if tok.normalizer else text
                ids = [i for piece, _ in tok.pre_tokenizer.pre_tokenize_str(normalized) for i in by_rank(piece)]
            reply = {"id": req["id"], "ids": ids}
        else:
            reply = {"id": req["id"], "error": f"op {req.get('op')!r} not supported"}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
