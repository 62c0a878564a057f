"""Seeded text generators, in the spirit of llama.cpp's ``tests/test-tokenizer-random.py``.

Each generator is a function ``(vocab, seed) -> Iterator[Case]`` whose cases belong to the corpus
``gen:<name>``. The same vocabulary and seed give the same cases in the same order, on any
machine (every random choice comes from one ``random.Random`` seeded with a string, whose
seeding is stable across Python versions and runs).

    unicode-seams       code points regex engines and Unicode versions disagree on, in the
                        contexts a split regex tells apart (tokparity.fuzz.seams; run first: it is short)
    vocab-pieces        every piece of the vocabulary, decoded to the text it stands for
    vocab-concat        random concatenations of vocabulary pieces, whitespace between some
    special-whitespace  every added / special token text with whitespace on each side
    ascii-pairs         every pair of printable ASCII characters, with leading / trailing spaces
    codepoints          every assigned code point, one category after another in turn
    multilingual-words  random words of many scripts (from the multilingual corpus and alphabets)
    random-chars        short random strings over a mixed alphabet (ASCII, accents, CJK, emoji)
    whitespace          words between runs of spaces, tabs, newlines and Unicode spaces
    numbers             digit runs, with and without separators
    apostrophes         contractions in every case (``IT'S``, ``we'Ve``, ``don’t``)
    long-texts          200 to 3,000 characters of pieces, words and long whitespace runs

The finite generators (``vocab-pieces``, ``special-whitespace``, ``ascii-pairs``, ``codepoints``)
are shuffled by the seed, so a time-boxed run sees a fair sample of them rather than the first
ids or code points only. ``unicode-seams`` is finite too but not shuffled: it comes first and
is ordered, most often ported wrong first, the same texts for every seed and model.
``interleave`` takes one case from each generator in turn, so every kind of text is tried early.

    >>> [c.text for c in generate("numbers", seed=1, limit=3)]
    ['x5%', '840661645123', '0 824']
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from itertools import chain, islice, repeat

from tokparity.corpus import Case
from tokparity.errors import TokparityError, UnknownGenerator
from tokparity.fuzz.seams import unicode_seams
from tokparity.vocab.model import TokenType, Vocab
from tokparity.vocab.token_bytes import token_bytes

__all__ = ["GENERATORS", "SCRIPTS", "WHITESPACE", "generate", "generate_all", "interleave", "piece_texts",
           "piece_strings", "special_texts", "simplicity", "char_rank"]

# Whitespace that tokenizers treat differently: ASCII runs, CR, form feed, NBSP, ideographic and
# thin spaces, and the line / paragraph separators (PR #7530's \u2029).
WHITESPACE = (" ", "\n", "\t", "\r", "\r\n", "\x0b", "\x0c", "\xa0", "\u3000", "\u2009", "\u2028", "\u2029")
# What goes on each side of a special token (test-tokenizer-random's lstrip/rstrip cases).
SIDES = ("", " ", "  ", "\n", "\t", " \n", "\n\n")
# Between concatenated pieces: mostly nothing, so pieces run into one another as in real text.
SEPARATORS = ("", "", "", "", " ", " ", "  ", "\n", "\t", " \n ")

# Letters (and the odd mark) of some scripts, as code point ranges. Emoji are a "script" here.
SCRIPTS: dict[str, tuple[tuple[int, int], ...]] = {
    "Latn": ((0x61, 0x7A), (0x41, 0x5A), (0xC0, 0xD6), (0xD8, 0xF6), (0xF8, 0xFF), (0x100, 0x17F)),
    "Grek": ((0x391, 0x3A1), (0x3A3, 0x3A9), (0x3B1, 0x3C9), (0x386, 0x386), (0x3AC, 0x3AF)),
    "Cyrl": ((0x410, 0x44F), (0x401, 0x401), (0x451, 0x451), (0x456, 0x457)),
    "Armn": ((0x531, 0x556), (0x561, 0x586)),
    "Hebr": ((0x5D0, 0x5EA), (0x5B0, 0x5BC)),
    "Arab": ((0x621, 0x64A), (0x64B, 0x652), (0x660, 0x669)),
    "Deva": ((0x905, 0x939), (0x93E, 0x94D), (0x966, 0x96F)),
    "Beng": ((0x985, 0x9B9), (0x9BE, 0x9CD)),
    "Taml": ((0xB85, 0xBB9), (0xBBE, 0xBCD)),
    "Thai": ((0xE01, 0xE2E), (0xE30, 0xE3A), (0xE40, 0xE4E)),
    "Geor": ((0x10D0, 0x10FA),),
    "Ethi": ((0x1200, 0x1248),),
    "Khmr": ((0x1780, 0x17B3), (0x17B6, 0x17D2)),
    "Hang": ((0xAC00, 0xD7A3), (0x1100, 0x1112), (0x1161, 0x1175)),
    "Hira": ((0x3041, 0x3096),),
    "Kana": ((0x30A1, 0x30FA), (0xFF66, 0xFF9D)),
    "Hani": ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF)),
    "Emoji": ((0x1F600, 0x1F64F), (0x1F300, 0x1F5FF), (0x1F680, 0x1F6FF), (0x1F900, 0x1F9FF), (0x2600, 0x26FF)),
}
# Emoji glue: zero-width joiner, variation selector 16, skin tones.
EMOJI_GLUE = ("\u200d", "\ufe0f", "\U0001F3FB", "\U0001F3FD", "\U0001F3FF")


def char_rank(c: str) -> int:
    """How simple a character is to read in a minimal failing text (smaller is simpler):
    lower-case ASCII letters, digits, upper case, the space, other printable ASCII, newline and
    tab, other letters and digits, anything else, and last the invisible control characters."""
    if "a" <= c <= "z":
        return 0
    if "0" <= c <= "9":
        return 1
    if "A" <= c <= "Z":
        return 2
    if c == " ":
        return 3
    if "!" <= c <= "~":
        return 4
    if c in "\n\t":
        return 5
    cat = unicodedata.category(c)
    if cat[0] in "LN":
        return 6
    return 8 if cat[0] == "C" else 7


def simplicity(text: str) -> tuple:
    """Sort key of texts, simplest first: shorter, then simpler characters, then by code point."""
    return len(text), sum(char_rank(c) for c in text), text


def _rng(name: str, seed: int) -> random.Random:
    # Seeding with a str hashes it with SHA-512: stable across runs, machines and PYTHONHASHSEED.
    return random.Random(f"tokparity:{name}:{seed}")


def _cases(name: str, texts: Iterable[tuple[str, dict]]) -> Iterator[Case]:
    corpus = f"gen:{name}"
    for n, (text, tags) in enumerate(texts):
        yield Case(f"{name}-{n:06d}", text, corpus, {"kind": "generated", "generator": name, **tags})


# -- what a vocabulary offers -----------------------------------------------------------------


def _decode_pieces(vocab: Vocab) -> list[tuple[int, str]]:
    out = []
    for i in range(vocab.size):
        if vocab.type_of(i) in (TokenType.CONTROL, TokenType.UNKNOWN, TokenType.UNUSED):
            continue
        try:
            text = token_bytes(vocab, i).decode("utf-8")
        except UnicodeDecodeError:
            continue
        if text:
            out.append((i, text))
    return out


# id(vocab) -> (vocab, its decoded pieces with ids, without): a Vocab is not hashable, and a 250k
# vocabulary takes a second or two to decode, which the generators and strategies then share.
_PIECES: dict[int, tuple[Vocab, list[tuple[int, str]], tuple[str, ...]]] = {}


def _piece_cache(vocab: Vocab) -> tuple[Vocab, list[tuple[int, str]], tuple[str, ...]]:
    hit = _PIECES.get(id(vocab))
    if hit is None or hit[0] is not vocab:
        if len(_PIECES) >= 4:
            _PIECES.clear()
        items = _decode_pieces(vocab)
        hit = _PIECES[id(vocab)] = (vocab, items, tuple(text for _, text in items))
    return hit


def piece_texts(vocab: Vocab) -> list[tuple[int, str]]:
    """``[(id, text)]`` of every piece that stands for input text, decoded (``▁`` → space, GPT-2
    byte spelling → bytes, ``##`` dropped); pieces that are not whole UTF-8 are left out."""
    return list(_piece_cache(vocab)[1])


def piece_strings(vocab: Vocab) -> tuple[str, ...]:
    """The texts of ``piece_texts``, without ids."""
    return _piece_cache(vocab)[2]


def special_texts(vocab: Vocab) -> list[str]:
    """Texts of control and user-defined tokens (``<s>``, ``<|eot_id|>``, ``[toxicity=0]``)."""
    types = vocab.token_types or []
    texts = [vocab.tokens[i] for i, t in enumerate(types)
             if t in (TokenType.CONTROL, TokenType.USER_DEFINED) and len(vocab.tokens[i]) > 1]
    for i in vocab.special_ids.values():
        if 0 <= i < vocab.size and len(vocab.tokens[i]) > 1:
            texts.append(vocab.tokens[i])
    return list(dict.fromkeys(t for t in texts if "\x00" not in t))


def _need_vocab(name: str, vocab: Vocab | None) -> Vocab:
    if vocab is None:
        raise TokparityError(f"generator {name!r} needs a vocabulary")
    return vocab


# -- the generators ---------------------------------------------------------------------------


def vocab_pieces(vocab: Vocab | None, seed: int = 0) -> Iterator[Case]:
    """Every vocabulary piece alone, decoded, in an order shuffled by the seed."""
    vocab = _need_vocab("vocab-pieces", vocab)
    items = piece_texts(vocab)
    _rng("vocab-pieces", seed).shuffle(items)
    yield from _cases("vocab-pieces", ((text, {"token_id": i}) for i, text in items))


def vocab_concat(vocab: Vocab | None, seed: int = 0) -> Iterator[Case]:
    """Endless random concatenations of 1–8 pieces, with whitespace between some of them."""
    pieces = piece_strings(_need_vocab("vocab-concat", vocab))
    rng = _rng("vocab-concat", seed)

    def texts():
        while True:
            n = rng.randint(1, 8)
            yield "".join(rng.choice(pieces) + rng.choice(SEPARATORS) for _ in range(n)).rstrip(" ") or " ", {}
    yield from _cases("vocab-concat", texts())


def special_whitespace(vocab: Vocab | None, seed: int = 0) -> Iterator[Case]:
    """Every added / special token × whitespace on each side, alone or between two words."""
    specials = special_texts(_need_vocab("special-whitespace", vocab))
    items = [(f"{before}{left}{tok}{right}{after}", {"special": True})
             for tok in specials for left in SIDES for right in SIDES
             for before, after in (("", ""), ("a", "b"), ("Hello", " world"))]
    _rng("special-whitespace", seed).shuffle(items)
    yield from _cases("special-whitespace", items)


def ascii_pairs(vocab: Vocab | None = None, seed: int = 0) -> Iterator[Case]:
    """Every pair of printable ASCII characters (plus tab and newline) × leading/trailing spaces."""
    chars = [chr(c) for c in range(0x20, 0x7F)] + ["\t", "\n"]
    texts = dict.fromkeys(f"{lead}{a}{b}{trail}" for a in chars for b in chars
                          for lead, trail in (("", ""), (" ", ""), ("", " "), (" ", " ")))
    items = [(text, {"script": "Zyyy"}) for text in texts]
    _rng("ascii-pairs", seed).shuffle(items)
    yield from _cases("ascii-pairs", items)


@lru_cache(maxsize=1)
def assigned_codepoints() -> dict[str, tuple[int, ...]]:
    """Assigned code points by general category (surrogates, private use and unassigned left out)."""
    by_cat: dict[str, list[int]] = {}
    for cp in range(0x110000):
        cat = unicodedata.category(chr(cp))
        if cat not in ("Cs", "Co", "Cn"):
            by_cat.setdefault(cat, []).append(cp)
    return {cat: tuple(cps) for cat, cps in sorted(by_cat.items())}


def _tagged(cps: list[int], tags: dict) -> Iterator[tuple[str, dict]]:
    return ((chr(cp), tags) for cp in cps)


def codepoints(vocab: Vocab | None = None, seed: int = 0) -> Iterator[Case]:
    """Every assigned code point, alone. The first 256 (one per byte value, where byte-level
    tables go wrong) come first; then the categories take turns (a ``Zs``, an ``Lu``, an ``Mn``…),
    each category's code points in an order shuffled by the seed."""
    rng = _rng("codepoints", seed)
    first = list(range(0x100))
    rng.shuffle(first)
    streams = []
    for cat, assigned in assigned_codepoints().items():
        cps = [cp for cp in assigned if cp >= 0x100]
        rng.shuffle(cps)
        streams.append(_tagged(cps, {"category": cat}))
    head = ((chr(cp), {"category": unicodedata.category(chr(cp))}) for cp in first)
    yield from _cases("codepoints", chain(head, _round_robin(streams)))


@lru_cache(maxsize=1)
def _corpus_words() -> tuple[tuple[str, str], ...]:
    """``(word, script)`` of the committed multilingual corpus (empty where it is not found)."""
    from tokparity.corpus import load_corpus

    words: dict[str, str] = {}
    try:
        for case in load_corpus("multilingual"):
            for w in case.text.split():
                words.setdefault(w, case.tags.get("script", ""))
    except TokparityError:
        return ()
    return tuple(sorted(words.items()))


def script_word(rng: random.Random, script: str, lo: int = 1, hi: int = 8) -> str:
    """A pseudo-word of ``lo``–``hi`` letters of ``script``; emoji words get joiners and modifiers."""
    ranges = SCRIPTS[script]
    out = []
    for _ in range(rng.randint(lo, hi)):
        a, b = rng.choice(ranges)
        out.append(chr(rng.randint(a, b)))
        if script == "Emoji" and rng.random() < 0.3:
            out.append(rng.choice(EMOJI_GLUE))
    return "".join(out)


def multilingual_words(vocab: Vocab | None = None, seed: int = 0) -> Iterator[Case]:
    """Endless lines of 1–6 words, each from the multilingual corpus or made of one script's letters."""
    rng = _rng("multilingual-words", seed)
    words = _corpus_words()
    scripts = sorted(SCRIPTS)

    def texts():
        while True:
            line, seen = [], set()
            for _ in range(rng.randint(1, 6)):
                if words and rng.random() < 0.5:
                    w, s = rng.choice(words)
                else:
                    s = rng.choice(scripts)
                    w = script_word(rng, s)
                line.append(w)
                seen.add(s)
            tags = {"script": seen.pop()} if len(seen) == 1 else {"script": "mixed"}
            yield " ".join(line), tags
    yield from _cases("multilingual-words", texts())


_MIXED_ALPHABET = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" "  \n\t"
                   "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~" "éàüñçßøÅ" "\u0301\u0308" "½ﬁＡ１"
                   "日本語中文한국어" "ияжЖ" "αβ" "אב" "عربي" "हिन्दी" "ไทย"
                   "😀👍🏽❤️‍🔥" "\u200b\u200d\xa0\u3000\u2029")


