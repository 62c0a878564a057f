"""Round trip: ``decode(encode(text))`` gives the text back, per library, where the model promises it.

A tokenizer promises a round trip when no step of it loses text: byte-level BPE (every byte has a
token), RWKV's byte vocabulary, tiktoken, and SentencePiece with byte fallback and no whitespace
collapsing or normalization table. A Unicode normalizer (NFC, NFKC) keeps the promise for the
normalized text: that is what must come back. Lower-casing, accent stripping, a normalization
table or collapsed whitespace mean the model does not promise it; the property is then not
checked, and says why.

Each library that reads one of the model's original files encodes every text of the built-in
corpora (no special tokens added, special-token text not parsed) and decodes the ids as the
files say. A text that does not come back is counted under the shape of its loss, with the
shortest text of that shape as the example.
"""

from __future__ import annotations

import unicodedata

from tokparity.checks import Finding, PropertyCheck
from tokparity.checks.libraries import Libraries
from tokparity.errors import CaseFailure
from tokparity.textview import clipped, shown_path
from tokparity.vocab import Vocab, load_vocab
from tokparity.vocab.model import TokenType
from tokparity.zoo import ModelFiles

NAME = "round-trip"
CORPORA = ("multilingual", "emoji", "edge")
UNICODE_FORMS = ("NFC", "NFD", "NFKC", "NFKD")
SPACE_SYMBOL_WORDS = 1000  # tokens starting with '▁' beyond which a vocabulary writes spaces as '▁'
KEEPS_TEXT = ("Sequence",) + UNICODE_FORMS  # tokenizer.json normalizers that lose nothing a form does not


def check(model: ModelFiles, libraries: Libraries) -> PropertyCheck:
    texts = _texts()
    facts: list[str] = []
    findings: list[Finding] = []
    checked = 0
    for name, role in libraries.decoders():
        vocab = load_vocab(model.original_files[role])
        form = promise(vocab)
        if form.startswith("not "):
            facts.append(f"{name} ({role}): {form}")
            continue
        backend = libraries.backend(name)
        if isinstance(backend, str):
            facts.append(f"{name}: not run ({backend})")
            continue
        checked += 1
        shapes: dict[str, tuple[int, str, str]] = {}  # shape -> (count, shortest text, what came back)
        answers = backend.encode_many(texts)
        for text, answer in zip(texts, answers):
            want = _normalized(form, text)
            if answer.status != "ok":
                shape, got = f"encode fails ({answer.status})", f"nothing: {answer.detail}"
            else:
                try:
                    got = backend.decode(answer.ids)
                except (CaseFailure, NotImplementedError) as e:
                    got = f"\0fails: {e}"
                if got == want:
                    continue
                shape = loss_shape(want, got, vocab)
            count, shortest, back = shapes.get(shape, (0, text, got))
            shapes[shape] = (count + 1, *((text, got) if len(text) < len(shortest) else (shortest, back)))
        lost = sum(n for n, _, _ in shapes.values())
        said = "" if form == "text" else f" (as {form})"
        facts.append(f"{name} ({role}): {len(texts) - lost:,} of {len(texts):,} texts come back{said}")
        for shape, (count, text, back) in sorted(shapes.items(), key=lambda s: -s[1][0]):
            at = next((i for i, (a, b) in enumerate(zip(text, back)) if a != b), min(len(text), len(back)))
            why = by_design(shape, name, vocab, model)
            findings.append(Finding(f"{name} does not give back {count:,} text{'s' if count != 1 else ''}: {shape}"
                                    + (f". {why}" if why else ""), f"{name} on {shown_path(model.original_files[role])}",
                                    f"{clipped(text, 60)} comes back as {clipped(back, 60)} (from character {at})",
                                    broken=why is None))
    if not checked:
        return PropertyCheck.skipped(NAME, "; ".join(facts) or "no library reads the model's files")
    return PropertyCheck.of(NAME, facts, findings)


def by_design(shape: str, name: str, vocab: Vocab, model: ModelFiles) -> str | None:
    """Why a loss of ``shape`` is what the files (or the library's own declared rule) ask, in a
    sentence; None where nothing asks for it: then the property is broken."""
    if shape == SPACE_SYMBOL and (vocab.algorithm in ("spm", "ugm") or _writes_space_symbol(vocab)):
        return "By design: this tokenizer writes every space as '▁', so the two cannot be told apart"
    if shape == CLEANED:
        if _config(model).get("clean_up_tokenization_spaces") is True:
            return "By design: tokenizer_config.json asks for it (clean_up_tokenization_spaces: true)"
        if name == "llama.cpp":
            return ("llama.cpp's own rule for this pre-tokenizer type (clean_spaces); no file of the model asks "
                    "for it, so it is said, not counted as the files' fault")
    return None


def missing_bytes(vocab: Vocab) -> frozenset[int]:
    """The bytes a byte-level BPE vocabulary has no token for (a text holding them loses them)."""
    if vocab.algorithm != "bpe":
        return frozenset()
    from tokparity.vocab.token_bytes import byte_to_unicode

    return frozenset(b for b, c in enumerate(byte_to_unicode()) if vocab.id_of(c) is None)


