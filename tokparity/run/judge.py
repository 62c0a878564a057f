"""The judge step of ``compare``: every case on every backend, each against the model's oracle.

For one model the run is:

    cases ──► oracle.encode ──► for each backend: encode ──► equal? ──► no: align, stage, classify
                                                           ──► crash / timeout: recorded, run goes on

The oracle is the library the model was trained with unless the user names one (tokparity.run.oracle):
SentencePiece for a ``.model``, Hugging Face tokenizers for a ``tokenizer.json``, then the golden
ids of llama.cpp's ``.inp/.out`` where they hold the text (they were made with the original HF
tokenizers), then llama.cpp. Results are plain records (``tokparity.run.results``); rendering is the reports' job.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from tokparity.backends.base import NO_ADD_SPECIAL_SWITCH, NO_PARSE_SPECIAL_SWITCH, Answer, Backend
from tokparity.backends.beside import MadeBeside
from tokparity.backends.registry import backends_for
from tokparity.backends.runner import ask, ask_many
from tokparity.chat import PARTS_CHECK, SPECIALS_CHECK, TEMPLATE_CHECK
from tokparity.chat.conversation import CONVERSATION_TAG
from tokparity.chat.template import find_template
from tokparity.corpus import Case, is_too_long, numbered_cases
from tokparity.corpus.ids import ID_CORPUS, STREAM_PROMPT, IdCase, numbered_id_cases
from tokparity.diff.align import align
from tokparity.diff.classify import classify
from tokparity.diff.shape import encode_failure_shape, encode_shape
from tokparity.errors import TokparityError
from tokparity.records import AGREE, NOT_APPLICABLE, SKIPPED, CaseRecord, Judgement, Verdict
from tokparity.run.memory import collector_paused
from tokparity.run.messages import Started
from tokparity.run.ops import DecodingJudge, compared_backends, decoder_of, judged_by_op, timed
from tokparity.run.options import CompareOptions
from tokparity.run.oracle import oracle_chain
from tokparity.run.results import ResultsSoFar, join_backends
from tokparity.run.stages import first_stage
from tokparity.textview import single_line
from tokparity.vocab import Vocab, load_vocab
from tokparity.vocab.special_texts import SpecialTextFinder
from tokparity.zoo import resolve_model

if TYPE_CHECKING:
    from tokparity.run.chat import ChatJudge



def _partition(answers: dict[str, Answer]) -> list[list[str]]:
    groups: dict[object, list[str]] = {}
    for name, ans in answers.items():
        if ans.status == "skipped":
            continue
        key = tuple(ans.ids) if ans.status == "ok" else ans.status
        groups.setdefault(key, []).append(name)
    return sorted(groups.values(), key=lambda g: -len(g))


class ModelRun:
    """One model's vocabulary and backends: it asks them and judges each case (``judge``), the
    first step of tokparity.run.pipeline. It neither counts nor diagnoses: the pipeline does."""

    def __init__(self, spec: str, backend_names: list[str] | None, options: CompareOptions, results: ResultsSoFar):
        started = time.perf_counter()
        try:
            with collector_paused():
                self._load(spec, backend_names, options, results)
        except BaseException:  # (the backends made before the failure: closed, not left running)
            ready = list(options.services.ready.values())
            for backend in getattr(self, "backends", {}).values():
                if not any(backend is b for b in ready):
                    backend.close()
            gc.unfreeze()
            raise
        self.timing["load"] = time.perf_counter() - started

    def _load(self, spec: str, backend_names: list[str] | None, options: CompareOptions, results: ResultsSoFar) -> None:
        from tokparity.backends.registry import (
            BUILTIN,
            builtin_name,
            in_this_process,
            labelled_with_oracle,
            loads_beside,
            make_backend,
            split_label,
            witnesses,
        )

        self.model = resolve_model(spec)
        self.options = options
        self.results = results
        self.vocab: Vocab = load_vocab(self.model.primary[1])
        self.chain = oracle_chain(self.model, options)
        names = list(backend_names) if backend_names else backends_for(self.model)
        args = labelled_with_oracle(names, options.oracle)  # label -> -b argument (mine -> mine=cmd:…)
        # (regress --ops chat: the library that encoded the stored prompts encodes the live template's)
        encoder = [options.services.prompts.encoder] if options.chat and options.services.prompts else []
        # The libraries of the files a cmd: engine reads, asked beside it (registry.witnesses); a
        # witness not asked for otherwise is loaded for that alone, and not judged. In a chat run only
        # a server has one: an engine's prompt builder is its own code, whatever file it reads.
        witness_of = {name: witnesses(args[name], self.model) for name in args
                      if not options.chat or split_label(args[name])[1].startswith("http:")}
        witness = [w for w in dict.fromkeys(w for ws in witness_of.values() for w in ws)
                   if w not in self.chain and w not in args]
        wanted = list(dict.fromkeys(self.chain + encoder + list(args) + witness))
        self.backends: dict[str, Backend] = {}
        timeouts = {"timeout": options.timeout} if options.timeout else {}  # cmd: and child-process backends
        # (a resumed run's engines start in the folder it began in: their relative paths point there)
        folder = {"cwd": options.engine_folder} if options.engine_folder else {}
        # A chat template is code from a file, and transformers renders it in process: in a chat run
        # every library runs in a child, where a template that loops is a timeout, not a hang.
        isolated = {"isolate": True} if options.chat else {}

        def make(name: str) -> Backend:
            builtin = BUILTIN.get(builtin_name(args.get(name, name)))
            # (a server renders in its own process already, and its first build takes minutes)
            engine = split_label(args.get(name, name))[1].strip().startswith(("cmd:", "py:"))
            return make_backend(args.get(name, name), self.model, **timeouts,
                                **(isolated if builtin and not builtin.starts_server else {}),
                                **(folder if engine else {}))

        # llama.cpp loads on a thread while the others load here (beside.py). Only where every other
        # backend is a library of this process (a process started meanwhile could inherit a lock
        # the thread holds), and only one llama.cpp loads (they share one log).
        isolate = isolated.get("isolate")
        asked = [name for name in wanted if name not in options.services.ready]
        in_c = [name for name in asked if loads_beside(args.get(name, name), self.model, isolate)]
        beside = None
        if len(in_c) == 1 and all(in_this_process(args.get(name, name), self.model, isolate) for name in asked):
            with contextlib.suppress(RuntimeError):  # (no thread to be had: it loads here, in its turn)
                beside = MadeBeside(partial(make, in_c[0]), in_c[0])
        made: dict[str, Backend | TokparityError] = {}

        def refused(name: str, e: TokparityError) -> None:
            """A backend that cannot be made: the run stops, or goes on without it and says so."""
            if name in witness:  # (a witness that cannot load: the engine is judged as it would be alone)
                return
            if name in encoder and name not in args:
                raise TokparityError(f"{self.model.name}: the goldens' prompts were encoded by {name}, which cannot be "
                                     f"loaded here ({e}); install it, or remake the goldens with `tokparity regress "
                                     "--update`") from None
            if options.explicit_backends or name in self.chain:
                raise e
            results.options.setdefault("unavailable", []).append(f"{self.model.name}/{name}: {e}")
            options.say(f"skipping {name} on {self.model.name}: {e}")

        try:
            for name in wanted:  # (beside llama.cpp: each made first, each error said below in this order)
                if name in options.services.ready:
                    made[name] = options.services.ready[name]
                elif beside is None or name != in_c[0]:
                    try:
                        made[name] = make(name)
                    except TokparityError as e:
                        made[name] = e
                        if beside is None:
                            refused(name, e)
            if beside is not None:
                try:
                    made[in_c[0]] = beside.take()
                except TokparityError as e:
                    made[in_c[0]] = e
                for name in wanted:
                    outcome = made[name]
                    if isinstance(outcome, TokparityError):
                        refused(name, outcome)
        finally:
            if beside is not None:
                beside.drop()
            self.backends.update((name, b) for name in wanted if isinstance(b := made.get(name), Backend))
        self.witness_of = {name: [w for w in ws if w in self.backends] for name, ws in witness_of.items()}
        for name, b in self.backends.items():
            named = split_label(args.get(name, name))[1]  # what a name stands for: kept beside its version
            # (a witness not asked for has no row on this model: it is named with the engines it stands beside)
            its_engines = [engine for engine, ws in self.witness_of.items() if name in ws] if name in witness else []
            join_backends(results.backends, {name: {"version": b.version} | ({"spec": named} if named != name else {})
                                             | ({"witness_of": {self.model.name: its_engines}} if its_engines else {})})
        self.decoder = self._decoder(options, results) if options.decoding_ops else None
        # (a chat run lists the backends that apply chat templates: the others have no such op; the
        # template's own check of string against list-of-parts content, where it reads parts; and,
        # against stored prompts, the template as tokparity renders and encodes it today)
        # (loaded only to encode the template's prompts, or as a witness: not judged)
        self.listed = [n for n, b in self.backends.items() if (not options.chat or b.supports("chat")) and
                       (n not in encoder or n in args) and n not in witness]
        self.template = find_template(self.model) if options.chat else None
        if self.template is not None:
            self.listed.append(SPECIALS_CHECK)
        if self.template is not None and options.services.prompts is not None:
            self.listed.append(TEMPLATE_CHECK)
        if self.template is not None and self.template.reads_parts:
            self.listed.append(PARTS_CHECK)
        self.compared = compared_backends(self.chain, self.listed)  # judged for encode
        self.by_op = judged_by_op(options.ops, self.chain, self.decoder, self.listed)
        self.timing = results.model_timing(self.model.name)
        self._stage_ref: Backend | None = None
        self._special_texts: SpecialTextFinder | None = None  # (not_applicable's)
        self.decoding = DecodingJudge(self.model.name, self.vocab, self.backends, self.decoder, self.by_op,
                                      options.decoding, options.stream_step, self.witness_of) \
            if self.decoder is not None else None
        self.chatting = self._chat_judge(options, results) if options.chat else None
        if options.parse_special and "encode" in options.ops and self.chain[:1] == ["sentencepiece"]:
            # (else every engine that honours the flag differs on '<s>', and nothing said why up front)
            results.options.setdefault("notes", []).append(
                f"{self.model.name}: sentencepiece, the oracle, never parses special-token text. With "
                "--parse-special, an engine that parses it differs there (specials.parse).")

    def _chat_judge(self, options: CompareOptions, results: ResultsSoFar) -> ChatJudge | None:
        """Who judges ``--ops chat``: the model's template rendered as transformers renders it, the
        prompt encoded by the oracle, or the prompts regress's goldens stored (None, said once: the
        model's files carry no template)."""
        from tokparity.run.chat import ChatJudge, chat_reference

        stored = options.services.prompts
        oracle = stored.encoder if stored else next((name for name in self.chain if name != "golden"), None)
        if self.template is None or oracle is None:
            why = (f"{self.model.name}: its files carry no chat template: --ops chat has nothing to judge"
                   if self.template is None else
                   f"{self.model.name}: no library in the oracle chain encodes the prompt: --ops chat is not judged")
            results.options.setdefault("unavailable", []).append(why)
            options.say(why)
            return None
        reference = chat_reference(self.template, self.backends[oracle], self.vocab, options.timeout, self.model)
        if reference.ignores_generation_prompt():  # (a ✅ on that setting would promise what was not checked)
            note = (f"{self.model.name}: its chat template writes the same prompt whether "
                    "add_generation_prompt is asked or not: an engine's handling of add_generation_prompt is "
                    "not checked on this model, and one that follows it differs where the template does not")
            results.options.setdefault("notes", []).append(note)  # (the terminal shows it with the summary)
        # (judged by stored prompts, the records name the goldens as the oracle, as encoding's do)
        return ChatJudge(self.model.name, self.vocab, self.backends, reference, self.chain[0] if stored else oracle,
                         self.by_op["chat"], stored.answer if stored else None, self.witness_of)

    def _decoder(self, options: CompareOptions, results: ResultsSoFar) -> str | None:
        """Who judges the decoding ops (tokparity.run.ops.decoder_of), said where it is not the
        oracle's library or where nobody can decode as asked."""
        # (decode's settings where decode is asked; a stream takes skip_special only, pieces none)
        settings = options.decoding if "decode" in options.ops else options.decoding.for_stream()
        decoder = decoder_of(self.chain, self.backends, settings)
        first = decoder_of(self.chain, self.backends)
        if decoder != first:
            asked = settings.described()
            why = (f"{self.model.name}: {first} cannot decode with {asked}: " +
                   (f"the decoding ops are judged against {decoder} (tokparity's reference)" if decoder else
                    "the decoding ops are not judged (add -b ref to judge them against tokparity's reference)"))
            results.options.setdefault("unavailable", []).append(why)
            options.say(why)
        return decoder

    def close(self) -> None:
        started = time.perf_counter()
        chatting = getattr(self, "chatting", None)
        if chatting is not None:
            chatting.reference.close()
        stage_ref, self._stage_ref = self._stage_ref, None
        if stage_ref is not None and stage_ref not in self.backends.values():
            stage_ref.close()
        del stage_ref
        # Each backend is let go of here, where it is timed: freeing a model's millions of
        # objects is part of closing it, not of whatever line drops the last reference later.
        while self.backends:
            self.backends.popitem()[1].close()
        gc.unfreeze()  # what collector_paused() froze: collected as usual from here on
        self.timing["close"] = self.timing.get("close", 0.0) + time.perf_counter() - started

    def reask(self, options: CompareOptions) -> None:
        """The same vocabulary and backends, asked something else from here on (regress judges a
        model twice, add_special off then on, its backends loaded once)."""
        self.options = options

    def started(self) -> Started:
        """What a worker or an actor says once it has loaded this model."""
        return Started(self.chain, self.listed, self.decoder, self.results.backends, self.results.options,
                       self.timing["load"])

    def stage_reference(self, oracle_name: str, text: str, oracle_ids: list[int],
                        ref_answer: Answer | None = None) -> Backend:
        """Whose stages stand for the oracle's. llama.cpp and golden ids expose no normalizer or
        pre-tokenizer; tokparity's reference does, and where it gives the oracle's ids on this
        very text its stages are a faithful account of how the oracle got there."""
        oracle = self.backends[oracle_name]
        if oracle.supports("pre_tokenize"):
            return oracle
        if self._stage_ref is None:
            try:
                from tokparity.backends.registry import make_backend
                self._stage_ref = self.backends.get("ref") or make_backend("ref", self.model)
            except TokparityError:
                self._stage_ref = oracle
        ref = self._stage_ref
        if ref is oracle:
            return oracle
        if ref_answer is not None and ref is self.backends.get("ref"):  # its answer on this case is in hand
            return ref if ref_answer.status == "ok" and ref_answer.ids == oracle_ids else oracle
        try:
            same = ref.encode(text, self.options.add_special, self.options.parse_special) == oracle_ids
        except Exception:
            same = False
        return ref if same else oracle

    def ask(self, texts: list[str]) -> list[dict[str, Answer]]:
        """Every backend's answer on each text, one ``encode_many`` per backend (only the oracle
        chain's when the run does not judge encoding: it gives the ids the other ops decode)."""
        add_special, parse_special = self.options.add_special, self.options.parse_special
        asked = self.backends if "encode" in self.options.ops else \
            {name: b for name, b in self.backends.items() if name in self.chain}
        per_backend = {name: ask_many(b, texts, add_special, parse_special) for name, b in asked.items()}
        if not per_backend:
            return [{} for _ in texts]
        # (each text's answers, a row across the backends: zipped, not indexed, per case)
        names = list(per_backend)
        return [dict(zip(names, row)) for row in zip(*per_backend.values(), strict=True)]

    def judge_many(self, batch: list[tuple[int, Case]]) -> list[CaseRecord]:
        """The records of ``batch`` ((position, case) pairs), in its order; every backend is asked
        ``JudgedCases.BATCH`` texts at a time (``encode_many``)."""
        if self.options.chat:  # conversations: nothing is encoded before
            return [self.chat_record(case, n) for n, case in batch]
        conversation = next((case for _, case in batch if case.tags.get(CONVERSATION_TAG)), None)
        if conversation is not None:
            raise TokparityError(f"{conversation.corpus}/{conversation.id}: a conversation, not a text; run a corpus "
                                 "of conversations with --ops chat")
        records: list[CaseRecord] = []
        for start in range(0, len(batch), JudgedCases.BATCH):
            chunk = batch[start:start + JudgedCases.BATCH]
            answers = self.ask([case.text for _, case in chunk])
            for (n, case), answer in zip(chunk, answers):
                records += self.records(case, n, answer)
        return records

    def records(self, case: Case, n: int, answers: dict[str, Answer]) -> list[CaseRecord]:
        """``case``'s record for each op the run asks: encode's (``judge``), then the decoding ops'
        on the oracle's ids for its text (a text of one id is not streamed: no prompt before it)."""
        out = [self.judge(case, n, answers)] if "encode" in self.options.ops else []
        if not self.options.decoding_ops:  # (encoding alone: the usual run)
            return out
        if self.decoding is None:  # (no library decodes: a record of no verdicts per op, so the case is whole)
            return out + [CaseRecord(self.model.name, n, case.id, case.corpus, self.chain[0], case.rate_keys,
                                     op=op) for op in self.options.decoding_ops]
        oracle_name = next((name for name in self.chain if answers[name].status == "ok"), self.chain[0])
        ids, keys = answers[oracle_name].ids, case.rate_keys
        # (the oracle chain encoded the text: in a run that judges no encoding its time is counted with the first op)
        spent = {name: answer.seconds for name, answer in answers.items()} if "encode" not in self.options.ops else {}
        for op in self.options.decoding_ops:
            # (no ids to decode, or too few to stream: a record of no verdicts, so the case is counted done)
            judged = bool(ids) if op != "stream" else len(ids) > STREAM_PROMPT
            out.append(self.decoding.record(op, n, case, ids if judged else [], STREAM_PROMPT, oracle_name, keys,
                                            spent))
            spent = {}
        return out

    def chat_record(self, case: Case, n: int) -> CaseRecord:
        """A conversation's record: every backend's prompt judged against the reference's (a
        record of no verdicts where the model has no template)."""
        keys = case.rate_keys
        if self.chatting is None:
            return CaseRecord(self.model.name, n, case.id, case.corpus, self.chain[0], keys, op="chat")
        return self.chatting.record(n, case, keys)

    def id_records(self, n: int, case: IdCase) -> list[CaseRecord]:
        """An id sequence's record for each decoding op the run asks."""
        assert self.decoding is not None
        return [self.decoding.record(op, n, case, list(case.ids), case.prompt, self.decoding.decoder,
                                      (f"corpus={ID_CORPUS}",)) for op in self.options.decoding_ops if case.asked(op)]

    def judged(self, cases: Iterable[tuple[int, Case]]) -> Iterator[CaseRecord]:
        """The records of ``cases`` ((position, case) pairs, read as they are judged), in their
        order, ``JudgedCases.BATCH`` at a time."""
        batch: list[tuple[int, Case]] = []
        for item in cases:
            batch.append(item)
            if len(batch) == JudgedCases.BATCH:
                yield from self.judge_many(batch)
                batch = []
        yield from self.judge_many(batch)

    def not_applicable(self, name: str, text: str) -> bool:
        """Whether ``text`` asks what backend ``name`` declares it cannot do: no special tokens added
        (add_special off) of an engine that always adds them, or special-token text left as text
        (parse_special off) of an engine that parses it whatever is asked."""
        unsupported = self.backends[name].unsupported
        if not self.options.add_special and NO_ADD_SPECIAL_SWITCH in unsupported:
            return True
        if self.options.parse_special or NO_PARSE_SPECIAL_SWITCH not in unsupported:
            return False
        if self._special_texts is None:
            # every special text (Gemma 3 has 6,252, its image token the last)
            self._special_texts = SpecialTextFinder(t for t in self.vocab.special_texts().values() if len(t) > 1)
        return self._special_texts.holds(text)

    def ask_one(self, name: str, text: str) -> Answer:
        """Backend ``name``'s answer on ``text``."""
        return ask(self.backends[name], text, self.options.add_special, self.options.parse_special)

    def judge(self, case: Case, n: int = 0, answers: dict[str, Answer] | None = None) -> CaseRecord:
        """Every backend's answer on ``case`` (asked now unless given) and each compared backend's
        verdict, as a record (``n``: the case's position in the model's stream, for the journal)."""
        if answers is None:
            answers = {name: self.ask_one(name, case.text) for name in self.backends}
        for oracle_name in self.chain:
            if answers[oracle_name].status != "skipped":
                break
        else:
            oracle_name = self.chain[-1]
        oracle = answers[oracle_name]
        agreeing = oracle.ids if oracle.status == "ok" else None  # the ids an agreeing answer gives
        partition: list[list[str]] = []  # who agrees with whom: worked out for a case with a mismatch
        shared: dict[tuple, tuple[str, str, int, str]] = {}  # backends with one answer and stages: judged once
        spent = {name: ans.seconds for name, ans in answers.items()}  # each backend's time on the case
        verdicts: dict[str, Verdict] = {}
        judgements: list[Judgement] = []
        for name in self.compared:
            if name == oracle_name:
                continue
            ans = answers[name]
            if ans.status == "skipped" or oracle.status == "skipped":  # (no oracle has an answer: nothing to judge by)
                verdicts[name] = SKIPPED
                continue
            if self.not_applicable(name, case.text):
                verdicts[name] = NOT_APPLICABLE
                continue
            if ans.status == "ok" and ans.ids == agreeing:
                verdicts[name] = AGREE
                continue
            partition = partition or _partition(answers)
            same = self._given_by(name, ans, oracle, answers.__getitem__)
            judgement = self.judgement(case, oracle_name, oracle, name, ans, answers.get("ref"), partition, same, shared,
                                       spent)
            verdicts[name] = Verdict.differs(judgement.cls)
            judgements.append(judgement)
        return CaseRecord(self.model.name, n, case.id, case.corpus, oracle_name, case.rate_keys, verdicts,
                          tuple(judgements), seconds=spent)

    def judged_alone(self, case: Case, oracle_name: str, oracle: Answer, name: str, ans: Answer) -> Judgement:
        """Backend ``name``'s answer ``ans`` against the oracle's on ``case``, its witnesses asked as
        ``judge`` asks them (fuzz probes one backend at a time while it shrinks a text)."""
        same = self._given_by(name, ans, oracle, lambda w: self.ask_one(w, case.text))
        return self.judgement(case, oracle_name, oracle, name, ans, None, None, same)

    def _given_by(self, name: str, ans: Answer, oracle: Answer, answer_of: Callable[[str], Answer]) -> list[str]:
        """The libraries of ``name``'s own files that gave its very ids (``answer_of``: a library's
        answer on the case). None where the engine or the oracle failed: there are no ids to compare."""
        if ans.status != "ok" or oracle.status != "ok":
            return []
        return [w for w in self.witness_of.get(name, ())
                if (theirs := answer_of(w)).status == "ok" and self._given_too(ans.ids, theirs.ids, oracle.ids)]

    def _given_too(self, engine: list[int], library: list[int], oracle: list[int]) -> bool:
        """Whether a library of the engine's file gave the engine's ids. With ``add_special``, a BOS
        or EOS the engine adds as the oracle does, and the library does not, is taken off first: a
        port adds BOS itself where the file's library adds none (llama-bpe's tokenizer.json)."""
        if engine == library or not self.options.add_special:
            return engine == library
        ends = {self.vocab.special_ids.get(role) for role in ("bos", "eos")} - {None}
        head = 1 if engine[:1] and engine[0] in ends and oracle[:1] == engine[:1] and library[:1] != engine[:1] else 0
        tail = 1 if len(engine) > head and engine[-1] in ends and oracle[-1:] == engine[-1:] and \
            library[-1:] != engine[-1:] else 0
        return engine[head:len(engine) - tail] == library

    def judgement(self, case: Case, oracle_name: str, oracle: Answer, name: str, ans: Answer,
                  ref_answer: Answer | None = None, partition: list[list[str]] | None = None,
                  witnesses: list[str] | None = None, shared: dict | None = None,
                  spent: dict[str, float] | None = None) -> Judgement:
        """Backend ``name``'s answer ``ans`` against the oracle's on ``case``: its symptom class, the
        first stage and token where they part (``partition``: who agrees with whom on the case).
        ``witnesses``: the libraries of the engine's own files that gave its very ids (the tag
        ``witness``, which tokparity.run.decide reads). ``shared``: the case's judgings so far, by
        ids and stages: a backend that gives another's ids through the same stages is judged alike.
        ``spent``: each backend's seconds on the case, which the calls for its stages add to."""
        shape = ""
        if oracle.status != "ok":  # the oracle itself failed: the case says so, whoever else answered
            cls, evidence, stage, first = oracle.status if oracle.status in ("crash", "timeout") else "crash", \
                f"the oracle {oracle_name} failed: {single_line(oracle.detail)}", "unknown", 0
            shape = encode_failure_shape(case.text, None, cls)
        elif ans.status != "ok":  # (an engine's own words, spelt out on one line: no escape sequence reaches a report)
            cls = ans.status if ans.status in ("crash", "timeout") else "crash"
            evidence, stage, first = f"{name}: {single_line(ans.detail or ans.status)}", "unknown", 0
            shape = encode_failure_shape(case.text, oracle.ids, cls)
        else:
            reference = self.stage_reference(oracle_name, case.text, oracle.ids, ref_answer)
            # (a reference made for its stages alone is no backend of the run: its time is not counted)
            counted = (next((label for label, b in self.backends.items() if b is reference), None), name)

            def ask(side: int, call: Callable[[], Any]) -> Any:
                label = counted[side]
                return call() if spent is None or label is None else timed(spent, label, call)
            stage, a_st, b_st = first_stage(reference, self.backends[name], case.text, ask)
            key = (tuple(ans.ids), stage, *((st.normalized, None if st.pre_tokens is None else tuple(st.pre_tokens))
                                             if st else None for st in (a_st, b_st)))
            found = shared.get(key) if shared is not None else None
            if found is None:
                c = classify(case.text, oracle.ids, ans.ids, self.vocab, a_stages=a_st, b_stages=b_st)
                divergence = c.divergence or align(oracle.ids, ans.ids)
                found = (c.cls, c.evidence, divergence.first[0] if divergence.first is not None else 0,
                         encode_shape(self.vocab, case.text, oracle.ids, ans.ids))
                if shared is not None:
                    shared[key] = found
            cls, evidence, first, shape = found
        if ans.notes:
            evidence += f" (notes: {'; '.join(ans.notes)[:300]})"
        return Judgement(
            model=self.model.name, corpus=case.corpus, case_id=case.id,
            tags=dict(case.tags) | ({"witness": ",".join(witnesses)} if witnesses else {}), oracle=oracle_name,
            backend=name, cls=cls, evidence=evidence, stage=stage, first_diff=first, text=case.text,
            oracle_ids=oracle.ids, backend_ids=ans.ids, oracle_pieces=self.vocab.pieces_of(oracle.ids),
            backend_pieces=self.vocab.pieces_of(ans.ids), partition=partition or [], shape=shape,
        )