def random_chars(vocab: Vocab | None = None, seed: int = 0) -> Iterator[Case]:
    """Endless short strings (1–12 characters) over a mixed alphabet (test-tokenizer-random's
    ``generator_random_chars``)."""
    rng = _rng("random-chars", seed)
    alphabet = list(_MIXED_ALPHABET)

    def texts():
        while True:
            yield "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))), {}
    yield from _cases("random-chars", texts())


def whitespace(vocab: Vocab | None = None, seed: int = 0) -> Iterator[Case]:
    """Endless texts of short words between runs of whitespace, at the start and end too."""
    rng = _rng("whitespace", seed)
    words = ("a", "I", "hello", "x1", "é", "日本", "<s>", "!", "ok.")
    common = (" ", " ", " ", "\n", "\t")

    def run():
        pool = common if rng.random() < 0.7 else WHITESPACE
        return "".join(rng.choice(pool) for _ in range(rng.choice((1, 1, 2, 2, 3, 4, 6, 8, 16))))

    def texts():
        while True:
            parts = [run() if rng.random() < 0.5 else ""]
            for _ in range(rng.randint(0, 4)):
                parts += [rng.choice(words), run()]
            if rng.random() < 0.5:
                parts[-1] = ""
            yield "".join(parts) or " ", {"kind": "whitespace"}
    yield from _cases("whitespace", texts())


