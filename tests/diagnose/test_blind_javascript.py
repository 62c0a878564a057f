"""A byte-level BPE in plain JavaScript written blind (tests/engines/blind/js_bpe.mjs: its author had
the bug descriptions only, never the diagnosis code), run as the npm ports of GPT-2's encoder are
written. tests/diagnose/mutation.py says how each check reads.

* ``--plain-object``: the vocabulary is the object ``JSON.parse`` made and the per-piece cache a
  plain ``{}``, looked up with ``in`` and ``!== undefined``. On claude (no ``ignore_merges``) the
  cache is asked first, so every piece named like a member of Object.prototype, ``toString`` (a
  token of claude's) as much as ``hasOwnProperty`` (none), is "cached" as a function and the
  engine throws: ``model.prototype-lookup`` by its cache variant. On llama-bpe (``ignore_merges``)
  the vocabulary is asked first, and only a name that is no token comes back as a function (an id
  of null): the vocabulary variant.
* ``--plain-object --js-whitespace`` on claude: the same, and the split regex with JavaScript's own
  ``\\s`` (no U+0085, U+FEFF a space): ``pretokenizer.regex-engine+model.prototype-lookup``, the
  ids' rows named by the first, the crashes by the second, the verdict both, proven.

The twin (no flag) agrees with the oracle on the focus corpus; on the seams it does not, for a
reason of its own that is no flag, which its author found and wrote down before any diagnosis ran:
Node's Unicode 17 tables (tests/engines/blind/README.md). Those cases are named ``unicode.tables``.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from mutation import ENGINES, Mutation, check_single, check_twin, compare_runs
from thirdparty import compare

from tokparity.diagnose.plain_object import OBJECT_PROTOTYPE

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node NOT FOUND: the blind JavaScript engine is NOT TESTED "
                                                      "(install Node.js 20+)")


def js_bpe(*flags: str) -> str:
    return " ".join([f"cmd:{NODE}", str(ENGINES / "blind" / "js_bpe.mjs"), "{tokenizer_json}", *flags])


FOCUS = ("focus:inherited-names",)
SINGLE = [
    (Mutation("model.prototype-lookup", "claude", js_bpe("--plain-object"), js_bpe(), FOCUS),
     "model.prototype-lookup:cache"),
    (Mutation("model.prototype-lookup", "llama-bpe", js_bpe("--plain-object"), js_bpe(), FOCUS),
     "model.prototype-lookup"),
]
BOTH = Mutation("pretokenizer.regex-engine+model.prototype-lookup", "claude",
                js_bpe("--plain-object", "--js-whitespace"), js_bpe(), FOCUS)


@pytest.fixture(scope="module")
def runs(zoo, tmp_path_factory):
    return compare_runs([m for m, _ in SINGLE] + [BOTH], tmp_path_factory.mktemp("corpora"), zoo)


@pytest.mark.parametrize("m,variant", SINGLE, ids=["cache-claude", "vocabulary-llama-bpe"])
def test_plain_object(runs, m, variant):
    run = runs[m.group]
    check_single(run, m)
    root = run.summary(m.bug).root_cause
    assert root.variants == (variant,) and root.proven, root
    assert {x.cls for x in run.mismatches(m.bug)} == {"crash"}


def test_plain_object_and_javascript_space(runs):
    run = runs[BOTH.group]
    check_twin(run, BOTH)
    mismatches = run.mismatches(BOTH.bug)
    crashes = {x.cause for x in mismatches if x.cls == "crash"}
    ids = {x.cause for x in mismatches if x.cls != "crash"}
    assert (crashes, ids) == ({"model.prototype-lookup"}, {"pretokenizer.regex-engine"}), (crashes, ids)
    root = run.summary(BOTH.bug).root_cause
    assert root.cause == BOTH.cause and root.proven and root.explains == len(mismatches), root
    assert set(root.variants) == {"pretokenizer.regex-engine:ecmascript", "model.prototype-lookup:cache"}, root


def _node_unicode() -> str:
    return subprocess.run([NODE, "-p", "process.versions.unicode"], capture_output=True, text=True,  # type: ignore[list-item]
                          check=True).stdout.strip()


@pytest.mark.parametrize("model", ["claude", "llama-bpe"])
def test_the_twin_on_the_seams_reads_nodes_unicode(zoo, tmp_path, model):
    """The twin's own deviation, no flag's: its regex classes and String.prototype.normalize are
    Node's ICU tables (Unicode 17.0 in Node 20.20), newer than the oracle's (llama.cpp's tables,
    tokenizers' NFKC of Unicode 9). On the seams a space before a digit Unicode 16 added (U+1CCF0,
    U+10D40 …) joins it only on Node's side, and NFKC folds U+1CCF0 to '0' only there. Whatever the
    Node, each such case is named ``unicode.tables`` (by the regex tables on llama-bpe, by NFKC on
    claude, whose normalizer is NFKC), and the verdict is proven; on llama-bpe, by a Node of Unicode
    17.0, its very tables (``unicode.tables:17.0``; the regex module's, newer, named it until they
    were a variant); with tables equal to the oracle's there is nothing to name."""
    zoo(model)
    run = compare(tmp_path, model, js_bpe(), "seams")
    if run.exit_code == 0:
        assert run.run["mismatches"] == 0
        return
    assert set(run.causes) == {"unicode.tables"}, run.causes
    variants = run.root["variants"]
    assert len(variants) == 1 and variants[0].partition(":")[0] == "unicode.tables" and run.root["proven"], run.root
    if model == "claude":
        assert variants == ["unicode.tables:nfkc"], run.root
    elif _node_unicode() == "17.0":
        assert variants == ["unicode.tables:17.0"], run.root


def test_javascript_space_found_by_the_default_corpora(zoo, tmp_path):
    """Plain ``compare`` with the default corpora (their seams) finds ``--js-whitespace`` on claude:
    exit 1, its rows named ``pretokenizer.regex-engine`` (beside the twin's own Unicode tables,
    above), the verdict proven with JavaScript's ``\\s`` in it."""
    zoo("claude")
    run = compare(tmp_path, "claude", js_bpe("--js-whitespace"))
    assert run.exit_code == 1
    assert set(run.causes) <= {"pretokenizer.regex-engine", "unicode.tables"} and \
        run.causes["pretokenizer.regex-engine"] >= 3, run.causes
    assert "pretokenizer.regex-engine:ecmascript" in run.root["variants"] and run.root["proven"], run.root


def test_the_names_are_javascripts():
    """The names the variants fail on are exactly those every object of this Node inherits."""
    names = subprocess.run([NODE, "-e", "console.log(JSON.stringify(Object.getOwnPropertyNames(Object.prototype)))"],
                           capture_output=True, text=True, check=True).stdout
    assert set(json.loads(names)) == OBJECT_PROTOTYPE