class JudgedCases:
    """The records of the corpora's cases, judged in case order, skipping the positions ``skip``
    names; ``total`` counts every case seen. The backends are asked ``BATCH`` texts at a time
    (``encode_many``): a backend in another process (``cmd:``, llama.cpp on a file of yours)
    then has the next requests while it answers, instead of a round trip per case."""

    BATCH = 64
    # A batch is journaled whole once judged, so a stop loses the batch under way: a batch is made
    # smaller while one takes longer than this (a slow engine), larger up to BATCH while it does not.
    BATCH_SECONDS = 0.5

    def __init__(self, run: ModelRun, corpora: list[str], skip: Callable[[int], bool]):
        self.run, self.corpora, self.skip = run, corpora, skip
        self.total = 0
        self.size = 1  # the cases of the next batch (a conversation is one: it takes seconds)

    def _judged(self, batch: list[tuple[int, Case]]) -> list[CaseRecord]:
        started = time.perf_counter()
        records = self.run.judge_many(batch)
        fast = time.perf_counter() - started < self.BATCH_SECONDS
        self.size = 1 if self.run.options.chat else min(self.size * 2, self.BATCH) if fast else max(1, self.size // 2)
        return records

    def __iter__(self) -> Iterator[CaseRecord]:
        for batch in self.batches():
            yield from batch

    def batches(self) -> Iterator[list[CaseRecord]]:
        """The records a batch at a time, in case order (never empty)."""
        max_chars = self.run.options.max_chars
        batch: list[tuple[int, Case]] = []
        n = -1
        try:
            for n, case in numbered_cases(self.corpora, max_chars):
                if self.skip(n):
                    continue
                if is_too_long(case, max_chars):
                    self.total = n + 1
                    yield self.run.judge_many(batch) + [too_long_record(self.run.model.name, case, n)]
                    batch = []
                    continue
                batch.append((n, case))
                if len(batch) >= self.size:
                    self.total = n + 1
                    yield self._judged(batch)
                    batch = []
        except TokparityError:  # a corpus line that cannot be read: the cases before it still count
            if batch:
                yield self.run.judge_many(batch)
            raise
        self.total = n + 1
        if batch:
            yield self.run.judge_many(batch)
        if self.run.decoding is not None and {ID_CORPUS, "all"} & set(self.corpora):  # the id sequences, after the texts
            records = []
            for n, id_case in numbered_id_cases(self.run.vocab, self.total, tuple(self.run.options.decoding_ops)):
                if not self.skip(n):
                    records += self.run.id_records(n, id_case)
                self.total = n + 1
            if records:
                yield records


def too_long_record(model: str, case: Case, n: int) -> CaseRecord:
    """The record of a case not run: its text is longer than ``--max-chars`` (or its line was not
    even read: ``too_long`` then counts the line's bytes, ``unread``)."""
    return CaseRecord(model, n, case.id, case.corpus, too_long=case.unread_bytes or len(case.text),
                      unread=bool(case.unread_bytes))


def too_long_message(record: CaseRecord, options: CompareOptions) -> str:
    if record.unread:
        return (f"{record.model}: skipping {record.corpus}/{record.case_id}: a line of {record.too_long:,} bytes, "
                f"longer than a text of --max-chars {options.max_chars:,} can be; not read (raise --max-chars, or "
                "0 for no cap, to run this case)")
    return (f"{record.model}: skipping {record.corpus}/{record.case_id}: {record.too_long:,} characters, "
            f"more than --max-chars {options.max_chars:,} (raise it to run this case)")