def numbers(vocab: Vocab | None = None, seed: int = 0) -> Iterator[Case]:
    """Endless digit runs of 1–12 digits, alone, grouped with ``,`` / ``.`` / spaces, or glued to words."""
    rng = _rng("numbers", seed)

    def texts():
        while True:
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 12)))
            style = rng.randrange(5)
            if style == 1:
                digits = f"{int(digits):,}"
            elif style == 2:
                digits = " ".join(digits[i:i + rng.randint(1, 4)] for i in range(0, len(digits), 3))
            elif style == 3:
                digits = f"{digits[:len(digits) // 2]}.{digits[len(digits) // 2:]}"
            elif style == 4:
                digits = rng.choice(("x", "v", " ", "$", "-", "ab")) + digits + rng.choice(("", "th", "%", " km"))
            yield digits.strip(".") or "0", {"kind": "number"}
    yield from _cases("numbers", texts())


_CONTRACTION_WORDS = ("it", "IT", "It", "don", "DON", "we", "WE", "they", "I", "you", "John", "x", "1")
_CONTRACTIONS = ("s", "t", "re", "ve", "m", "ll", "d", "S", "T", "RE", "VE", "M", "LL", "D", "Re", "Ll", "", "x")
_APOSTROPHES = ("'", "'", "'", "\u2019", "`", "''")
_TAILS = ("", "", " ", "a", "ing", "s", "X", " a", "'", "!", "\n")


