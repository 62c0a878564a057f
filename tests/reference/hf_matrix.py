"""The tokenizer.json variant matrix: every component option of Hugging Face ``tokenizers`` over
real vocabularies, each variant judged against ``tokenizers`` itself.

A *variant* is one real tokenizer.json (a zoo model's, or one built from a zoo vocabulary) with
one option changed, or a few changed together the way real models combine them. Each is built
with the tokenizers Python API (or by editing the file's JSON where the API has no setter) and
written with ``Tokenizer.save``, so every file is one tokenizers itself wrote and accepts. Then
both ``tokenizers`` (reading the saved file) and tokparity's ``ref`` backend (reading the same
file, in process) encode the same texts, and the ids are compared.

    python tests/reference/hf_matrix.py                     # every variant, one line each, a total
    python tests/reference/hf_matrix.py --only unigram      # the variants whose name holds "unigram"
    python tests/reference/hf_matrix.py --out /tmp/matrix   # keep the variant files there

Exit status 1 when any variant fails (a mismatch, or the reference refusing the file).

Bases (all real vocabularies; none is made up):

* ``bpe-llama3``, ``bpe-qwen3``, ``bpe-gemma3``: the zoo's large tokenizer.json files (byte-level,
  and SentencePiece-style with byte fallback), a few seconds each to load: one variant each (the
  files as they are are tests/reference/test_vs_hf.py's);
* ``bpe-gpt2``: GPT-2's vocabulary and merges from its zoo GGUF, as GPT-2's tokenizer.json has them;
  ``bpe-gpt2-8k``: the same with its first 8,000 merges (a real vocabulary too, see ``_gpt2``),
  where most byte-level variants run;
* ``bpe-llama2`` (lenml-llama2), ``bpe-botchan`` (tokparity's derived tokenizer.json):
  SentencePiece-style BPE; botchan's 1,000 pieces are the cheap base most options run on (the
  pre-tokenizers through ``_cut_probe``);
* ``unigram-botchan``, ``unigram-kyoto``: the derived tokenizer.json of the SentencePiece unigram
  models (``tokparity zoo path MODEL``);
* ``wordpiece-bge``, ``wordlevel-bge``: bert-bge's vocabulary, read from its GGUF (llama.cpp's
  phantom-space spelling undone: ``▁word`` -> ``word``, ``piece`` -> ``##piece``), in BERT's own
  pipeline; ``wordlevel-botchan``: the botchan unigram's pieces as a word list.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import islice
from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, processors
from tokenizers import pre_tokenizers as pre

from tokparity.corpus import load_corpus
from tokparity.fuzz.seams import seam_texts
from tokparity.zoo import resolve_model

Edit = Callable[[Tokenizer], Tokenizer]
Mode = tuple[bool, bool]  # (add_special, parse_special)

# -- bases: real vocabularies as tokenizer.json text ----------------------------------------------


def _zoo_json(model: str) -> str:
    return Path(resolve_model(model).files["tokenizer_json"]).read_text("utf-8")


def _gguf_vocab(model: str):
    from tokparity.vocab.gguf import load_gguf
    return load_gguf(resolve_model(model).files["gguf"])


def _gpt2(merges: int | None = None) -> str:
    """GPT-2's tokenizer.json, from the zoo GGUF's vocabulary and merges (the same lists). With
    ``merges``, only the first ones: GPT-2's ids are 256 bytes then one token per merge in merge
    order, and a BPE's first k merges are the BPE its training would have stopped at after k, so
    this is a real vocabulary too, cheaper to load (most byte-level variants run on it)."""
    v = _gguf_vocab("gpt-2")
    kept = v.merges if merges is None else v.merges[:merges]
    tokens = v.tokens[:-1] if merges is None else v.tokens[:256 + merges]  # the last is <|endoftext|>
    assert v.tokens[-1] == "<|endoftext|>" and all("".join(m) == tokens[256 + i] for i, m in enumerate(kept[:50]))
    tok = Tokenizer(models.BPE({t: i for i, t in enumerate(tokens)}, list(kept)))
    tok.pre_tokenizer = pre.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens([AddedToken("<|endoftext|>", special=True, normalized=False)])
    return tok.to_str()


@lru_cache(maxsize=1)
def _bert_words() -> dict[str, int]:
    """bert-bge's WordPiece vocabulary as BERT's vocab.txt spells it. llama.cpp's converter writes
    word-initial pieces as ``▁word`` and continuations bare; BERT writes ``word`` and ``##word``."""
    out: dict[str, int] = {}
    for i, t in enumerate(_gguf_vocab("bert-bge").tokens):
        if t.startswith("[") and t.endswith("]"):
            word = t
        elif t.startswith("\u2581"):
            word = t[1:]
        else:
            word = "##" + t
        out.setdefault(word, i)
    return out


def _bert_pipeline(tok: Tokenizer) -> str:
    """BERT's (uncased) tokenizer.json around a model over bert-bge's vocabulary."""
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None,
                                                lowercase=True)
    tok.pre_tokenizer = pre.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", 101), ("[SEP]", 102)])
    tok.decoder = decoders.WordPiece()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")])
    return tok.to_str()


def _bge_wordpiece() -> str:
    return _bert_pipeline(Tokenizer(models.WordPiece(_bert_words(), unk_token="[UNK]", max_input_chars_per_word=100)))


