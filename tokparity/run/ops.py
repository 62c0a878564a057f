"""The ops a run asks of each backend (``compare --ops``), and how a case is judged for the three
that turn ids back into text.

    encode   the text's ids, against the oracle's (tokparity.run.judge)
    decode   ids back to text, whole (``decode(ids)``)
    stream   ids back to text one at a time after a prompt, as a server streams them (``stream``)
    pieces   the bytes each id stands for alone (``piece_bytes``): what a grammar engine reads
    chat     a conversation's prompt, text and ids, through the model's chat template (``chat``;
             judged in tokparity.run.chat, on corpora of conversations: it runs alone)

For decode, stream and pieces the ids are the oracle's: its encoding of each corpus text, and id
sequences made from the vocabulary where decoders go wrong (tokparity.corpus.ids). The *decoder* judges them: the first library of the oracle chain
that decodes (golden ids cannot). Each answer is judged against its answer:

    decode   the same text
    stream   the deltas add up to the decoder's whole text of the ids after the prompt (the text
             of the prompt's ids, less a character it leaves unfinished, taken off the front; a
             character the ids leave unfinished at the end may stay unsent); no delta holds a
             U+FFFD that the whole text does not have. The decoder's own stream is judged too.
    pieces   the same bytes for every id (a decoder that gives text, ``lossy_pieces``, shows an id
             that is part of a character as U+FFFD: such an id is judged by the bytes the
             vocabulary spells for it; a backend that gives text is compared as that text)

A backend without the op (NotImplementedError; a ``cmd:`` engine's error reply with no status)
is not judged for it there: the case counts as skipped for it. Ids that have no token in the
vocabulary (a gap in tiktoken's ids) are skipped for every backend when the decoder fails on them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from tokparity.backends.base import Backend
from tokparity.corpus import Case
from tokparity.corpus.ids import ID_CORPUS, IdCase
from tokparity.diff.decode import Found, judge_decode, judge_pieces, judge_stream
from tokparity.diff.shape import failure_shape, output_shape
from tokparity.errors import CaseFailure, EngineGone, TokparityError
from tokparity.records import AGREE, SKIPPED, CaseRecord, Judgement, Verdict
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings
from tokparity.textview import single_line
from tokparity.vocab import Vocab
from tokparity.vocab.model import TokenType
from tokparity.vocab.special_texts import SpecialTextFinder
from tokparity.zoo import ModelFiles

T = TypeVar("T")

OPS = ("encode", "decode", "stream", "pieces", "chat")
TEXT_OPS = ("encode", "decode", "stream", "pieces")  # the ops a text's case is asked (``all``)
DECODING_OPS = ("decode", "stream", "pieces")
DECODER_WHY = ("the first library of the oracle chain that decodes as asked (golden ids cannot; tokparity's reference "
               "where none has a setting asked) judges ids back to text")


def parse_ops(value: str) -> tuple[str, ...]:
    """``--ops encode,decode`` -> ("encode", "decode"); ``all`` -> every op on texts; in OPS' order.
    ``chat`` runs on conversations, so alone."""
    names = [part.strip() for part in value.split(",") if part.strip()]
    if names == ["all"]:
        return TEXT_OPS
    if "chat" in names and len(set(names)) > 1:
        raise TokparityError(f"--ops {value!r}: chat runs on corpora of conversations, the other ops on texts; "
                             "give --ops chat alone (and the other ops in another run)")
    unknown = [n for n in names if n not in OPS]
    if unknown or not names:
        raise TokparityError(f"--ops {value!r}: {'unknown op ' + repr(unknown[0]) if unknown else 'no op'}; "
                             f"give some of {', '.join(OPS)} joined by commas, or all")
    return tuple(op for op in OPS if op in names)


def decoder_of(chain: list[str], backends: Mapping[str, Backend], settings: DecodeSettings = AS_FILES_SAY) -> str | None:
    """The backend whose answers the decoding ops are judged against: the chain's first that decodes
    as ``settings`` ask; where none has a switch asked (tokenizers cannot clean up), tokparity's
    reference, if it runs (it has every switch; the run says so)."""
    libraries = [n for n in chain if n != "golden" and n in backends]
    found = next((n for n in libraries if backends[n].gives(settings)), None)
    if found is None and libraries and "ref" in backends and backends["ref"].gives(settings):
        return "ref"
    return found


def decoder_file(model: ModelFiles, decoder: str | None) -> str | None:
    """The file the decoder reads (a library's own role among the model's files), or None where it
    is not one of them (a user's engine, tokparity's reference: the model's primary file)."""
    from tokparity.backends.registry import BUILTIN, builtin_name

    library = builtin_name(decoder) if decoder else None  # (a release, hf@0.21.4, reads hf's file)
    role = BUILTIN[library].role if library in BUILTIN else None
    return str(model.files[role]) if role is not None and role in model.files else None


def compared_backends(chain: list[str], backend_names: list[str]) -> list[str]:
    """The backends judged against the oracle: all but the chain's, except that the last of a
    chain of several (llama.cpp after golden ids) is judged where an earlier one answered."""
    return [n for n in backend_names if n not in chain or (n == chain[-1] and len(chain) > 1)]


def judged_by_op(ops: tuple[str, ...], chain: list[str], decoder: str | None,
                 backend_names: list[str]) -> dict[str, list[str]]:
    """The backends judged for each op the run asks: encode's against the oracle chain
    (``compared_backends``), the others' as ``op_compared`` says."""
    compared = compared_backends(chain, backend_names)
    return {op: compared if op == "encode" else op_compared(op, decoder, backend_names) for op in ops}


def op_compared(op: str, decoder: str | None, backend_names: list[str]) -> list[str]:
    """The backends judged for a decoding op: every one but golden ids and the decoder (whose own
    stream is judged against its whole text, so it is judged for ``stream`` too). For chat: every
    one but golden ids and tokparity's reference (the judge renders as it does)."""
    if op == "chat":
        return [n for n in backend_names if n not in ("golden", "ref")]
    if decoder is None:
        return []
    return [n for n in backend_names if n != "golden" and (n != decoder or op == "stream")]


# --- judging ---------------------------------------------------------------------------------------


# Of an answer kept in a mismatch (a hostile engine's million deltas): more than a corpus text's ids,
# so that a real answer is kept whole (the diagnosis reads it back).
MAX_OUTPUTS, MAX_OUTPUT_CHARS = 20_000, 2_000_000


def capped(outputs: list[str]) -> list[str]:
    kept: list[str] = []
    size = 0
    for out in outputs[:MAX_OUTPUTS]:
        if size + len(out) > MAX_OUTPUT_CHARS:
            if not kept:  # (one whole text: cut)
                kept.append(out[:MAX_OUTPUT_CHARS])
            break
        kept.append(out)
        size += len(out)
    return kept


def _skipped(answer: object) -> bool:
    """An answer that says there is none here (an engine's ``"status": "skipped"``)."""
    return isinstance(answer, CaseFailure) and answer.status == "skipped"


def _answer_key(got: object, lossy: bool) -> object:
    """An answer as a dictionary key (a text, deltas, bytes per id, and whether the backend's bytes
    are text); None for one that is not kept (a failure: its message names the backend)."""
    if isinstance(got, str):
        return got, lossy
    if isinstance(got, list) and all(isinstance(x, (str, bytes)) or x is None for x in got):
        return tuple(got), lossy
    return None


def timed(seconds: dict[str, float], name: str, call: Callable[[], T]) -> T:
    """``call()``, its seconds added to ``name``'s in ``seconds`` (the time inside a backend)."""
    started = time.perf_counter()
    try:
        return call()
    finally:
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - started


def ask_op(call) -> object:
    """A backend's answer: its value, None (it does not have the op), or the CaseFailure it raised."""
    try:
        return call()
    except NotImplementedError:
        return None
    except CaseFailure as e:
        return e
    except EngineGone:
        raise
    except Exception as e:  # the implementation's own error on these ids
        return CaseFailure(f"{type(e).__name__}: {e}")


@dataclass
class DecodingJudge:
    """One model's backends asked the decoding ops on a case's ids, and judged against the decoder."""

    model: str
    vocab: Vocab
    backends: dict[str, Backend]
    decoder: str
    compared: dict[str, list[str]]  # op -> the backends judged for it
    settings: DecodeSettings = AS_FILES_SAY  # how decode turns ids into text (a stream: for_stream())
    stream_step: int = 1  # a stream is fed this many ids at a time
    # an engine -> the libraries of its own files (tokparity.backends.registry.witnesses): where one
    # answers an op as the engine does, the library's reviewed differences are the engine's too
    witness_of: dict[str, list[str]] = field(default_factory=dict)
    _tables: dict[str, list[bytes | None] | CaseFailure | None] = field(default_factory=dict)
    _special_texts: SpecialTextFinder | None = None

    def record(self, op: str, n: int, case: Case | IdCase, ids: list[int], prompt: int, oracle_name: str,
               keys: tuple[str, ...], spent: dict[str, float] | None = None) -> CaseRecord:
        """The record of ``op`` on ``ids`` (``case``'s: its text's ids as the oracle gave them, or
        an id sequence): a verdict per backend that has the op. Skipped: a backend without the op
        (or that says it has no answer here), or every backend where the decoder has none: there
        is nothing to judge against. ``spent``: seconds the backends spent on this case already
        (the oracle chain's encoding of its text, in a run that judges no encoding), counted here."""
        judgements: list[Judgement] = []
        verdicts: dict[str, Verdict] = {}
        corpus = case.corpus if isinstance(case, Case) else ID_CORPUS
        seconds: dict[str, float] = dict(spent or {})  # each backend's own time on this op (the run's timing)
        if not ids:  # nothing to decode (the oracle failed on the text, or gave no ids)
            return CaseRecord(self.model, n, case.id, corpus, oracle_name, keys, op=op, seconds=seconds)
        decoder = self.backends[self.decoder]
        # what the decoder answers: its text (decode, stream: the whole text the deltas must add up to) or bytes
        want = timed(seconds, self.decoder, lambda: ask_op(lambda: decoder.decode(ids, self.settings.for_op(op)))
                           if op != "pieces"
                           else self._answer(op, self.decoder, ids, prompt))
        if isinstance(want, CaseFailure) and self._no_token(ids):  # (ids that are not the model's: no one's failure)
            verdicts = {name: SKIPPED for name in self.compared.get(op, [])}
            return CaseRecord(self.model, n, case.id, corpus, oracle_name, keys, verdicts, op=op, seconds=seconds)
        # Backends that give one answer get one judging (three libraries that agree with each other
        # and not with the decoder): the verdict, the evidence and the shape do not depend on the name.
        judged: dict[object, tuple[Found | None, str]] = {}
        pieces: list[str] | None = None
        for name in self.compared.get(op, []):
            got = want if name == self.decoder and op == "decode" else \
                timed(seconds, name, lambda: self._answer(op, name, ids, prompt))  # noqa: B023 (called at once)
            if want is None or got is None or _skipped(want) or _skipped(got):
                verdicts[name] = SKIPPED
                continue
            if op != "stream" and got == want and not isinstance(got, CaseFailure):
                verdicts[name] = AGREE  # (the decoder's very text or bytes: what _judge finds first)
                continue
            # (pieces: a backend that gives text, not bytes, is judged otherwise on the same answer)
            key = _answer_key(got, op == "pieces" and self.backends[name].lossy_pieces)
            if key is not None and key in judged:
                found, shape = judged[key]
            else:
                found = self._judge(op, ids, prompt, case, want, got, name, seconds)
                shape = self._shape(op, ids, found, want)
                if key is not None:
                    judged[key] = (found, shape)
            if found is None or found[0] == "skipped":  # (skipped: what is right is not known on these ids)
                verdicts[name] = AGREE if found is None else SKIPPED
                continue
            cls, evidence, oracle_output, backend_output, first = found
            verdicts[name] = Verdict.differs(cls)
            pieces = self.vocab.pieces_of(ids) if pieces is None else pieces
            text = case.text if isinstance(case, Case) else ""
            same = [w for w in self.witness_of.get(name, ()) if w in self.backends  # (asked on a mismatch only)
                    and timed(seconds, w, lambda: self._answer(op, w, ids, prompt)) == got]  # noqa: B023
            tags = dict(case.tags) | ({"about": case.about} if isinstance(case, IdCase) else {}) | \
                ({"prompt": prompt} if op == "stream" else {}) | ({"witness": ",".join(same)} if same else {})
            judgements.append(Judgement(
                model=self.model, corpus=corpus, case_id=case.id, tags=tags, oracle=self.decoder, backend=name,
                cls=cls, evidence=evidence, stage=op, first_diff=first, text=text, oracle_ids=list(ids),
                backend_ids=list(ids), oracle_pieces=pieces, backend_pieces=pieces, op=op,
                oracle_output=capped(oracle_output), backend_output=capped(backend_output), shape=shape))
        return CaseRecord(self.model, n, case.id, corpus, oracle_name, keys, verdicts,
                          tuple(judgements), op=op, seconds=seconds)

    def _shape(self, op: str, ids: list[int], found: Found | None, want: object) -> str:
        """The shape of a mismatch ``_judge`` found ("" where it found none)."""
        if found is None or found[0] == "skipped":
            return ""
        cls, _, oracle_output, backend_output, _ = found
        if cls in ("crash", "timeout"):
            return failure_shape(op, self.vocab, ids, cls, isinstance(want, CaseFailure), want)
        return output_shape(op, self.vocab, ids, oracle_output, backend_output)

    def _no_token(self, ids: list[int]) -> bool:
        """Whether an id has no token in the vocabulary: out of its range, or a gap in its ids that
        the loader filled (``[PAD{id}]``, unused: tiktoken's and tokenizer.json's missing ids). A
        decoder that fails on such ids is right to; what an engine answers there is not judged."""
        types = self.vocab.token_types
        return any(not 0 <= i < self.vocab.size or (types is not None and types[i] == TokenType.UNUSED
                                                    and self.vocab.tokens[i] == f"[PAD{i}]") for i in ids)


    def _answer(self, op: str, name: str, ids: list[int], prompt: int) -> object:
        backend = self.backends[name]
        if op in ("decode", "stream") and not backend.gives(self.settings.for_op(op)):
            return None  # (a setting it lacks: not tried with it)
        if op == "decode":
            return ask_op(lambda: backend.decode(ids, self.settings))
        if op == "stream":
            return ask_op(lambda: backend.stream(ids, prompt, self.settings.for_stream(), self.stream_step))
        table = self._table(name)
        if table is None or isinstance(table, CaseFailure):
            return table
        return [table[i] if 0 <= i < len(table) else None for i in ids]

    def _held(self, prompt_ids: list[int]) -> int:
        """How many of the prompt's last bytes begin a character it leaves unfinished (a special
        token last, written as its text, ends any character before it)."""
        from tokparity.reference.decode import incomplete_tail

        if not prompt_ids or not self._bytes(prompt_ids[-1:]):
            return 0
        return incomplete_tail(self._bytes(prompt_ids[-4:]))

    def _exact(self, ids: list[int], prompt: int, held: int) -> str:
        """The generated ids' bytes (with those of a character the prompt began) read as UTF-8,
        special tokens as their text (as the decoders here write them)."""
        specials = self.vocab.special_texts()
        generated = b"".join((b"" if self.settings.skip_special else specials[i].encode("utf-8", "surrogateescape"))
                             if i in specials else self._bytes([i]) for i in ids[prompt:])
        head = self._bytes(ids[max(0, prompt - 4):prompt])
        begun = head[len(head) - held:] if held else b""
        return (begun + generated).decode("utf-8", "replace")

    def _bytes(self, ids: list[int]) -> bytes:
        from tokparity.vocab.token_bytes import token_bytes

        try:
            return b"".join(token_bytes(self.vocab, i) for i in ids)
        except Exception:  # (a token the vocabulary cannot spell as bytes)
            return b""

    def _specials(self) -> SpecialTextFinder:
        """The texts of the vocabulary's special and control tokens, all of them (a decoder may drop them)."""
        if self._special_texts is None:
            self._special_texts = SpecialTextFinder(self.vocab.special_texts().values())
        return self._special_texts

    def _table(self, name: str) -> list[bytes | None] | CaseFailure | None:
        """Every id's bytes, asked once per backend."""
        if name not in self._tables:
            backend = self.backends[name]
            table = ask_op(lambda: backend.piece_bytes(list(range(self.vocab.size))))
            if name == self.decoder and backend.lossy_pieces and isinstance(table, list):
                # (the vocabulary spells the bytes a decoder of text shows as U+FFFD: judged by them)
                table = [self._exact_piece(i, b) for i, b in enumerate(table)]
            self._tables[name] = table  # type: ignore[assignment]
        return self._tables[name]

    def _judge(self, op: str, ids: list[int], prompt: int, case: Case | IdCase, want: object, got: object,
               name: str, seconds: dict[str, float] | None = None) -> Found | None:
        """None when ``got`` is right; else (class, evidence, the decoder's output, the backend's, first index).
        A failure of the decoder is every backend's case of that failure, as when encoding. The
        decoder's calls a stream's judging makes count in ``seconds``."""
        for side, answer in ((f"the decoder {self.decoder}", want), (name, got)):
            if isinstance(answer, CaseFailure):
                cls = answer.status if answer.status in ("crash", "timeout") else "crash"
                return cls, f"{op} failed on {side}'s side: {single_line(answer.detail or answer.status)}", [], [], 0
        unk_id = self.vocab.special_ids.get("unk")
        unk = self.vocab.tokens[unk_id] if unk_id is not None and 0 <= unk_id < self.vocab.size else None
        if op == "decode":
            return judge_decode(case.text if isinstance(case, Case) else "", str(want), str(got), unk, self._specials())
        if op == "stream":
            decoder = self.backends[self.decoder]
            held = self._held(ids[:prompt])
            replaces_runs = "ByteFallback" in str(getattr(getattr(decoder, "tok", None), "decoder", ""))
            spent = {} if seconds is None else seconds
            return judge_stream(lambda part: timed(spent, self.decoder, lambda: decoder.decode(part, self.settings.for_op(op))),
                                ids, prompt, str(want), got, unk, self._specials(),  # type: ignore[arg-type]
                                held, self._exact(ids, prompt, held) if replaces_runs else None, self.stream_step)
        return judge_pieces(ids, want, got, self.backends[self.decoder].lossy_pieces,  # type: ignore[arg-type]
                            self.backends[name].lossy_pieces)

    def _exact_piece(self, i: int, shown: bytes | None) -> bytes | None:
        """The bytes of id ``i`` where a decoder of text shows them as U+FFFD, as the vocabulary spells
        them (a byte token, a part of a character); ``shown`` where the two do not read alike."""
        if shown is None or b"\xef\xbf\xbd" not in shown:
            return shown
        exact = self._bytes([i])
        return exact if exact and exact.decode("utf-8", "replace").encode("utf-8") == shown else shown