def apostrophes(vocab: Vocab | None = None, seed: int = 0) -> Iterator[Case]:
    """Endless contractions in every case (``IT'S``, ``we'Ve``, ``don’t``) with what may follow:
    the case-insensitive ``(?i:'s|'t|…)`` of Llama 3's split regex against GPT-2's ``'s|'t|…``."""
    rng = _rng("apostrophes", seed)

    def texts():
        while True:
            word = rng.choice(_CONTRACTION_WORDS)
            if rng.random() < 0.3:
                word = rng.choice(("", " ", "a ")) + word
            yield f"{word}{rng.choice(_APOSTROPHES)}{rng.choice(_CONTRACTIONS)}{rng.choice(_TAILS)}", \
                {"kind": "apostrophe"}
    yield from _cases("apostrophes", texts())


def long_texts(vocab: Vocab | None, seed: int = 0) -> Iterator[Case]:
    """Endless long texts (200 to 3,000 characters) of pieces, words and whitespace runs up to 80
    long: for engines that truncate, use fixed buffers or slow down on long inputs."""
    rng = _rng("long-texts", seed)
    pieces = piece_strings(vocab) if vocab is not None else ()
    words = tuple(w for w, _ in _corpus_words()) or ("hello", "world")

    def texts():
        while True:
            target, parts, n = rng.choice((200, 500, 1000, 3000)), [], 0
            while n < target:
                r = rng.random()
                if r < 0.05:
                    part = rng.choice((" ", "\n", "\t")) * rng.randint(8, 80)
                elif r < 0.5 and pieces:
                    part = rng.choice(pieces)
                else:
                    part = rng.choice(words) + rng.choice((" ", " ", " ", "\n", ""))
                parts.append(part)
                n += len(part)
            yield "".join(parts), {"kind": "long"}
    yield from _cases("long-texts", texts())


