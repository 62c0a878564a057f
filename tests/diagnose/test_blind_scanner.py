"""A byte-level BPE whose Llama 3 split is a scanner written by hand, with five of its rules wrong,
written blind (tests/engines/blind/byte_bpe.py: its author had the bug descriptions only, never the
diagnosis code or the sources of tokie and bpe-qwen). tests/diagnose/mutation.py says how each check reads.

* ``--newline-run-stops``: a run of spaces that starts with a line break ends after the line breaks
  (``'\\n \\n'`` is ``\\n``, `` \\n``). Named ``pretokenizer.scanner:newline-run``.
* ``--tab-prefixes-punct``: a tab prefixes punctuation as a space does (``'\\t"fmt'`` is ``\\t"``,
  ``fmt``). Named ``:tab-prefix``.
* ``--ascii-word-prefix``: a space outside ASCII never starts a word (``'a\\u00a0b'`` is ``a``,
  ``\\u00a0``, ``b``). Named ``:space-prefix``.
* ``--space-joins-number``: a number beyond ASCII takes the space before it after a letter or a
  number (``'a ½'`` is ``a``, `` ½``). Named ``:number-prefix``.
* ``--split-mixed-trailing-space``: a run of spaces at the end of the text that mixes characters
  leaves its last one alone (``' \\t'`` is `` ``, ``\\t``). Named ``:mixed-run``.
* all five at once: the five rules, proven.

The first three rules were added to the catalogue from tokie 0.1.4, the last two from bpe-qwen 0.1.5
(tests/diagnose/test_real_packages.py), each before its flags were written. ``--space-joins-number``
is the weaker evidence: its author first read the look-back across line breaks and mixed runs (one
case of 18 then named ``pretokenizer.other``), and the rule's author settled the description from
bpe-qwen's behaviour, which the rule follows (the engine's README says so). Before the run's verdict
took, of the per-case sets as frequent as the last candidate, the narrowest (not the first found), the
U+00A0 engine was named ``pretokenizer.gpt-2`` (GPT-2's whole split gives the U+00A0 and tab rules'
ids by coincidence, and breaks a fifth of the agreements), not proven. The twin (no flag) agrees."""

from __future__ import annotations

import pytest
import regex
from mutation import Mutation, check_single, compare_runs, engine

from tokparity.diagnose.variants import SCANNER_RULES

BYTE_BPE = ("blind/byte_bpe.py", "{tokenizer_json}")
CORPORA = ("multilingual", "edge", "focus:scanner-rules")
FLAGS = {"newline-run": "--newline-run-stops", "tab-prefix": "--tab-prefixes-punct", "space-prefix": "--ascii-word-prefix",
         "number-prefix": "--space-joins-number", "mixed-run": "--split-mixed-trailing-space"}
AT_LEAST = {"newline-run": 4, "tab-prefix": 7, "space-prefix": 3, "number-prefix": 10, "mixed-run": 4}

MUTATIONS = [(Mutation("pretokenizer.scanner", "llama-bpe", engine(*BYTE_BPE, FLAGS[rule]), engine(*BYTE_BPE), CORPORA,
                       at_least=AT_LEAST[rule]), (rule,)) for rule in FLAGS]
MUTATIONS.append((Mutation("pretokenizer.scanner", "llama-bpe", engine(*BYTE_BPE, *FLAGS.values()), engine(*BYTE_BPE),
                           CORPORA, at_least=sum(AT_LEAST.values())), tuple(FLAGS)))


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    return compare_runs([m for m, _ in MUTATIONS], tmp_path_factory.mktemp("corpora"), zoo)


@pytest.mark.parametrize("m,rules", MUTATIONS, ids=["+".join(rules) for _, rules in MUTATIONS])
def test_scanner_rule(runs, m, rules):
    run = runs[m.group]
    check_single(run, m)
    root = run.summary(m.bug).root_cause
    assert set(root.variants) == {f"pretokenizer.scanner:{rule}" for rule in rules} and root.proven, root
    assert set(rules) <= set(SCANNER_RULES)


def test_scanner_rule_where_line_breaks_are_characters(zoo):
    """DeepSeek-V3's tokenizer.json writes its split's ``\\s*[\\r\\n]+`` with a carriage return and a
    line feed as characters, not escapes: the newline rule finds it all the same (it did not, before
    a second read of the change saw it)."""
    from tokparity.diagnose.search import Diagnoser
    from tokparity.reference import RefTokenizer
    from tokparity.vocab import load_vocab
    from tokparity.zoo import resolve_model

    path = resolve_model("deepseek-v3").path("tokenizer_json")
    assert "\\\\s*[\\r\\n]+" in path.read_text("utf-8")  # (JSON's escapes of the two characters)
    diagnoser = Diagnoser(RefTokenizer(load_vocab(path)), False, False)
    assert diagnoser.encode_remembered((), "\n \n") == [77968]
    assert diagnoser.encode_remembered(("pretokenizer.scanner:newline-run",), "\n \n") == [201, 539]


def test_split_edits_keep_the_files_unicode_tables(zoo):
    """A tokenizer.json's split runs on Oniguruma's Unicode 16.0 tables, so a variant that edits the
    regex must too: read as the regex module's (a newer Unicode), the scanner rules that apply to
    DeepSeek-V3's split gave the ids of an engine with Unicode 17's tables on U+20C1 (a currency sign new in Unicode 17),
    and the rule was proven for snaptokens 0.2.6, whose only split bug there is its ICU4X tables.
    That engine is ``unicode.tables:17.0`` (``:newest``, Unicode 18, gives its ids here too)."""
    from tokparity.diagnose.search import Diagnoser
    from tokparity.reference import RefTokenizer
    from tokparity.vocab import load_vocab
    from tokparity.zoo import resolve_model

    diagnoser = Diagnoser(RefTokenizer(load_vocab(resolve_model("deepseek-v3").path("tokenizer_json"))), False, False)
    text = " \u20c1a"
    assert diagnoser.encode_remembered((), text) == [223, 23368, 226, 67]
    for rule in ("newline-run", "mixed-run"):  # (the rules whose part DeepSeek-V3's split has)
        assert diagnoser.encode_remembered((f"pretokenizer.scanner:{rule}",), text) == [223, 23368, 226, 67]
    assert diagnoser.encode_remembered(("pretokenizer.regex-engine:ecmascript",), text) == [223, 23368, 226, 67]
    # JavaScript's reading brings a current runtime's tables, the regex module's: a variant of its own
    assert diagnoser.encode_remembered(("pretokenizer.regex-engine:javascript",), text) == [1327, 228, 226, 67]
    assert diagnoser.encode_remembered(("unicode.tables:newest",), text) == [1327, 228, 226, 67]
    assert diagnoser.encode_remembered(("unicode.tables:17.0",), text) == [1327, 228, 226, 67]
    # a letter only Unicode 18 assigns: unassigned to Unicode 17's tables and to the file's 16.0
    assert diagnoser.encode_remembered(("unicode.tables:17.0",), " \u208fa") == diagnoser.encode_remembered((), " \u208fa")
    if regex.match(r"\p{L}", "\u208f"):  # (a regex module of Unicode 18 or later)
        assert diagnoser.encode_remembered(("unicode.tables:newest",), " \u208fa") != diagnoser.encode_remembered((), " \u208fa")
    assert diagnoser.encode_remembered(("unicode.alphabetic",), text) == [223, 23368, 226, 67]
