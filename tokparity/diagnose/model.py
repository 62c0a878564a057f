"""The causes of one model's mismatches, named by reproducing them: a Diagnosis per Judgement
and a RootCause per backend (tokparity.records). A pure pass over the model's judgements, in
case order; what it makes, the decision (tokparity.run.decide) reads.

Each Judgement gets the smallest set of variants of the reference that gives the backend's ids
(``Diagnoser``, tokparity.diagnose.search), or, for a backend's crash, the variant under which the
reference fails on that text too (a JavaScript lookup that finds an inherited member); then each
backend gets its run-level verdict (the set that reproduces the most of its mismatches and keeps
its agreements, tokparity.diagnose.verdict), and a mismatch that a part of that set reproduces too
carries that part (one engine, one cause; a tie the proven verdict reproduces is the verdict's).

The order matters: the search remembers what explained a backend's earlier cases, so the order
must be the run's own, whoever judged the cases (worker processes with ``--jobs``, Ray actors, a
run before a ``--resume``). A worker that judged a whole model in order names its causes itself
and sends them (a ``Diagnosed``); the parent then takes them instead of loading the reference.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, Protocol, cast

from tokparity.corpus import is_too_long, numbered_cases
from tokparity.corpus.ids import ID_CORPUS, STREAM_PROMPT, id_cases
from tokparity.diagnose.cause import Cause
from tokparity.diagnose.chat import chat_verdict, diagnose_chat, prefer_chat
from tokparity.diagnose.chat_ways import VARIANTS as CHAT_VARIANTS
from tokparity.diagnose.decoding import as_verdict, backend_failed, diagnose_decoding, prefer
from tokparity.diagnose.decoding_verdict import (
    HELD,
    as_held,
    as_pair,
    as_pieces_pair,
    decoding_verdict,
    is_decode_pair,
)
from tokparity.diagnose.info import stage_of_cause
from tokparity.diagnose.search import Diagnoser
from tokparity.diagnose.verdict import root_cause, verdict_parts
from tokparity.errors import TokparityError
from tokparity.records import TIE, Diagnosed, Diagnosis, Judgement, RootCause
from tokparity.reference.decode import DecodeSettings
from tokparity.vocab import Vocab, load_vocab

AGREEING_KEPT = 32  # fuzz: the last texts each backend agreed on, which a case's variants are tried on
AGREEING_IDS_KEPT = 2000  # fuzz of ids: the first sequences each backend agreed on, which its verdict is checked on
SHARED_KEPT = 4096  # diagnoses kept by what they read, for the next backend that answers alike

# A crash no failing variant reproduces, as the run's verdict counts it (once another crash is
# reproduced): a case that a set explains only where the reference fails on it too.
UNREPRODUCED = Diagnosis("", "")


class Settings(Protocol):
    """What the diagnosis reads of a run's options (tokparity.run.options.CompareOptions), as they are
    when it runs: regress judges a model twice, add_special off then on."""

    @property
    def add_special(self) -> bool: ...

    @property
    def parse_special(self) -> bool: ...

    @property
    def max_chars(self) -> int | None: ...

    @property
    def diagnose(self) -> bool: ...  # False: no cause is named

    @property
    def decoding(self) -> DecodeSettings: ...  # how decode and stream turn ids into text

    @property
    def releases(self) -> tuple[str, ...]: ...  # other releases of a library, tried as causes (library.release)

    @property
    def stream_step(self) -> int: ...  # a stream is fed this many ids at a time

    def say(self, message: str) -> None: ...


def _named_by(labels: dict[str, str], text: str) -> str:
    return labels.get(text, text)


def _searched_whole(d: Diagnosis | None) -> bool:
    """Whether a chat search met no render that failed (tokparity.diagnose.chat words those). A
    failure may be the machine's (a timeout), so the next backend that answers alike searches again."""
    return d is None or not ("not searched further" in d.evidence or "could not be rendered" in d.evidence)