def _bge_wordlevel() -> str:
    return _bert_pipeline(Tokenizer(models.WordLevel(_bert_words(), unk_token="[UNK]")))


def _botchan_wordlevel() -> str:
    """The botchan unigram's pieces as a word list, split on whitespace with Metaspace's ``▁``."""
    pieces = json.loads(_zoo_json("botchan-unigram"))["model"]["vocab"]
    tok = Tokenizer(models.WordLevel({p: i for i, (p, _) in enumerate(pieces)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ("<s>", "</s>")])
    return tok.to_str()


BASES: dict[str, Callable[[], str]] = {
    "bpe-llama3": lambda: _zoo_json("llama-bpe"),
    "bpe-qwen3": lambda: _zoo_json("qwen3"),
    "bpe-gpt2": _gpt2,
    "bpe-gpt2-8k": lambda: _gpt2(8000),
    "bpe-llama2": lambda: _zoo_json("lenml-llama2"),
    "bpe-gemma3": lambda: _zoo_json("gemma-3"),
    "bpe-botchan": lambda: _zoo_json("botchan-bpe"),
    "unigram-botchan": lambda: _zoo_json("botchan-unigram"),
    "unigram-kyoto": lambda: _zoo_json("kyoto-ja-unigram"),
    "wordpiece-bge": _bge_wordpiece,
    "wordlevel-bge": _bge_wordlevel,
    "wordlevel-botchan": _botchan_wordlevel,
}

# (first, last) special tokens of each base, for the post-processor variants: (text, id).
SPECIALS: dict[str, tuple[tuple[str, int], tuple[str, int]]] = {
    "bpe-llama3": (("<|begin_of_text|>", 128000), ("<|end_of_text|>", 128001)),
    "bpe-qwen3": (("<|im_start|>", 151644), ("<|endoftext|>", 151643)),
    "bpe-gpt2": (("<|endoftext|>", 50256), ("<|endoftext|>", 50256)),
    "bpe-gpt2-8k": (("<|endoftext|>", 8256), ("<|endoftext|>", 8256)),
    "bpe-llama2": (("<s>", 1), ("</s>", 2)),
    "bpe-gemma3": (("<bos>", 2), ("<eos>", 1)),
    "bpe-botchan": (("<s>", 1), ("</s>", 2)),
    "unigram-botchan": (("<s>", 1), ("</s>", 2)),
    "unigram-kyoto": (("<s>", 1), ("</s>", 2)),
    "wordpiece-bge": (("[CLS]", 101), ("[SEP]", 102)),
    "wordlevel-bge": (("[CLS]", 101), ("[SEP]", 102)),
    "wordlevel-botchan": (("<s>", 1), ("</s>", 2)),
}


@cache
def base_json(base: str) -> str:
    """A base's tokenizer.json text, built or read once per process (the large ones take a second)."""
    return BASES[base]()


# -- edits: one option changed ----------------------------------------------------------------------


def set_normalizer(n: normalizers.Normalizer | None) -> Edit:
    def edit(tok: Tokenizer) -> Tokenizer:
        tok.normalizer = n
        return tok
    return edit


def set_pre(p: pre.PreTokenizer | None) -> Edit:
    def edit(tok: Tokenizer) -> Tokenizer:
        tok.pre_tokenizer = p
        return tok
    return edit


def set_post(p: processors.PostProcessor | None) -> Edit:
    def edit(tok: Tokenizer) -> Tokenizer:
        tok.post_processor = p
        return tok
    return edit


@dataclass(frozen=True)
class JsonEdit:
    """An edit of the base's JSON, made before tokenizers loads it (one load per variant, not two)."""

    apply: Callable[[dict], None]


def set_model(**fields) -> JsonEdit:
    """Model fields changed in the JSON: the Python API has no setter for some (Unigram's
    ``byte_fallback``), and a setter on a live BPE keeps its cache of already-encoded words."""
    return JsonEdit(lambda d: d["model"].update(fields))


def _add_byte_pieces(d: dict) -> None:
    d["model"]["vocab"] += [[f"<0x{b:02X}>", 0.0] for b in range(256)]
    d["model"]["byte_fallback"] = True


# The 256 ``<0xXX>`` pieces a SentencePiece model trained with byte_fallback has, appended to a real
# unigram vocabulary (score 0, as SentencePiece gives them), with byte_fallback on.
add_byte_pieces = JsonEdit(_add_byte_pieces)


def add_tokens(*tokens: AddedToken) -> Edit:
    def edit(tok: Tokenizer) -> Tokenizer:
        tok.add_tokens(list(tokens))
        return tok
    return edit


def chain(*edits: Edit) -> Edit:
    def edit(tok: Tokenizer) -> Tokenizer:
        for e in edits:
            tok = e(tok)
        return tok
    return edit


AnyEdit = Edit | JsonEdit


def sp_normalizer(first: normalizers.Normalizer) -> normalizers.Normalizer:
    """Llama-2's normalizer (prepend ``▁``, spaces as ``▁``) after ``first``."""
    return normalizers.Sequence([first, normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])


def spm_normalizer(first: normalizers.Normalizer | None) -> normalizers.Normalizer:
    """The derived unigram files' normalizer with ``first`` in place of their Precompiled charsmap."""
    steps = [normalizers.Strip(left=False, right=True), normalizers.Replace(Regex(" {2,}"), "\u2581")]
    return normalizers.Sequence(([first] if first is not None else []) + steps)


def template(base: str, single: str) -> processors.TemplateProcessing:
    """``single`` with BOS/EOS standing for the base's own first and last special tokens."""
    (bos, bos_id), (eos, eos_id) = SPECIALS[base]
    specials = dict([(bos, bos_id), (eos, eos_id)])
    return processors.TemplateProcessing(single=single.replace("BOS", bos).replace("EOS", eos),
                                         special_tokens=list(specials.items()))


# -- texts -------------------------------------------------------------------------------------------

NORMALIZER_TEXTS = (
    "Crème brûlée à la CAFÉ", "ÅÄÖ naïve Ångström", "ﬁ ½ ｱ Ａ ① ㍻ ™", "e\u0301 a\u0308 n\u0303", "İstanbul ß ẞ ǅ ΣΑΣ",
    "  padded both  ", "\ttab and newline\n", "日本語のテキスト、東京都。", "Hello World HELLO", "x\u3000y\u00a0z",
    "\x00ctrl\x1f\x7fchars\u200b", "Ⅻ ℌ ㏒ ﹏", "Ǆemal ǉubljana", "한국어 텍스트", "\ufeffbom",
)
PRE_TOKENIZER_TEXTS = (
    "Hello, world! (yes) -- ok...", "12345 3.14159 1,000,000 x2y", "a  b   c    d", "don't I'LL we'Re",
    "abcабв日本123αβγ", "a\tb\nc\r\nd", "tokenizer-json_variant.matrix", "    def f(x):\n        return x\n",
    "¿Qué? ¡Sí! «oui» „ja“", "emoji 🦙🤗 and 👨‍👩‍👧", "x\u3000y\u00a0z\u2009w", "99 bottles, 100% ok; #1 @home",
    "ไทยภาษา ภาษาไทย", "مرحبا بالعالم 123",
)
MODEL_TEXTS = (
    "🦙🦙 llama \ue000 private", "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "unbelievably unhappiness", "a b c d e f", "Ω≈ç√∫ ⌘ ☃", "日本語 中文 한국어", "ab" * 30, "x",
    "The quick brown fox jumps over the lazy dog.", "ﬀ𝔘𝔫𝔦 \U0001f9ec",
)
POST_TEXTS = ("", " ", "Hello world", "a", "two words here", "日本", "🦙")


def added_token_texts(words: Iterable[str]) -> tuple[str, ...]:
    """Each added token next to spaces, letters, digits, accents, CJK, newlines and itself."""
    out: list[str] = []
    for w in words:
        out += [w, f" {w} ", f"a{w}b", f"a {w}b", f"a{w} b", f"{w}{w}", f"{w}  {w}", f"1{w}2", f"é{w}à",
                f"日本{w}語", f"\n{w}\n", w.upper(), f"{w}s {w}. x{w}x", f"  {w}", f"{w}  "]
    return tuple(out)


@lru_cache(maxsize=1)
def pool() -> tuple[str, ...]:
    """The shared texts: samples of the built-in corpora and of the unicode seams (deterministic)."""
    texts: list[str] = []
    for name, step in (("edge", 9), ("multilingual", 5), ("emoji", 70)):
        texts += [c.text for c in load_corpus(name)][::step]
    texts += [t for t, _ in islice(seam_texts(), 0, 4000, 25)]
    return tuple(dict.fromkeys(texts))


CORE = 24  # texts of the pool every variant encodes
ROTATING = 16  # more of the pool, a different window for each variant


def texts_for(name: str, own: Iterable[str]) -> list[str]:
    """The core of the pool, a window of the rest chosen by the variant's name, and the variant's own texts."""
    shared = pool()
    core, rest = shared[:: max(1, len(shared) // CORE)][:CORE], shared
    start = zlib.crc32(name.encode()) % len(rest)
    window = [rest[(start + i * 7) % len(rest)] for i in range(ROTATING)]
    return list(dict.fromkeys([*core, *window, *own]))


# -- variants ----------------------------------------------------------------------------------------

PLAIN: tuple[Mode, ...] = ((False, False), (True, True))
POST: tuple[Mode, ...] = ((True, False), (True, True), (False, False))
EVERY_MODE: tuple[Mode, ...] = ((False, False), (False, True), (True, False), (True, True))


@dataclass(frozen=True)
class Variant:
    name: str  # "unigram-botchan/metaspace-first-nosplit": base / what changed
    base: str
    edits: tuple[AnyEdit, ...] = ()  # JSON edits first, then the Python API's
    own_texts: tuple[str, ...] = ()
    modes: tuple[Mode, ...] = PLAIN

    def build(self) -> Tokenizer:
        text = base_json(self.base)
        json_edits = [e for e in self.edits if isinstance(e, JsonEdit)]
        if json_edits:
            d = json.loads(text)
            for e in json_edits:
                e.apply(d)
            text = json.dumps(d)
        tok = Tokenizer.from_str(text)
        for e in self.edits:
            if not isinstance(e, JsonEdit):
                tok = e(tok)
        return tok

    @property
    def texts(self) -> list[str]:
        return texts_for(self.name, self.own_texts)


def _v(base: str, what: str, edit: AnyEdit | tuple[AnyEdit, ...] | None, own: Iterable[str] = (),
       modes: tuple[Mode, ...] = PLAIN) -> Variant:
    edits = edit if isinstance(edit, tuple) else () if edit is None else (edit,)
    return Variant(f"{base}/{what}", base, edits, tuple(own), modes)


LARGE = ("bpe-llama3", "bpe-qwen3", "bpe-gemma3")  # a few seconds a variant: one variant each


def _bases() -> list[Variant]:
    """Each base as it is (the large ones' files as-is are tests/reference/test_vs_hf.py's)."""
    return [_v(base, "as-is", None, MODEL_TEXTS[:4] + POST_TEXTS[:3], EVERY_MODE) for base in BASES
            if base not in LARGE]


def _normalizers() -> list[Variant]:
    N, T = normalizers, NORMALIZER_TEXTS
    one = {"nfc": N.NFC(), "nfd": N.NFD(), "nfkc": N.NFKC(), "nfkd": N.NFKD(), "lowercase": N.Lowercase(),
           "strip-left": N.Strip(left=True, right=False), "strip-right": N.Strip(left=False, right=True),
           "strip-both": N.Strip(), "nfd-stripaccents": N.Sequence([N.NFD(), N.StripAccents()]),
           "stripaccents-alone": N.StripAccents(), "replace-string": N.Replace("é", "e"),
           "replace-regex": N.Replace(Regex(r"\d+"), "0"), "prepend": N.Prepend("x"), "nmt": N.Nmt(),
           "replace-string-dot": N.Replace(".", " ")}
    # Every one on the small SentencePiece BPE (its charsmap replaced), the telling ones on Llama-2's
    # byte-fallback BPE (every character encodable: no difference hides behind <unk>) and on the
    # Japanese unigram.
    out = [_v("bpe-botchan", f"normalizer-{k}", set_normalizer(spm_normalizer(n)), T) for k, n in one.items()]
    out += [_v("bpe-llama2", f"normalizer-{k}", set_normalizer(sp_normalizer(one[k])), T)
            for k in ("lowercase", "nfd-stripaccents")]
    out += [_v("unigram-kyoto", f"normalizer-{k}", set_normalizer(spm_normalizer(one[k])), T)
            for k in ("nfkc", "nfd", "lowercase", "nfd-stripaccents", "replace-regex")]
    out.append(_v("unigram-kyoto", "normalizer-none", set_normalizer(None), T))
    # Precompiled: botchan's own charsmap, alone and in front of Llama-2's normalizer.
    charsmap = json.loads(base_json("unigram-botchan"))["normalizer"]["normalizers"][0]["precompiled_charsmap"]
    out.append(_v("unigram-botchan", "normalizer-precompiled-only", set_normalizer(
        normalizers.Sequence([normalizers.Precompiled(base64.b64decode(charsmap))])), T))
    out.append(_v("bpe-llama2", "normalizer-precompiled", set_normalizer(sp_normalizer(
        normalizers.Precompiled(base64.b64decode(charsmap)))), T))
    for clean, chinese, accents, lower in ((True, True, None, True), (False, True, None, True),
                                           (True, False, None, True), (True, True, True, True),
                                           (True, True, False, True), (True, True, None, False),
                                           (True, True, True, False), (False, False, False, False)):
        what = f"bert-clean{int(clean)}-chinese{int(chinese)}-accents{_tri(accents)}-lower{int(lower)}"
        out.append(_v("wordpiece-bge", f"normalizer-{what}", set_normalizer(N.BertNormalizer(
            clean_text=clean, handle_chinese_chars=chinese, strip_accents=accents, lowercase=lower)), T))
    out.append(_v("wordpiece-bge", "normalizer-sequence-nfd-lowercase-stripaccents",
                  set_normalizer(N.Sequence([N.NFD(), N.Lowercase(), N.StripAccents()])), T))
    # The byte-level mapping as a normalizer, the pieces cut before each mapped space (Ġ).
    out.append(_v("bpe-gpt2-8k", "normalizer-bytelevel-split-before-space", (
        set_normalizer(N.ByteLevel()), set_pre(pre.Split("\u0120", behavior="merged_with_next"))), T))
    out.append(_v("bpe-gpt2-8k", "normalizer-nfkc-lowercase", set_normalizer(N.Sequence([N.NFKC(), N.Lowercase()])), T))
    return out


def _tri(x: bool | None) -> str:
    return "default" if x is None else str(int(x))


BEHAVIOURS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")


def _cut_probe(p: pre.PreTokenizer | None) -> Edit:
    """``p`` on the small SentencePiece BPE with no normalizer, then a Metaspace that only spells
    spaces as ``▁`` (no prefix, no split of its own): the ids show where ``p`` cut."""
    steps = ([p] if p is not None else []) + [pre.Metaspace(prepend_scheme="never", split=False)]
    return chain(set_normalizer(None), set_pre(pre.Sequence(steps)))


def _pre_tokenizers() -> list[Variant]:
    T = PRE_TOKENIZER_TEXTS
    out = []
    for prefix in (False, True):
        for use_regex in (False, True):
            out.append(_v("bpe-gpt2", f"bytelevel-prefix{int(prefix)}-regex{int(use_regex)}",
                          set_pre(pre.ByteLevel(add_prefix_space=prefix, use_regex=use_regex)), T))
    out.append(_v("bpe-gpt2-8k", "split-llama3-bytelevel-prefix1", set_pre(pre.Sequence([
        pre.Split(Regex(_llama3_regex()), behavior="isolated"), pre.ByteLevel(add_prefix_space=True, use_regex=False)])),
        T))
    for base in ("unigram-botchan", "bpe-botchan"):
        for scheme in ("always", "first", "never"):
            for split in (True, False):
                out.append(_v(base, f"metaspace-{scheme}-{'split' if split else 'nosplit'}",
                              set_pre(pre.Metaspace(replacement="\u2581", prepend_scheme=scheme, split=split)), T))
    out.append(_v("unigram-kyoto", "metaspace-first-nosplit",
                  set_pre(pre.Metaspace(prepend_scheme="first", split=False)), T))
    out.append(_v("unigram-botchan", "metaspace-replacement-underscore",
                  set_pre(pre.Metaspace(replacement="_", prepend_scheme="always")), T))
    out.append(_v("bpe-botchan", "pre-none", _cut_probe(None), T))
    for pattern_kind, pattern in (("string", " "), ("regex", Regex(r"[\p{P}\s]+"))):
        for behaviour in BEHAVIOURS:
            for invert in (False, True):
                out.append(_v("bpe-botchan", f"split-{pattern_kind}-{behaviour}{'-invert' if invert else ''}",
                              _cut_probe(pre.Split(pattern, behavior=behaviour, invert=invert)), T))
    simple: dict[str, pre.PreTokenizer] = {
        "whitespace": pre.Whitespace(), "whitespacesplit": pre.WhitespaceSplit(),
        "digits": pre.Digits(individual_digits=False), "digits-individual": pre.Digits(individual_digits=True),
        "bert": pre.BertPreTokenizer(), "unicodescripts": pre.UnicodeScripts(),
        "chardelimiter-space": pre.CharDelimiterSplit(" "), "chardelimiter-dash": pre.CharDelimiterSplit("-"),
        "fixedlength-5": pre.FixedLength(length=5), "fixedlength-1": pre.FixedLength(length=1),
        **{f"punctuation-{b}": pre.Punctuation(behavior=b) for b in BEHAVIOURS},
    }
    out += [_v("bpe-botchan", k, _cut_probe(p), T) for k, p in simple.items()]
    # A string pattern is literal: "." cuts at dots only (as a regex it would cut everywhere).
    out.append(_v("bpe-botchan", "split-string-dot-isolated", _cut_probe(pre.Split(".", behavior="isolated")), T))
    # The same cuts where every byte is a token: byte-level BPE after the pre-tokenizer.
    for k in ("split-regex-isolated", "split-regex-contiguous-invert", "digits-individual", "punctuation-isolated",
              "unicodescripts", "whitespace", "fixedlength-5", "bert"):
        p = simple.get(k) or pre.Split(Regex(r"[\p{P}\s]+"), behavior=k.split("-")[2], invert=k.endswith("invert"))
        out.append(_v("bpe-gpt2-8k", k, set_pre(pre.Sequence([p, pre.ByteLevel(add_prefix_space=False,
                                                                                 use_regex=False)])), T))
    for k in ("whitespace", "whitespacesplit", "digits-individual", "unicodescripts", "punctuation-isolated",
              "fixedlength-5"):
        out.append(_v("wordpiece-bge", f"pre-{k}", set_pre(simple[k]), T))
    out.append(_v("wordpiece-bge", "pre-sequence-whitespacesplit-punctuation-digits", set_pre(pre.Sequence([
        pre.WhitespaceSplit(), pre.Punctuation(), pre.Digits(individual_digits=True)])), T))
    out.append(_v("wordpiece-bge", "pre-none", set_pre(None), T))
    out.append(_v("unigram-kyoto", "pre-sequence-unicodescripts-metaspace", set_pre(pre.Sequence([
        pre.UnicodeScripts(), pre.Metaspace(prepend_scheme="always")])), T))
    out.append(_v("wordlevel-botchan", "pre-sequence-digits-metaspace", set_pre(pre.Sequence([
        pre.Digits(individual_digits=True), pre.Metaspace()])), T))
    return out


def _llama3_regex() -> str:
    path = resolve_model("llama-bpe").files["tokenizer_json"]
    return json.loads(Path(path).read_text("utf-8"))["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"]


def _respell_with_prefix(d: dict) -> None:
    """botchan's BPE spelled with ``continuing_subword_prefix="##"``: a piece that starts a word
    keeps its ``▁``, every other piece gets ``##``, and each merge ``a b`` becomes ``a ##b``, so the
    merged piece is ``a`` + ``b``. (Setting the prefix on a vocabulary spelled without it makes
    tokenizers panic while loading: it cuts the prefix's length off the right side of every merge.)"""
    specials = {t["content"] for t in d["added_tokens"]} | {d["model"]["unk_token"]}

    def spelled(piece: str) -> str:
        return piece if piece.startswith("\u2581") or piece in specials else "##" + piece

    d["model"]["vocab"] = {spelled(p): i for p, i in d["model"]["vocab"].items()}
    merges = [m.split(" ") if isinstance(m, str) else m for m in d["model"]["merges"]]
    d["model"]["merges"] = [[spelled(a), "##" + b] for a, b in merges]
    d["model"]["continuing_subword_prefix"] = "##"


respell_with_prefix = JsonEdit(_respell_with_prefix)


def _models() -> list[Variant]:
    T = MODEL_TEXTS
    out = [
        _v("bpe-llama2", "bpe-byte-fallback-off", set_model(byte_fallback=False), T),
        _v("bpe-llama2", "bpe-ignore-merges", set_model(ignore_merges=True), T),
        _v("bpe-botchan", "bpe-byte-fallback-on-no-byte-pieces", set_model(byte_fallback=True), T),
        _v("bpe-botchan", "bpe-fuse-unk-off", set_model(fuse_unk=False), T),
        _v("bpe-botchan", "bpe-unk-none", set_model(unk_token=None), T),
        _v("bpe-botchan", "bpe-ignore-merges", set_model(ignore_merges=True), T),
        _v("bpe-botchan", "bpe-continuing-subword-prefix", respell_with_prefix, T),
        _v("bpe-botchan", "bpe-end-of-word-suffix", set_model(end_of_word_suffix="</w>"), T),
        _v("bpe-gpt2-8k", "bpe-ignore-merges", set_model(ignore_merges=True), T),
        _v("bpe-gpt2-8k", "bpe-empty-prefix-suffix", set_model(continuing_subword_prefix="", end_of_word_suffix=""), T),
        _v("bpe-llama3", "bpe-ignore-merges-off", set_model(ignore_merges=False), T),
        _v("bpe-gemma3", "bpe-byte-fallback-off", set_model(byte_fallback=False), T),
        _v("unigram-botchan", "unigram-byte-fallback-no-byte-pieces", set_model(byte_fallback=True), T),
        _v("unigram-botchan", "unigram-byte-fallback-with-byte-pieces", add_byte_pieces, T),
        _v("unigram-kyoto", "unigram-byte-fallback-with-byte-pieces", add_byte_pieces, T),
        _v("unigram-botchan", "unigram-unk-id-none", set_model(unk_id=None), T),
        _v("unigram-kyoto", "unigram-unk-id-3", set_model(unk_id=3), T),
        _v("wordpiece-bge", "wordpiece-max-chars-8", set_model(max_input_chars_per_word=8), T),
        _v("wordpiece-bge", "wordpiece-prefix-empty", set_model(continuing_subword_prefix=""), T),
        _v("wordpiece-bge", "wordpiece-unk-unused0", set_model(unk_token="[unused0]"), T),
        _v("wordlevel-bge", "wordlevel-unk-unused0", set_model(unk_token="[unused0]"), T),
        _v("wordlevel-bge", "wordlevel-whitespace", set_pre(pre.Whitespace()), T),
    ]
    return out


TEMPLATES = (("bos", "BOS $A"), ("eos", "$A EOS"), ("bos-eos", "BOS $A EOS"), ("typed", "BOS:1 $A:1 EOS:1"),
             ("eos-eos", "$A EOS EOS"))


def _post_processors() -> list[Variant]:
    T = POST_TEXTS + PRE_TOKENIZER_TEXTS[:3]
    out = []
    for base in ("bpe-botchan", "unigram-botchan", "wordpiece-bge", "wordlevel-botchan"):
        out += [_v(base, f"post-template-{what}", set_post(template(base, single)), T, POST) for what, single in TEMPLATES]
        (bos, bos_id), (eos, eos_id) = SPECIALS[base]
        out.append(_v(base, "post-bert", set_post(processors.BertProcessing((eos, eos_id), (bos, bos_id))), T, POST))
        out.append(_v(base, "post-roberta", set_post(processors.RobertaProcessing((eos, eos_id), (bos, bos_id))), T,
                      POST))
        out.append(_v(base, "post-none", set_post(None), T, POST))
    out.append(_v("bpe-llama2", "post-template-bos-eos", set_post(template("bpe-llama2", "BOS $A EOS")), T, POST))
    out.append(_v("bpe-gpt2", "post-bytelevel", set_post(processors.ByteLevel()), T, POST))
    out.append(_v("bpe-gpt2-8k", "post-roberta", set_post(processors.RobertaProcessing(
        ("<|endoftext|>", 8256), ("<|endoftext|>", 8256))), T, POST))
    out.append(_v("bpe-gpt2-8k", "post-sequence-bytelevel-template", set_post(processors.Sequence([
        processors.ByteLevel(trim_offsets=False), template("bpe-gpt2-8k", "BOS $A EOS")])), T, POST))
    return out


ADDED_OPTIONS = {
    "plain": {}, "single-word": {"single_word": True}, "lstrip": {"lstrip": True}, "rstrip": {"rstrip": True},
    "lstrip-rstrip": {"lstrip": True, "rstrip": True}, "normalized": {"normalized": True},
    "not-normalized": {"normalized": False}, "single-word-lstrip": {"single_word": True, "lstrip": True},
}


def _added_tokens() -> list[Variant]:
    out = []
    words = ("<tool>", "lamp")
    texts = added_token_texts(words)
    # Every option on the small bases of three models; the telling ones on GPT-2 (byte-level) and
    # Llama-2 (byte fallback, a normalizer that prepends: where lstrip and rstrip meet ``▁``).
    telling = {"bpe-gpt2-8k": ("plain", "single-word", "lstrip-rstrip", "normalized"),
               "bpe-llama2": ("plain", "lstrip-rstrip")}
    for base in ("bpe-botchan", "unigram-botchan", "wordpiece-bge", "bpe-llama2", "bpe-gpt2-8k"):
        for special in (False, True):
            for what, opts in ADDED_OPTIONS.items():
                if base in telling and what not in telling[base]:
                    continue
                tokens = [AddedToken(w, special=special, **opts) for w in words]
                out.append(_v(base, f"added-{'special' if special else 'normal'}-{what}", add_tokens(*tokens),
                              texts, EVERY_MODE))
    # An added token with a space inside, and one the normalizer changes (matched after normalizing).
    out.append(_v("bpe-gpt2-8k", "added-normal-with-space", add_tokens(AddedToken("new york", normalized=False)),
                  added_token_texts(["new york"]), EVERY_MODE))
    out.append(_v("bpe-botchan", "added-normal-with-space-normalized", add_tokens(AddedToken("new york")),
                  added_token_texts(["new york"]), EVERY_MODE))
    out.append(_v("wordpiece-bge", "added-normal-uppercase-normalized", add_tokens(AddedToken("LAMP", normalized=True)),
                  added_token_texts(["LAMP", "lamp"]), EVERY_MODE))
    return out


def _combinations() -> list[Variant]:
    """Pipelines as real converters write them."""
    words = ("<tool>", "<mask>")
    texts = added_token_texts(words) + NORMALIZER_TEXTS[:5]
    return [
        # transformers' Llama-2 conversion (legacy=False): no normalizer, Metaspace "first", no split.
        _v("bpe-llama2", "combo-transformers-llama2", chain(
            set_normalizer(None), set_pre(pre.Metaspace(prepend_scheme="first", split=False)),
            add_tokens(AddedToken("<tool>", special=False, normalized=False))), texts, EVERY_MODE),
        _v("bpe-botchan", "combo-metaspace-first-added", chain(
            set_normalizer(None), set_pre(pre.Metaspace(prepend_scheme="first", split=False)),
            add_tokens(AddedToken("<tool>", special=True, normalized=False))), texts, EVERY_MODE),
        # XLM-R / T5 style unigram: charsmap, WhitespaceSplit + Metaspace, template, a <mask> with lstrip.
        _v("unigram-botchan", "combo-xlmr", chain(
            set_pre(pre.Sequence([pre.WhitespaceSplit(), pre.Metaspace()])),
            set_post(template("unigram-botchan", "BOS $A EOS")),
            add_tokens(AddedToken("<mask>", special=True, lstrip=True, normalized=False))), texts, EVERY_MODE),
        _v("unigram-kyoto", "combo-t5", chain(
            set_pre(pre.Sequence([pre.WhitespaceSplit(), pre.Metaspace(prepend_scheme="always")])),
            set_post(template("unigram-kyoto", "$A EOS"))), texts, EVERY_MODE),
        # BERT cased.
        _v("wordpiece-bge", "combo-bert-cased", set_normalizer(normalizers.BertNormalizer(lowercase=False)), texts),
        # RoBERTa: byte-level with prefix space, RobertaProcessing, <mask> lstrip.
        _v("bpe-gpt2", "combo-roberta", chain(
            set_pre(pre.ByteLevel(add_prefix_space=True)),
            set_post(processors.RobertaProcessing(("<|endoftext|>", 50256), ("<|endoftext|>", 50256))),
            add_tokens(AddedToken("<mask>", special=True, lstrip=True))), texts, EVERY_MODE),
        # Qwen with NFKC in place of NFC and an added token of its own.
        _v("bpe-qwen3", "combo-nfkc-added", chain(
            set_normalizer(normalizers.NFKC()), add_tokens(AddedToken("<tool>", special=False))), texts, EVERY_MODE),
    ]


@lru_cache(maxsize=1)
def variants() -> tuple[Variant, ...]:
    """Every variant, in a fixed order; names are unique."""
    out = _bases() + _normalizers() + _pre_tokenizers() + _models() + _post_processors() + _added_tokens() \
        + _combinations()
    names = [v.name for v in out]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    return tuple(out)


# -- the judge -----------------------------------------------------------------------------------------


@dataclass
class Verdict:
    name: str
    texts: int = 0
    encodes: int = 0
    mismatches: int = 0
    first: dict | None = None  # the first differing case: text, mode, tokenizers' ids, ref's ids
    error: str | None = None  # the reference refused the file (or tokenizers did)

    @property
    def ok(self) -> bool:
        return self.error is None and self.mismatches == 0

    def line(self) -> str:
        status = "ok" if self.ok else "FAIL"
        head = f"{status:4} {self.name:60} {self.texts:4} texts {self.encodes:4} encodes {self.mismatches:4} differ"
        if self.error:
            return f"{head}  error: {self.error}"
        if self.first:
            f = self.first
            return (f"{head}  first: {f['text']!r} add={f['add_special']} parse={f['parse_special']} "
                    f"tokenizers={_short(f['tokenizers'])} ref={_short(f['ref'])} "
                    f"(pieces: tokenizers={_short(f['tokenizers_pieces'])} ref={_short(f['ref_pieces'])})")
        return head

    def record(self) -> dict:
        return {"variant": self.name, "ok": self.ok, "texts": self.texts, "encodes": self.encodes,
                "mismatches": self.mismatches, "first": self.first, "error": self.error}


def _short(ids, n: int = 24) -> str:
    if isinstance(ids, str):
        return ids
    return str(ids) if len(ids) <= n else f"{ids[:n]}…(+{len(ids) - n})"


def _message(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {text[:300]}"


def write_variant(variant: Variant, out_dir: Path) -> Path:
    """The variant's tokenizer.json, written by tokenizers (``Tokenizer.save``)."""
    path = out_dir / variant.name.replace("/", "__") / "tokenizer.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    variant.build().save(str(path))
    return path


def _hf_ids(tok: Tokenizer, text: str, add: bool, parse: bool) -> list[int] | str:
    """As tokparity's hf backend drives tokenizers: parse_special off is encode_special_tokens."""
    tok.encode_special_tokens = not parse
    try:
        return tok.encode(text, add_special_tokens=add).ids
    except BaseException as e:  # tokenizers' own Exception, or a Rust panic (a BaseException)
        if isinstance(e, KeyboardInterrupt):
            raise
        return f"error: {_message(e)}"


def _pieces(tok: Tokenizer, ids: list[int] | str) -> list[str | None] | str:
    """The ids as tokenizers spells them (``None`` for an id it does not know): pieces say more than ids."""
    return ids if isinstance(ids, str) else [tok.id_to_token(i) for i in ids]


def _ref_ids(ref, text: str, add: bool, parse: bool) -> list[int] | str:
    try:
        return ref.encode(text, add, parse)
    except Exception as e:  # the reference raising for one text: a mismatch, unless tokenizers raised too
        return f"error: {_message(e)}"


def judge_file(name: str, path: Path, texts: list[str], modes: Iterable[Mode]) -> Verdict:
    """Encode ``texts`` under every mode with tokenizers and with tokparity's ref backend, both
    reading ``path``; count the cases whose ids differ (both failing counts as agreeing)."""
    from tokparity.backends.registry import make_backend

    verdict = Verdict(name, texts=len(texts))
    hf = Tokenizer.from_file(str(path))
    try:
        ref = make_backend("ref", resolve_model(str(path), fetch=False))
    except Exception as e:
        verdict.error = f"ref refuses it: {_message(e).replace(str(path), 'tokenizer.json')}"
        return verdict
    for add, parse in modes:
        for text in texts:
            verdict.encodes += 1
            expected, got = _hf_ids(hf, text, add, parse), _ref_ids(ref, text, add, parse)
            if expected == got or (isinstance(expected, str) and isinstance(got, str)):
                continue
            verdict.mismatches += 1
            if verdict.first is None:
                verdict.first = {"text": text, "add_special": add, "parse_special": parse,
                                 "tokenizers": expected, "ref": got,
                                 "tokenizers_pieces": _pieces(hf, expected), "ref_pieces": _pieces(hf, got)}
    return verdict


def judge(variant: Variant, out_dir: Path) -> Verdict:
    try:
        path = write_variant(variant, out_dir)
    except BaseException as e:  # a Rust panic is a BaseException; the matrix should hold no such variant
        if isinstance(e, KeyboardInterrupt):
            raise
        return Verdict(variant.name, error=f"tokenizers itself refuses the variant: {_message(e)}")
    return judge_file(variant.name, path, variant.texts, variant.modes)


# -- the command line -----------------------------------------------------------------------------------


@dataclass
class Totals:
    variants: int = 0
    failed: int = 0
    encodes: int = 0
    mismatches: int = 0
    by_base: dict[str, list[int]] = field(default_factory=dict)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", metavar="SUBSTRING", help="judge only the variants whose name holds SUBSTRING")
    parser.add_argument("--out", metavar="DIR", type=Path, help="write the variant files and verdicts.jsonl here "
                                                                  "(default: a temporary folder, removed at the end)")
    parser.add_argument("--list", action="store_true", help="list the variants' names and stop")
    args = parser.parse_args(argv)
    chosen = [v for v in variants() if not args.only or args.only in v.name]
    if args.list:
        print("\n".join(v.name for v in chosen))
        return 0
    if not chosen:
        print(f"hf_matrix: no variant's name holds {args.only!r} (--list shows them)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="hf-matrix-") as scratch:
        out_dir = args.out or Path(scratch)
        if args.out:
            try:
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / "verdicts.jsonl").write_text("", encoding="utf-8")
            except OSError as e:
                print(f"hf_matrix: --out {args.out}: cannot write there ({e.strerror}); name a folder", file=sys.stderr)
                return 2
        totals = Totals()
        for variant in chosen:
            verdict = judge(variant, out_dir)
            print(verdict.line(), flush=True)
            if args.out:  # the verdicts as data beside the files, one JSON object a line
                with open(out_dir / "verdicts.jsonl", "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(verdict.record(), ensure_ascii=False) + "\n")
            totals.variants += 1
            totals.failed += not verdict.ok
            totals.encodes += verdict.encodes
            totals.mismatches += verdict.mismatches
            counts = totals.by_base.setdefault(variant.base, [0, 0])
            counts[0] += 1
            counts[1] += not verdict.ok
    per_base = ", ".join(f"{base} {n - bad}/{n}" for base, (n, bad) in totals.by_base.items())
    print(f"total: {totals.variants - totals.failed}/{totals.variants} variants agree "
          f"({totals.failed} fail; {totals.mismatches} of {totals.encodes} encodes differ); by base: {per_base}")
    return 1 if totals.failed else 0


if __name__ == "__main__":
    sys.exit(main())