def _writes_space_symbol(vocab: Vocab) -> bool:
    """A tokenizer.json that replaces spaces by '▁', or a vocabulary whose words start with it (Gemma 4's BPE)."""
    return any(step.get("type") == "Replace" and step.get("content") == "\u2581"
               for step in _steps(vocab.extra.get("normalizer"))) or \
        sum(1 for t in vocab.tokens if t.startswith("\u2581")) > SPACE_SYMBOL_WORDS


def _config(model: ModelFiles) -> dict:
    from tokparity.checks.ends import model_json

    path = model.original_files.get("tokenizer_config")
    return model_json(path, "tokenizer_config.json") if path is not None else {}


def promise(vocab: Vocab) -> str:
    """What a round trip must give back: ``"text"`` itself, a Unicode form's name (the normalized
    text), or why the model does not promise one (``"not promised: …"``)."""
    if vocab.algorithm == "wpm":
        return "not promised: WordPiece lower-cases and drops accents and spaces"
    if vocab.precompiled_charsmap:
        return "not promised: a normalization table (precompiled_charsmap) rewrites the text"
    if vocab.extra.get("normalizer_name") not in (None, "identity"):
        return f"not promised: the {vocab.extra['normalizer_name']} normalization rewrites the text"
    if vocab.flags.remove_extra_whitespaces:
        return "not promised: runs of spaces are collapsed (remove_extra_whitespaces)"
    form = "text"
    normalizer = vocab.extra.get("normalizer")
    for step in _steps(normalizer):
        kind = step.get("type")
        if kind in UNICODE_FORMS:
            form = kind
        elif kind == "Replace" and step.get("pattern") == {"String": " "} and step.get("content") == "\u2581":
            continue  # (SentencePiece's space, undone by the decoder)
        elif kind == "Prepend" and step.get("prepend") == "\u2581":
            continue
        elif kind not in KEEPS_TEXT:
            return f"not promised: the tokenizer.json normalizer {kind} rewrites the text"
    if vocab.algorithm in ("spm", "ugm"):
        has_bytes = sum(1 for i in range(vocab.size) if vocab.type_of(i) == TokenType.BYTE) >= 256
        if not (vocab.flags.byte_fallback or has_bytes):
            return "not promised: no byte fallback, so a character outside the vocabulary is lost"
    return form


def _steps(normalizer: object) -> list[dict]:
    if not isinstance(normalizer, dict):
        return []
    if normalizer.get("type") == "Sequence":
        return [s for n in normalizer.get("normalizers", []) for s in _steps(n)]
    return [normalizer]


SPACE_SYMBOL = "the character '▁' (U+2581) comes back as a space"
MISSING = "characters are dropped: the vocabulary has no token for some of their bytes ("
CLEANED = "spaces before punctuation and contractions are removed (clean_up_tokenization_spaces)"
# transformers' clean_up_tokenization (and llama.cpp's clean_spaces): a space before these goes
CLEANED_UP = (" .", " ?", " !", " ,", " ' ", " n't", " 'm", " 's", " 've", " 're")


def cleaned_up(text: str) -> str:
    for before in CLEANED_UP:
        text = text.replace(before, before[1:] if before != " ' " else "'")
    return text


def loss_shape(want: str, got: str, vocab: Vocab) -> str:
    """How ``got`` lost ``want``, in words: the first shape that fits (``other`` when none does)."""
    if got.startswith("\0fails: "):
        return "decode fails"
    if "\ufffd" in got and "\ufffd" not in want:
        return "bytes come back as U+FFFD (a character cut, or a byte with no token)"
    for form in UNICODE_FORMS:
        if got == _normalized(form, want):
            return f"the text comes back in {form}"
    if "\u2581" in want and got == want.replace("\u2581", " "):
        return SPACE_SYMBOL
    if got == cleaned_up(want):
        return CLEANED
    lost = missing_bytes(vocab)
    if lost and got == "".join(c for c in want if not set(c.encode("utf-8", "surrogatepass")) & lost):
        return MISSING + ", ".join(f"0x{b:02X}" for b in sorted(lost)[:6]) + (" …)" if len(lost) > 6 else ")")
    if got == want[1:] and want[:1].isspace():
        return "the leading space is dropped"
    if got == " " + want:
        return "a space is added before the text"
    if got.strip() == want.strip():
        return "spaces at the ends are lost"
    unk = vocab.special_ids.get("unk")
    if unk is not None and 0 <= unk < vocab.size and vocab.tokens[unk] in got:
        return f"characters come back as the unknown token {vocab.tokens[unk]!r}"
    return "other losses"


def _normalized(form: str, text: str) -> str:
    """``text`` in the Unicode ``form`` (NFC, NFKC, ...); itself for ``"text"``."""
    return unicodedata.normalize(form, text) if form in UNICODE_FORMS else text  # type: ignore[arg-type]


def _texts() -> list[str]:
    from tokparity.corpus import load_corpus

    return [case.text for corpus in CORPORA for case in load_corpus(corpus)]