class ModelDiagnosis:
    """``reference``: the model's RefTokenizer if one is loaded already (the ``ref`` backend's),
    else one is made from ``vocab`` (or the model's file) on first use. ``decoder_file``: the file
    of the library that judges the decoding ops, where it is another of the model's files (a
    tokenizer.json beside the GGUF): their causes are reproduced by the reference of that file,
    which decodes as that library does (llama.cpp cleans up spaces, tokenizers does not).
    ``encoder_file``: likewise the file of the library that judges encode (``--oracle hf`` reads the
    tokenizer.json tokparity derives from a ``.model``). Encode's causes are still reproduced on the
    model's own file, whose reference has every variant; an agreement checks a verdict only where
    the two files' references give the same ids (elsewhere the difference is the conversion's)."""

    def __init__(self, model_name: str, model_file: str, options: Settings, reference: Any = None,
                 vocab: Vocab | None = None, decoder_file: str | None = None, model: Any = None,
                 encoder_file: str | None = None):
        self.model_name, self.model_file, self.options = model_name, model_file, options
        self.model = model  # the model's ModelFiles, where the releases of --try-release run (made on first use)
        self._releases: dict[str, Any] | None = None
        self.reference, self._vocab = reference, vocab
        self.decoder_file = decoder_file if decoder_file != model_file else None
        self._of_file: dict[str, Any] = {}  # another of the model's files -> its RefTokenizer (decoder's, oracle's)
        self.encoder_file = encoder_file if encoder_file != model_file else None
        self._diagnosers: dict[tuple[bool, bool], Diagnoser | None] = {}
        # Each judgement's diagnosis so far, by position: the search's, then the run's where a
        # verdict gave it its part (a second pass starts from there). Never a judgement's copy.
        self._current: list[Diagnosis | None] = []
        self.root_causes: dict[tuple[str, str], RootCause] = {}  # (backend, op) -> its verdict
        self.seconds = 0.0
        self._no_reference = False
        # The chat reference (tokparity.chat.reference): the run's, where it judged the chats here;
        # else made on first use from the model's file, encoding with tokparity's reference.
        self.chat_reference: Any = None
        # fuzz: per backend, the last texts it agreed on (a compare's verdict checks every agreement)
        self._agreeing: dict[str, deque[str]] = {}
        # fuzz of ids: per (backend, op), the first id sequences it agreed on, (ids, prompt, label) each
        self._agreeing_ids: dict[tuple[str, str], list[tuple[list[int], int, str]]] = {}
        # A decoding or chat diagnosis by what it reads (the op, the case, the answer, a failure):
        # backends that answer a case alike, as llama.cpp and tokenizers often do, share it
        self._shared: dict[tuple, Diagnosis | None] = {}

    def diagnoser(self) -> Diagnoser | None:
        """The model's reference and its variants for the current add_special / parse_special, made
        on first use (None: the model has no reference tokenizer, so no cause can be reproduced)."""
        options = self.options
        key = (options.add_special, options.parse_special)
        if key not in self._diagnosers:
            self._diagnosers[key] = None
            reference = self.reference_tokenizer()
            if reference is not None:
                self._diagnosers[key] = Diagnoser(reference, *key, releases=self.releases())
        return self._diagnosers[key]

    def releases(self) -> dict[str, Any]:
        """The other releases of a library the run tries as causes (``options.releases``), on this
        model where their backend runs on its files: {``sentencepiece@0.2.0``: a Backend}."""
        if self._releases is None:
            self._releases = {}
            names = self.options.releases
            if names and self.model is not None:
                from tokparity.backends.registry import backends_for, make_backend, release_of
                for name in names:
                    release = release_of(name)
                    if release is None or release.backend not in backends_for(self.model):
                        continue
                    try:
                        self._releases[str(release)] = make_backend(name, self.model)
                    except TokparityError as e:  # not this model's: said, and the others' causes still named
                        self.options.say(f"{self.model_name}: --try-release {name} not tried: {e}")
        return self._releases

    def close(self) -> None:
        """Stop the releases' child processes and let go of the reference and its variants (the
        diagnosis may still name what it found). The last two references made by ``reference_of``
        stay kept, with their variants, for a next run on the same model. Freeing the others'
        variants and caches, millions of objects on a large vocabulary, is the diagnosis's time,
        counted in ``seconds``."""
        started = time.perf_counter()
        releases, self._releases = self._releases or {}, {}
        for backend in releases.values():
            try:
                backend.close()
            except Exception:  # pragma: no cover - each is closed whatever the one before did
                pass
        self._diagnosers.clear()
        self._of_file.clear()
        self.reference = self.chat_reference = None
        self.seconds += time.perf_counter() - started

    def decoding_reference(self) -> Any:
        """The RefTokenizer of the decoder's file (the model's own where it is that file)."""
        if self.decoder_file is None:
            return self.reference_tokenizer()
        return self._reference_of(self.decoder_file)

    def _reference_of(self, path: str) -> Any:
        """The RefTokenizer of another of the model's files, made once (the decoder's and the encode
        oracle's are one file with --oracle hf)."""
        if path not in self._of_file:
            from tokparity.reference import RefTokenizer
            self._of_file[path] = RefTokenizer(load_vocab(path))
        return self._of_file[path]

    def chat(self) -> Any:
        """The chat reference that reproduces ``--ops chat`` causes (None: the model has no template)."""
        if self.chat_reference is None:
            from tokparity.chat.reference import ChatReference, prompt_encoder
            from tokparity.chat.template import find_template, gguf_template
            from tokparity.zoo import resolve_model

            template = model = None
            for spec in (self.model_name, self.model_file):  # (the zoo name finds every file; a label does not)
                try:
                    model = resolve_model(spec)
                    template = find_template(model)
                except TokparityError:
                    continue
                if template is not None:
                    break
            reference = self.reference_tokenizer()
            if template is None or model is None or reference is None:
                return None
            self.chat_reference = ChatReference(template, prompt_encoder(reference.encode, reference.vocab),
                                                reference.vocab.special_ids.get("bos"),
                                                gguf_template=gguf_template(model, template))
        return self.chat_reference

    def reference_tokenizer(self) -> Any:
        """The model's RefTokenizer, made on first use (None, said once: the model has none)."""
        if self.reference is None and not self._no_reference:
            try:
                from tokparity.reference import reference_of
                vocab = self._vocab if self._vocab is not None else load_vocab(self.model_file)
                self.reference = reference_of(vocab)
            except TokparityError as e:
                self._no_reference = True
                self.options.say(f"{self.model_name}: no root causes: {e}")
        return self.reference

    def _asked(self, op: str) -> DecodeSettings:
        """The DecodeSettings ``op`` decodes with, a stream's with the run's step."""
        asked = self.options.decoding.for_op(op)
        return replace(asked, step=self.options.stream_step) if op == "stream" else asked

    def agreed(self, backend: str, text: str) -> None:
        """``backend`` agreed with the oracle on ``text`` (fuzz): a variant that would change it is not
        that backend's, and a case's search is told so (search.REFUTED_BY_AGREEMENTS)."""
        self._agreeing.setdefault(backend, deque(maxlen=AGREEING_KEPT)).append(text)

    def agreed_ids(self, backend: str, op: str, ids: Sequence[int], prompt: int, label: str) -> None:
        """``backend`` agreed with the decoder on ``op`` for these ids (fuzz): its verdict on that op
        is checked on them, as a compare's is on every agreement."""
        kept = self._agreeing_ids.setdefault((backend, op), [])
        if len(kept) < AGREEING_IDS_KEPT:
            kept.append((list(ids), prompt, label))

    def diagnose_one(self, j: Judgement) -> Diagnosis | None:
        """The search's diagnosis of one judgement (None: none is made)."""
        if j.cls == "crash" and j.op == "encode" and self.options.diagnose and j.oracle_ids:
            return self._failure(j)
        # (an engine's crash on a decoding op may be reproduced: a strict decoder fails where the
        # bytes are not UTF-8; the decoder's own failure is not the engine's)
        if j.cls == "timeout" or (j.cls == "crash" and (j.op in ("encode", "chat") or not backend_failed(j))) \
                or not self.options.diagnose:
            return None
        if j.op == "chat":
            started = time.perf_counter()
            try:
                reference = self.chat()
                if reference is None:
                    return None
                # (the ways tried depend on the backend's name only where a way is one library's)
                key: tuple = ("chat", j.cls, j.text, tuple(j.backend_output), tuple(j.backend_ids),
                              j.tags.get("gave"), tuple(v.applies(j.backend) for v in CHAT_VARIANTS))
                return self._shared_by(key, lambda: diagnose_chat(reference, j), _searched_whole)
            except Exception as e:  # a diagnosis never stops a run; the case keeps its class
                return Diagnosis("", f"the diagnosis failed: {type(e).__name__}: {e}", stage="chat")
            finally:
                self.seconds += time.perf_counter() - started
        if j.op != "encode":  # ids back to text: the reference's decoding changed, not its encoder
            started = time.perf_counter()
            try:
                reference = self.decoding_reference()
                if reference is None:
                    return None
                asked = self._asked(j.op)
                key = (j.op, tuple(j.oracle_ids), j.tags.get("prompt"), tuple(j.backend_output), backend_failed(j), asked)
                return self._shared_by(key, lambda: diagnose_decoding(reference, j, asked))
            except Exception as e:  # a diagnosis never stops a run; the case keeps its class
                return Diagnosis("", f"the diagnosis failed: {type(e).__name__}: {e}", stage=j.op)
            finally:
                self.seconds += time.perf_counter() - started
        if j.cls == "vocab-mismatch":
            cause = Cause("vocab.mismatch", j.evidence)
        else:
            started = time.perf_counter()  # making the reference's variants, on first use, is the diagnosis's too
            try:
                diagnoser = self.diagnoser()
                if diagnoser is None:
                    return None
                cause = diagnoser.diagnose(j.text, list(j.oracle_ids), list(j.backend_ids), j.backend, symptom=j.cls,
                                           oracle=j.oracle, agreeing=tuple(self._agreeing.get(j.backend, ())))
            except Exception as e:  # a diagnosis never stops a run; the case keeps its class
                cause = Cause("", f"the diagnosis failed: {type(e).__name__}: {e}")
            finally:
                self.seconds += time.perf_counter() - started
        # A proof decides the class; a stage-level cause only locates.
        return Diagnosis(cause.name, cause.detail, cause.keys, cause.alternatives,
                         decides_class=cause.reproduced or cause.name == TIE, stage=stage_of_cause(cause.name))

    def _shared_by(self, key: tuple, make: Callable[[], Diagnosis | None],
                   kept: Callable[[Diagnosis | None], bool] = lambda _: True) -> Diagnosis | None:
        """The diagnosis kept for ``key`` (what the search reads of a case), else ``make()``'s,
        kept where ``kept`` says so."""
        if key in self._shared:
            return self._shared[key]
        found = make()
        if kept(found):
            if len(self._shared) >= SHARED_KEPT:
                self._shared.clear()
            self._shared[key] = found
        return found

    def _failure(self, j: Judgement) -> Diagnosis | None:
        """A backend's crash where the oracle answered: the variant whose engine fails there too
        (a plain JavaScript object's inherited names), or None. The class stays a crash."""
        started = time.perf_counter()
        try:
            diagnoser = self.diagnoser()
            cause = diagnoser.failure(j.text, list(j.oracle_ids), j.evidence) if diagnoser is not None else None
        except Exception as e:  # a diagnosis never stops a run; the case keeps its class
            return Diagnosis("", f"the diagnosis failed: {type(e).__name__}: {e}")
        finally:
            self.seconds += time.perf_counter() - started
        if cause is None or not cause.reproduced:
            return None
        return Diagnosis(cause.name, cause.detail, cause.keys, cause.alternatives, stage=stage_of_cause(cause.name))

    def diagnose_new(self, judgements: Sequence[Judgement]) -> list[Diagnosis | None]:
        """The search's diagnosis of each judgement not diagnosed yet (``judgements``: the model's so
        far, in case order), returned in order. Fuzz calls it as it goes, so its time is within the
        run's budget and no judgement is diagnosed twice."""
        new = [self.diagnose_one(j) for j in judgements[len(self._current):]]
        self._current.extend(new)
        return new

    def diagnose_all(self, judgements: Sequence[Judgement], not_agreeing: dict[tuple[str, str], set[int]],
                     corpora: list[str] | None) -> None:
        """The diagnosis of every judgement not diagnosed yet (``judgements``: the model's so far,
        in case order), then each backend's run-level verdict on each op (the agreeing cases are
        read again from ``corpora``, skipping the positions ``not_agreeing`` names per (backend,
        op); None: no agreements to check)."""
        if not self.options.diagnose:
            return
        self.diagnose_new(judgements)
        self._prefer_causes(judgements)
        self._chat_verdicts(judgements, not_agreeing, corpora)
        self._decoding_verdicts(judgements, not_agreeing, corpora)
        started = time.perf_counter()
        diagnoser: Diagnoser | None = None
        base_of: dict[str, list[int] | None] = {}
        for name, op in not_agreeing:
            if op != "encode":
                continue
            # (a tie is not the backend's deviation: two optima of the same model)
            mine = [(i, j, d) for i, (j, d) in enumerate(zip(judgements, self._current))
                    if j.backend == name and j.op == "encode" and d is not None]
            mismatches = [(i, j, d) for i, j, d in mine if d.cause != TIE]
            if not any(d.variants or d.alternatives for _, _, d in mismatches):
                continue
            diagnoser = self.diagnoser()  # made already: a variant reproduced one of these
            if diagnoser is None:
                continue
            cases = list(self._cases(corpora, not_agreeing[(name, op)])) if corpora is not None else []
            if self.encoder_file is not None:
                cases = [(label, text) for label, text in cases if self._same_in_both_files(text, base_of)]
            label_of: dict[str, str] = {}
            for label, text in cases:  # (a text in two corpora: named by its first case)
                label_of.setdefault(text, label)
            # Once a crash is reproduced (the reference fails there too), every crash of the backend's
            # where the oracle answered is a case the verdict must account for: a cause that fails on
            # some texts is proven only where it fails on nearly all those the engine failed on.
            crashes = [(j, UNREPRODUCED) for j, d in zip(judgements, self._current)
                       if d is None and j.backend == name and j.op == "encode" and j.cls == "crash" and j.oracle_ids] \
                if any(j.cls == "crash" and d.variants for _, j, d in mismatches) else []
            verdict = root_cause(diagnoser, [(j, d) for _, j, d in mismatches] + crashes, [t for _, t in cases],
                                 base_of, partial(_named_by, label_of))
            if verdict is None:
                continue
            completed = verdict_parts(diagnoser, [(j, d) for _, j, d in mine], verdict)
            for k, (i, _, d) in enumerate(mine):  # (each pass's own: regress diagnoses a model twice)
                self._current[i] = completed.get(k) or (replace(d, verdict_parts=()) if d.verdict_parts else d)
            # A tie the proven verdict reproduces is that verdict's (tokparity.run.decide): one
            # more mismatch it explains.
            reclaimed = sum(1 for k in completed if mine[k][2].cause == TIE) if verdict.proven else 0
            self.root_causes[(name, op)] = replace(verdict, explains=verdict.explains + reclaimed,
                                             mismatches=verdict.mismatches + reclaimed)
        if diagnoser is not None:
            diagnoser.forget()
        self.seconds += time.perf_counter() - started

    def _same_in_both_files(self, text: str, base_of: dict[str, list[int] | None]) -> bool:
        """Whether the model file's reference gives ``text`` the ids the encode oracle's file gives
        (``base_of``: the model file's, shared with the verdict)."""
        try:
            oracle_file = self._reference_of(cast(str, self.encoder_file))
        except TokparityError as e:  # (every agreement checks the verdict, as on the model's own file)
            self.options.say(f"{self.model_name}: the encode oracle's file is not read for the verdict: {e}")
            self.encoder_file = None
            return True
        options, diagnoser = self.options, cast(Diagnoser, self.diagnoser())
        if text not in base_of:
            base_of[text] = diagnoser.encode_remembered((), text)
        try:
            theirs = oracle_file.encode(text, options.add_special, options.parse_special)
        except Exception:  # (the oracle's file's reference fails here: this text tells nothing)
            return False
        return base_of[text] == theirs

    def _prefer_causes(self, judgements: Sequence[Judgement]) -> None:
        """A decoding op's mismatches that several variants reproduce: each engine's, per op, named
        by the variant that reproduces most of them (tokparity.diagnose.decoding.prefer; a chat's:
        _chat_verdicts)."""
        groups: dict[tuple[str, str], list[int]] = {}
        for i, j in enumerate(judgements):
            d = self._current[i]
            if j.op != "encode" and d is not None and d.variants:
                groups.setdefault((j.backend, j.op), []).append(i)
        for (_, op), positions in groups.items():
            if op == "chat":  # (chosen with the agreements weighed: _chat_verdicts)
                continue
            chosen = prefer([cast(Diagnosis, self._current[i]) for i in positions])
            for i, d in zip(positions, chosen):
                self._current[i] = d

    def _chat_verdicts(self, judgements: Sequence[Judgement], not_agreeing: dict[tuple[str, str], set[int]],
                       corpora: list[str] | None) -> None:
        """Each engine's run-level verdict on its prompts (tokparity.diagnose.chat.chat_verdict),
        checked on the conversations it agreed on, and each conversation's cause chosen with them.
        Where the agreements are not known (fuzz) or the verdict fails, the causes are chosen
        without them (prefer_chat) and no verdict is made."""
        started = time.perf_counter()
        groups: dict[str, list[int]] = {}
        for i, j in enumerate(judgements):
            if j.op == "chat" and self._current[i] is not None:
                groups.setdefault(j.backend, []).append(i)
        for name, positions in groups.items():
            mine = [(judgements[i], cast(Diagnosis, self._current[i])) for i in positions]
            if not any(d.variants for _, d in mine):
                continue
            chosen, verdict = None, None
            if self.chat_reference is not None and (name, "chat") in not_agreeing:
                try:
                    from tokparity.chat.conversation import Conversation
                    skip = not_agreeing[(name, "chat")]
                    cases = list(self._cases(corpora, skip)) if corpora is not None else []
                    agreeing = [Conversation.from_text(text, "agreement") for _, text in cases]
                    chosen, verdict = chat_verdict(self.chat_reference, mine, agreeing, [label for label, _ in cases])
                except Exception as e:  # a diagnosis never stops a run: the rows keep their own causes
                    self.options.say(f"{self.model_name}: no run-level verdict for {name}'s prompts: "
                                     f"{type(e).__name__}: {e}")
            for i, d in zip(positions, chosen or prefer_chat([d for _, d in mine])):
                self._current[i] = d
            if verdict is not None:
                self.root_causes[(name, "chat")] = verdict
        self.seconds += time.perf_counter() - started

    def _decoding_verdicts(self, judgements: Sequence[Judgement], not_agreeing: dict[tuple[str, str], set[int]],
                           corpora: list[str] | None) -> None:
        """Each engine's run-level verdict on each decoding op where a variant reproduced a mismatch
        (tokparity.diagnose.decoding_verdict), checked on the cases it agreed on."""
        started = time.perf_counter()
        encoded: dict[str, list[int]] = {}  # each text's ids, encoded once for every (backend, op)
        # (no corpus, as fuzz and regress: a verdict is checked on the sequences fuzz was told agreed, if any)
        pairs = not_agreeing.items() if corpora is not None else \
            ((k, set[int]()) for k in dict.fromkeys((j.backend, j.op) for j in judgements))
        for (name, op), skip in pairs:
            mine = [(j, d) for j, d in zip(judgements, self._current) if j.backend == name and j.op == op
                    and d is not None]
            if op in ("encode", "chat") or not any(d.variants for _, d in mine):
                continue
            reference = self.decoding_reference()
            if reference is None:
                continue
            agreeing = self._decoding_cases(corpora, skip, op, encoded) if corpora is not None else \
                iter(self._agreeing_ids.get((name, op), ()))
            try:
                verdict = decoding_verdict(reference, op, self._asked(op), mine, agreeing,
                                           self.options.stream_step)
            except Exception as e:  # a diagnosis never stops a run: the rows keep their own causes
                self.options.say(f"{self.model_name}: no run-level verdict for {name}'s {op}: {type(e).__name__}: {e}")
                continue
            if verdict is None:
                continue
            self.root_causes[(name, op)] = verdict
            for i, (j, d) in enumerate(zip(judgements, self._current)):
                if j.backend == name and j.op == op and d is not None:
                    self._current[i] = self._as_verdict_reads(reference, j, d, verdict)
        self.seconds += time.perf_counter() - started

    def _as_verdict_reads(self, reference: Any, j: Judgement, d: Diagnosis, verdict: RootCause) -> Diagnosis:
        """One decoding row's diagnosis as its engine's verdict reads it. A proven verdict names
        each row it reproduces (one engine, one cause; a pair's rows by the part that gives them).
        A stream that came whole is read as the verdict reads such streams."""
        asked = self._asked(j.op)
        if verdict.proven and j.op == "decode" and is_decode_pair(verdict.variants):
            d = as_pair(reference, j, d, (verdict.variants[0], verdict.variants[1]), asked)
        elif verdict.proven and j.op == "pieces" and len(verdict.variants) == 2 and not d.variants:
            d = as_pieces_pair(reference, j, d, (verdict.variants[0], verdict.variants[1]), asked)
        elif verdict.proven and d.variants[:1] not in [(cause,) for cause in verdict.variants]:
            named = (as_verdict(reference, j, d, cause, asked) for cause in verdict.variants)
            d = next((n for n in named if n.variants[:1] != d.variants[:1]), d)
        if verdict.cause in HELD and d.variants and d.variants[0] in HELD:
            d = as_held(d, verdict.cause, len(j.oracle_ids) - int(j.tags.get("prompt", 0) or 0))
        return d

    def sampled_verdict(self, name: str, mismatches: Sequence[tuple[Judgement, Diagnosis | None]],
                        agreeing: Sequence[str]) -> RootCause | None:
        """fuzz of texts: ``name``'s encode verdict, weighed on a sample of its mismatches and of the
        texts it agreed on. A compare's verdict weighs every case; a fuzz run keeps too many. As
        in compare, once a crash is reproduced every crash of the sample counts."""
        started = time.perf_counter()
        try:
            mine = [(j, d) for j, d in mismatches if d is not None and d.cause != TIE]
            diagnoser = self.diagnoser() if any(d.variants or d.alternatives for _, d in mine) else None
            if diagnoser is None:
                return None
            crashes = [(j, UNREPRODUCED) for j, d in mismatches if d is None and j.cls == "crash" and j.oracle_ids] \
                if any(j.cls == "crash" and d.variants for j, d in mine) else []
            base_of: dict[str, list[int] | None] = {}
            texts = [t for t in agreeing if self.encoder_file is None or self._same_in_both_files(t, base_of)]
            verdict = root_cause(diagnoser, mine + crashes, texts, base_of)
            if verdict is not None:
                self.root_causes[(name, "encode")] = verdict
            return verdict
        finally:
            self.seconds += time.perf_counter() - started

    def diagnose_as_run(self, j: Judgement) -> Diagnosis | None:
        """One judgement diagnosed alone, then read as its engine's verdict on the op reads its rows
        (fuzz names and shrinks a finding under the name the whole run gave it)."""
        d = self.diagnose_one(j)
        verdict = self.root_causes.get((j.backend, j.op))
        if j.op == "encode" and d is not None and verdict is not None:
            diagnoser = self.diagnoser()
            return d if diagnoser is None else verdict_parts(diagnoser, [(j, d)], verdict).get(0, d)
        reference = self.decoding_reference() if verdict is not None and j.op not in ("encode", "chat") else None
        return d if d is None or reference is None or verdict is None else \
            self._as_verdict_reads(reference, j, d, verdict)

    def _decoding_cases(self, corpora: list[str], skip: set[int], op: str, encoded: dict[str, list[int]]
                        ) -> Iterator[tuple[list[int], int, str]]:
        """The (ids, prompt, corpus/id) of each case of ``op`` not in ``skip``, as the judge made them: each
        text's ids (the reference's encoding stands for the oracle's, as for encode's verdict; kept
        in ``encoded``), then the id sequences of the model's vocabulary where the run decoded them.
        A text's ids are the decoder's file's: the oracle that gave them reads it too (a derived
        tokenizer.json with ``--oracle hf``), or another file of the same vocabulary. The id
        sequences are made from the model's vocabulary, as the judge made them."""
        reference, model = self.decoding_reference(), self.reference_tokenizer()
        if reference is None or model is None:
            return
        options, least = self.options, STREAM_PROMPT if op == "stream" else 0
        n = -1
        for n, case in numbered_cases(corpora, options.max_chars):
            if n not in skip and not is_too_long(case, options.max_chars):
                ids = encoded.get(case.text)
                if ids is None:
                    ids = encoded[case.text] = reference.encode(case.text, options.add_special, options.parse_special)
                if len(ids) > least:
                    yield ids, least, f"{case.corpus}/{case.id}"
        if {ID_CORPUS, "all"} & set(corpora):
            for k, made in enumerate(id_cases(model.vocab), start=n + 1):
                if k not in skip and made.asked(op):
                    yield list(made.ids), made.prompt if op == "stream" else 0, f"{ID_CORPUS}/{made.id}"

    def _cases(self, corpora: list[str], skip: set[int]) -> Iterator[tuple[str, str]]:
        """Each agreeing case's label (corpus/id) and text, in case order."""
        max_chars = self.options.max_chars
        for n, case in numbered_cases(corpora, max_chars):
            if n not in skip and not is_too_long(case, max_chars):
                yield f"{case.corpus}/{case.id}", case.text

    # -- what was named, here or elsewhere -------------------------------------------------------

    def named(self, judgements: Sequence[Judgement]) -> Diagnosed:
        """What the diagnosis has named so far of ``judgements`` (the model's, in case order; a
        run stopped half-way has some undiagnosed: None)."""
        current = self._current[:len(judgements)]
        return Diagnosed(tuple(current) + (None,) * (len(judgements) - len(current)), dict(self.root_causes),
                         tuple((j.backend, j.case_id) for j in judgements), self.seconds)

    def take(self, named: Diagnosed, judgements: Sequence[Judgement]) -> bool:
        """The causes another process ``named`` for this model, when it judged every case in
        order; False (nothing taken) when its judgements are not these."""
        if named.keys != tuple((j.backend, j.case_id) for j in judgements):
            return False
        self._current = list(named.diagnoses)
        self.root_causes = dict(named.root_causes)
        self.seconds += named.seconds
        return True