GENERATORS: dict[str, Callable[[Vocab | None, int], Iterator[Case]]] = {
    "unicode-seams": unicode_seams,
    "vocab-pieces": vocab_pieces,
    "vocab-concat": vocab_concat,
    "special-whitespace": special_whitespace,
    "ascii-pairs": ascii_pairs,
    "codepoints": codepoints,
    "multilingual-words": multilingual_words,
    "random-chars": random_chars,
    "whitespace": whitespace,
    "numbers": numbers,
    "apostrophes": apostrophes,
    "long-texts": long_texts,
}


NEED_VOCAB = ("vocab-pieces", "vocab-concat", "special-whitespace")  # left out where there is no vocabulary

# Generators whose cases cost much more than the others' take part in one round of this many.
EVERY = {"long-texts": 25}


def generate(name: str, vocab: Vocab | None = None, seed: int = 0, limit: int | None = None) -> Iterator[Case]:
    """The cases of one generator (the first ``limit`` of them)."""
    try:
        fn = GENERATORS[name]
    except KeyError:
        raise UnknownGenerator(name, GENERATORS) from None
    cases = fn(vocab, seed)
    return cases if limit is None else islice(cases, limit)


def _round_robin(iterators: Iterable[Iterator], every: Iterable[int] | None = None) -> Iterator:
    """One item from each iterator in turn (iterator ``i`` only every ``every[i]``-th round)."""
    live = [(it, n) for it, n in zip(iterators, every or repeat(1))]
    rounds = 0
    while live:
        still = []
        for it, n in live:
            if rounds % n:
                still.append((it, n))
                continue
            try:
                yield next(it)
            except StopIteration:
                continue
            still.append((it, n))
        live = still
        rounds += 1


def interleave(iterators: Iterable[Iterator[Case]], every: Iterable[int] | None = None) -> Iterator[Case]:
    """One case from each iterator in turn, iterator ``i`` only every ``every[i]``-th round
    (default: every round); finished ones drop out."""
    return _round_robin(iterators, every)


def generate_all(vocab: Vocab | None, seed: int = 0, names: Iterable[str] | None = None) -> Iterator[Case]:
    """Every generator (or those named) in turn, one case each; those that need a vocabulary are
    left out when ``vocab`` is None."""
    chosen = list(names) if names is not None else list(GENERATORS)
    for n in chosen:
        if n not in GENERATORS:
            raise UnknownGenerator(n, GENERATORS)
    if vocab is None:
        chosen = [n for n in chosen if n not in NEED_VOCAB]
    return interleave([generate(n, vocab, seed) for n in chosen], [EVERY.get(n, 1) for n in chosen])
