"""One registry of causes (tokparity/diagnose/causes.toml): every cause the diagnosis can name, of
every op, is declared there once, with the words the reports and the catalogue use and how it is
built; and every declaration is built as it says. A cause the code names that is not declared,
or one declared that nothing builds, fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import tokparity
from tokparity.chat.way import TRANSFORMERS_WAY
from tokparity.diagnose import chat_ways, decoding, learnt_bytes, learnt_cut, learnt_edits, learnt_ids, learnt_replaced
from tokparity.diagnose.info import DECODING_OPS, cause_info, declared, is_declared
from tokparity.diagnose.variants import PER_CASE, catalogue, cause_of
from tokparity.records import TIE

PACKAGE = Path(tokparity.__file__).parent
KEYS = {"classes", "stage", "built", "fix", "spec", "does", "case"}
OPTIONAL = {"evidence", "changes", "forms", "derived", "library", "others_than", "shape"}
BUILT = {"variant", "family", "stages", "release", "tie", "judge", "decoding", "learnt", "reviewed", "chat"}
ENCODING_STAGES = {"normalize", "pre_tokenize", "model", "post", "unknown"}


def built_as(kind: str) -> list[str]:
    """The causes declared as built ``kind``'s way, in their declared order."""
    return [name for name, entry in declared().items() if entry["built"] == kind]


def test_every_declaration_says_all_a_cause_needs():
    for name, entry in declared().items():
        assert KEYS <= set(entry), f"{name}: no {sorted(KEYS - set(entry))}"
        assert set(entry) <= KEYS | OPTIONAL, f"{name}: unknown {sorted(set(entry) - KEYS - OPTIONAL)}"
        assert entry["built"] in BUILT, f"{name}: built = {entry['built']!r}"
        assert entry["fix"] and entry["spec"] and entry["does"], name
        encoding = entry["stage"] in ENCODING_STAGES
        assert encoding or entry["stage"] in (*DECODING_OPS, "chat"), f"{name}: stage {entry['stage']!r}"
        assert bool(entry["classes"]) == encoding, f"{name}: an encoding cause names its symptoms, no other does"
        assert name.split(".")[0] == entry["stage"] or encoding, f"{name}: a decoding or chat cause is named by its op"


def test_every_variant_of_encoding_is_declared_and_every_declared_variant_is_built():
    variants = {v.cause for v in catalogue()} | {cause_of(key) for key in PER_CASE}
    family = {c for c in variants if c.startswith("pretokenizer.") and cause_info(c) is declared()["pretokenizer"]}
    assert family and built_as("family") == ["pretokenizer"]  # (each member of llama.cpp's splits)
    assert variants - family == set(built_as("variant"))


def test_the_causes_named_outside_the_variants_are_those_declared_so():
    source = {path: path.read_text("utf-8") for path in (PACKAGE / "diagnose").rglob("*.py")}
    named = {node.args[0].value for text in source.values() for node in ast.walk(ast.parse(text))
             if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Cause"
             and node.args and isinstance(node.args[0], ast.Constant)}
    # ("" is no cause: a search that reproduced nothing; a tie is named where two optima tie)
    assert named - {"", "vocab.mismatch", TIE} == set(built_as("stages"))
    assert built_as("judge") == ["vocab.mismatch"] and "vocab.mismatch" in named
    assert built_as("tie") == [TIE]
    assert built_as("release") == ["library.release"]


def test_every_decoding_cause_is_built_or_reviewed():
    assert [v.name for v in decoding.VARIANTS] == built_as("decoding")  # (the order they are tried)
    for v in decoding.VARIANTS:
        assert v.op == declared()[v.name]["stage"] and declared()[v.name]["evidence"]
    assert all(declared()[n]["stage"] in DECODING_OPS for n in built_as("reviewed"))
    assert built_as("learnt") == [*learnt_edits.CAUSES.values(), *learnt_ids.CAUSES.values(),
                                  *learnt_cut.CAUSES.values(), learnt_cut.AFTER, learnt_cut.BEFORE, learnt_bytes.CAUSE,
                                  learnt_replaced.CAUSE]  # (learnt from the case)


def test_every_chat_cause_is_its_declaration():
    """A chat cause is declared and built in one place: the ChatWay fields it changes, in each of
    its forms, or the field whose value is read off the backend's prompt."""
    assert {v.name for v in chat_ways.VARIANTS} | set(chat_ways.DERIVED) == set(built_as("chat"))
    assert list(chat_ways.ORDER) == built_as("chat")  # (the order the search tries them, and names them)
    for v in chat_ways.VARIANTS:
        way = v.way()
        entry = declared()[v.name]
        assert way != TRANSFORMERS_WAY, f"{v.name}: its changes change nothing"
        forms = [{k: value for k, value in form.items() if k != "does"} for form in entry.get("forms", [])]
        assert dict(v.changes) in [entry["changes"], *forms]  # (a form's own words, "does", change nothing)
    for name, key in chat_ways.DERIVED.items():
        assert key in TRANSFORMERS_WAY.__dataclass_fields__ or key in TRANSFORMERS_WAY.render.__dataclass_fields__, name
    libraries = {name: declared()[name].get("library") or declared()[name].get("others_than")
                 for name in built_as("chat")}
    assert libraries["chat.llama-cpp-builtin"] == libraries["chat.family-format"] == "llama.cpp"
    builtin, family = chat_ways.BY_NAME["chat.llama-cpp-builtin"], chat_ways.BY_NAME["chat.family-format"]
    assert builtin.applies("llama.cpp") and builtin.applies("llama.cpp@0.3.16") and not builtin.applies("mine")
    assert family.applies("mine") and not family.applies("llama.cpp")


@pytest.mark.parametrize("name, known", [("chat.no-trim-blocks", True), ("decode.bytes", True),
                                         ("pretokenizer.gpt-2", True), ("model.greedy-longest-match", True),
                                         ("chat.no-such-thing", False), ("normalizer", False)])
def test_the_known_list_accepts_exactly_the_declared_causes(name, known):
    assert is_declared(name) is known
