"""``regress``: every chosen backend against the ids a model's oracle gave when the goldens were
made, so a bump of llama.cpp, transformers or one's own engine shows at once which model's
tokenization changed.

    corpora ──► digest == the goldens'? ──► no: stop, the corpus was edited (regress --update)
            ──► ModelRun with the stored goldens as the oracle, add_special off then on
            ──► the same diff, class, known-divergence list and reports as ``compare``

A corpus of conversations (``chats``) holds the prompts the model's template gave (text and ids);
``regress --ops chat`` judges every backend's prompt against them, and the template as tokparity
renders it today (``template``) too.

The goldens play the oracle through ``StoredGoldens`` (regress/stored.py), a backend that answers
from the file. A corpus stored as digests only is judged by the live oracle once its ids are
proven to hash to the stored digest (then the live oracle *is* the goldens, case for case).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path

from tokparity import __version__
from tokparity.chat import ChatAnswer, StoredPrompts
from tokparity.chat.conversation import CONVERSATION_TAG, Conversation
from tokparity.chat.template import find_template
from tokparity.corpus import CHATS, Case, load_corpus
from tokparity.errors import BadGoldens, CaseFailure, TokparityError
from tokparity.regress.goldens import (
    DIGEST_ONLY_OVER,
    SUFFIX,
    Goldens,
    OracleChain,
    Prompt,
    StoredCorpus,
    decode_goldens,
    expand_corpora,
    goldens_path,
    ids_digest,
    model_files_record,
    pieces_digest,
    prompts_digest,
    read_goldens,
    texts_digest,
    write_goldens,
)
from tokparity.regress.stored import ORACLE, StoredGoldens
from tokparity.run.chat import chat_reference
from tokparity.run.known import KnownList
from tokparity.run.ops import ask_op, decoder_of
from tokparity.run.options import CompareOptions, Services
from tokparity.run.oracle import oracle_chain
from tokparity.run.pipeline import ModelPipeline, ModelRun
from tokparity.run.results import Results, ResultsSoFar
from tokparity.zoo import ModelFiles, resolve_model

# What `regress --update` makes when no model is named and the folder holds no goldens yet: one
# model per algorithm family (as compare's default) plus the first GGUF/HF pair, on every
# corpus, and the conversations' prompts where the model has a chat template; about a megabyte
# of gzipped ids in tests/goldens/.
DEFAULT_MODELS = ("llama-spm", "llama-bpe", "botchan-unigram", "nomic-bert-moe", "bert-bge", "qwen2", "gemma-4")
DEFAULT_CORPORA = ("all", CHATS)
SPECIAL_LABEL = " +add_special"  # appended to the corpus of the add_special pass's cases


@dataclass
class RegressOptions:
    goldens_dir: Path
    corpora: list[str] | None = None  # None: every corpus the goldens hold
    backends: list[str] | None = None  # None: every backend the model's files allow
    known: KnownList | None = None
    progress: Callable[[str], None] | None = None
    notes: list[str] = field(default_factory=list)  # things a user should read, printed by the command
    ray: str | None = None  # --ray: "" starts Ray here, else a cluster's address (tokparity.run.cluster)
    ops: tuple[str, ...] = ("encode",)  # --ops: what each backend is asked (tokparity.run.ops)


def _say(options: RegressOptions, message: str) -> None:
    if options.progress:
        options.progress(message)


def _live_chain(model: ModelFiles, parse_special: bool) -> tuple[OracleChain, dict[str, list[str]]]:
    """The oracle exactly as compare consults it, with add_special off and on."""
    from tokparity.backends.registry import make_backend

    chains = {False: oracle_chain(model, CompareOptions(add_special=False)),
              True: oracle_chain(model, CompareOptions(add_special=True))}
    backends = {name: make_backend(name, model) for name in dict.fromkeys(chains[False] + chains[True])}
    return OracleChain(backends, chains, parse_special), {"plain": chains[False], "add_special": chains[True]}


def _close(chain: OracleChain) -> None:
    for b in chain.backends.values():
        b.close()


# ---------------------------------------------------------------------------------------------- update

def update_goldens(spec: str, corpora: list[str], goldens_dir: Path, digest_only: bool = False,
                   progress: Callable[[str], None] | None = None) -> Path:
    """Run the model's oracle on every case, add_special off and on, and its decoder on the ids
    (tokparity.regress.goldens.decode_goldens), and write its goldens file."""
    from tokparity.vocab import load_vocab

    model = resolve_model(spec)
    chain, oracles = _live_chain(model, parse_special=False)
    try:
        stored: list[StoredCorpus] = []
        for corpus in expand_corpora(corpora):
            cases = list(load_corpus(corpus))
            if cases and all(c.tags.get(CONVERSATION_TAG) for c in cases):
                prompts = _stored_prompts(model, corpus, cases, chain, oracles, progress)
                if prompts is not None:
                    stored.append(prompts)
                continue
            pairs = [(chain.answer(c.text, False), chain.answer(c.text, True)) for c in cases]
            per_case = not digest_only and len(cases) <= DIGEST_ONLY_OVER
            stored.append(StoredCorpus(corpus, cases, pairs if per_case else None, ids_digest(pairs)))
            if progress:
                progress(f"{model.name}: {corpus}: {len(cases)} cases{'' if per_case else ' (digest only)'}")
        decoding = None
        decoder = decoder_of(oracles["plain"], chain.backends)
        if decoder is not None:
            per_case_corpora = [c for c in stored if c.pairs is not None]
            decoding, texts = decode_goldens(decoder, chain.backends[decoder], load_vocab(model.primary[1]),
                                             [(c.cases, [plain for plain, _ in c.pairs or []]) for c in per_case_corpora])
            for stored_corpus, decoded in zip(per_case_corpora, texts):
                stored_corpus.decoded = decoded
            if progress:
                progress(f"{model.name}: decoded by {decoder}: {len(decoding.sequences)} more id sequences"
                         f"{'' if decoding.pieces_sha256 else ' (it gives no bytes of a token)'}")
        header = {"goldens": 1, "model": model.name, "spec": spec, "tokparity": __version__, "parse_special": False,
                  "oracles": oracles, "versions": {n: b.version for n, b in chain.backends.items()},
                  "files": model_files_record(model)}
        path = goldens_path(goldens_dir, model.name)
        write_goldens(path, header, stored, decoding)
    finally:
        _close(chain)
    return path


def _stored_prompts(model: ModelFiles, corpus: str, cases: list[Case], chain: OracleChain,
                    oracles: dict[str, list[str]], progress: Callable[[str], None] | None) -> StoredCorpus | None:
    """The prompts of a corpus of conversations, as ``compare --ops chat``'s reference makes them
    (None, said: the model has no chat template, or no library of its chain encodes)."""
    from tokparity.vocab import load_vocab

    template = find_template(model)
    encoder = next((name for name in oracles["plain"] if name != "golden"), None)
    if template is None or encoder is None:
        if progress:
            progress(f"{model.name}: {corpus}: no prompts stored ("
                     f"{'its files carry no chat template' if template is None else 'no library encodes them'})")
        return None
    reference = chat_reference(template, chain.backends[encoder], load_vocab(model.primary[1]))
    try:
        prompts: list[Prompt] = []
        for case in cases:
            answer = ask_op(lambda: reference.answer(Conversation.from_text(case.text, f"{corpus}/{case.id}")))  # noqa: B023 (called at once)
            prompts.append(answer if isinstance(answer, (ChatAnswer, CaseFailure)) else CaseFailure("no prompt"))
    finally:
        reference.close()
    failed = [case.id for case, p in zip(cases, prompts) if isinstance(p, CaseFailure)]
    if progress:
        progress(f"{model.name}: {corpus}: {len(cases)} prompts (the template encoded by {encoder})" +
                 (f"; {len(failed)} could not be made ({', '.join(failed[:3])}{'…' if len(failed) > 3 else ''}: "
                  "stored as failures, which every backend will then be judged against)" if failed else ""))
    made = {"encoder": encoder, "version": chain.backends[encoder].version, "template_sha256": template.digest}
    return StoredCorpus(corpus, cases, None, prompts_digest(prompts), prompts_made=made, prompts=prompts)


# ---------------------------------------------------------------------------------------------- regress

def check_corpora(goldens: Goldens, corpora: list[str]) -> dict[str, list[Case]]:
    """Each corpus's cases, after proving they are the ones the goldens were made from."""
    out: dict[str, list[Case]] = {}
    model = goldens.model
    for corpus in corpora:
        stored = goldens.corpora.get(corpus)
        if stored is None:
            raise BadGoldens(f"{goldens.path}: no goldens for corpus {corpus!r} (they hold "
                             f"{', '.join(goldens.corpora) or 'none'}); add them with "
                             f"`tokparity regress --update {model} "
                             f"{''.join(f'-c {held} ' for held in goldens.corpora)}-c {corpus}` (--update remakes "
                             "the whole file from the corpora it is given)")
        cases = list(load_corpus(corpus))
        digest, n = texts_digest(cases)
        if digest != stored.texts_sha256:
            changed = _what_changed(stored.case_ids, [c.id for c in cases]) if stored.per_case else ""
            raise BadGoldens(f"{goldens.path}: corpus {corpus!r} changed since these goldens were made "
                             f"({stored.cases} cases then, {n} now{changed}); review the corpus edit, then run "
                             f"`tokparity regress --update {model} -c {corpus}`")
        out[corpus] = cases
    return out


def _what_changed(then: list[str], now: list[str]) -> str:
    then_ids, now_ids = set(then), set(now)
    added = [i for i in now if i not in then_ids]
    removed = [i for i in then if i not in now_ids]
    parts = [f"added {', '.join(added[:3])}{'…' if len(added) > 3 else ''}" if added else "",
             f"removed {', '.join(removed[:3])}{'…' if len(removed) > 3 else ''}" if removed else ""]
    parts = [p for p in parts if p] or ["same case ids, edited text"]
    return "; " + "; ".join(parts)


def _prove_digests(goldens: Goldens, cases: dict[str, list[Case]], model: ModelFiles,
                   options: RegressOptions) -> tuple[OracleChain | None, list[str]]:
    """For digest-only corpora: the live oracle, if its ids hash to the stored digest; the corpora
    where they do not are dropped from the run and named in ``options.notes`` as changes."""
    digest_only = [c for c in cases if not goldens.corpora[c].per_case]
    if not digest_only:
        return None, []
    live, _ = _live_chain(model, goldens.header.get("parse_special", False))
    changed = []
    for corpus in digest_only:
        digest = ids_digest((live.answer(c.text, False), live.answer(c.text, True)) for c in cases[corpus])
        if digest != goldens.corpora[corpus].ids_sha256:
            changed.append(corpus)
            options.notes.append(f"CHANGED {goldens.model} {corpus}: the oracle's ids no longer hash to the stored "
                                 "digest (a digest-only corpus cannot name the case: run `tokparity compare` with the "
                                 "previous library version, or store per-case goldens)")
    return live, changed


def _note_file_changes(goldens: Goldens, model: ModelFiles, options: RegressOptions) -> None:
    then = goldens.header.get("files", {})
    for role, now in model_files_record(model).items():
        if role in then and then[role]["sha256"] != now["sha256"]:
            options.notes.append(f"note: {goldens.model}: {role} file {now['name']} differs from the one the goldens "
                                 f"were made with ({then[role]['name']}); judged against the goldens anyway")


def _check_template(goldens: Goldens, model: ModelFiles, corpora: list[str], options: RegressOptions) -> None:
    """The model's chat template now against the one the prompts were made with: none now is a
    ``BadGoldens`` (nothing could be judged: every engine renders the template), another one a note."""
    made = goldens.corpora[corpora[0]].prompts_made or {}
    template = find_template(model)
    if template is None:
        raise BadGoldens(f"{goldens.path}: its prompts were made with a chat template, and {model.name}'s files carry "
                         "none now: the template was taken out of the files (put it back, or remake the goldens with "
                         f"`tokparity regress --update {model.name}`)")
    if made.get("template_sha256") not in (None, template.digest):
        options.notes.append(f"note: {goldens.model}: its chat template ({template.source}) differs from the one the "
                             "prompts were made with; judged against the goldens anyway (the backend 'template' shows "
                             "what changed)")


def default_backends(goldens: Goldens) -> list[str]:
    """The oracles that made the goldens, and tokparity's reference: the implementations whose ids
    should never move. Other backends (hf-gguf, a user's engine) disagree with the oracle in known
    ways, add_special above all; they are judged when named with ``-b``."""
    oracles = goldens.header["oracles"]
    return list(dict.fromkeys(oracles["plain"] + oracles["add_special"] + ["ref"]))


@dataclass
class CheckedModel:
    """One model's goldens and the cases of its corpora, checked before anything runs: the
    corpora are the ones the goldens were made from (else ``BadGoldens``, exit 2)."""
    spec: str
    goldens: Goldens
    cases: dict[str, list[Case]]


def check_model(spec: str, options: RegressOptions) -> CheckedModel:
    model = resolve_model(spec)
    goldens = read_goldens(goldens_path(options.goldens_dir, model.name))
    chat = options.ops == ("chat",)  # (conversations are judged by --ops chat alone, texts by the other ops)
    corpora = expand_corpora(options.corpora) if options.corpora else \
        [name for name, held in goldens.corpora.items() if (held.prompts_made is not None) == chat]
    for name in corpora:
        held = goldens.corpora.get(name)
        if held is not None and (held.prompts_made is not None) != chat:
            raise BadGoldens(f"{goldens.path}: corpus {name!r} holds " +
                             ("the prompts of conversations: judge them with `regress --ops chat`" if not chat else
                              "the ids of texts, no prompts: --ops chat judges a corpus of conversations (-c chats)"))
    if not corpora:
        kept = "".join(f"-c {name} " for name in goldens.corpora)
        raise BadGoldens(f"{goldens.path}: holds no " + (
            "prompts of conversations (the model had no chat template, or an older tokparity made them)" if chat else
            "ids of texts") + f"; make them with `tokparity regress --update {model.name} {kept}"
                              f"-c {CHATS if chat else 'all'}`")
    cases = check_corpora(goldens, corpora)
    if chat:
        _check_template(goldens, model, corpora, options)
    decoding_ops = [op for op in options.ops if op not in ("encode", "chat")]
    if decoding_ops and goldens.decoding is None:
        raise BadGoldens(f"{goldens.path}: holds no decoded texts (made by an older tokparity, or no library of the "
                         f"oracle chain decodes), so --ops {','.join(decoding_ops)} has nothing to judge against; "
                         f"remake them with `tokparity regress --update {model.name}`")
    _note_file_changes(goldens, model, options)
    return CheckedModel(spec, goldens, cases)


def _prove_pieces(goldens: Goldens, run: ModelRun, model: ModelFiles, options: RegressOptions
                  ) -> tuple[list[bytes | None] | None, bool, bool]:
    """Every id's bytes as the live decoder gives them, if they hash to the stored digest (then
    they *are* the goldens'), and whether they are text (``lossy_pieces``: U+FFFD for a part of a
    character); else None, and whether that is a change (named in ``options.notes``)."""
    from tokparity.backends.registry import make_backend
    from tokparity.run.ops import ask_op

    about = goldens.decoding
    if about is None or about.pieces_sha256 is None:
        return None, False, False
    decoder = run.backends.get(about.decoder)
    made = decoder is None
    if decoder is None:
        decoder = make_backend(about.decoder, model)
    try:
        table = ask_op(lambda: decoder.piece_bytes(list(range(run.vocab.size))))
    finally:
        if made:
            decoder.close()
    if isinstance(table, list) and pieces_digest(table) == about.pieces_sha256:
        return table, decoder.lossy_pieces, False
    options.notes.append(f"CHANGED {goldens.model} pieces: {about.decoder}'s bytes of the tokens no longer hash to "
                         f"the stored digest (made by {about.decoder} {about.version}; the digest cannot name the id: "
                         f"run `tokparity compare {goldens.model} --ops pieces` beside the previous release)")
    return None, False, True


def judge_model(checked: CheckedModel, options: RegressOptions, results: ResultsSoFar) -> None:
    """Every backend against the goldens on the checked cases, add_special off then on (the
    decoding ops once, on the plain ids, and on the id sequences the goldens hold), counted into
    ``results`` (and the notes a user should read into ``options.notes``)."""
    model, goldens = resolve_model(checked.spec), checked.goldens
    cases = dict(checked.cases)
    live, changed = _prove_digests(goldens, cases, model, options)
    for corpus in changed:
        del cases[corpus]
    from tokparity.vocab import load_vocab
    stored = StoredGoldens(goldens, cases, load_vocab(model.primary[1]), live)
    made = next((goldens.corpora[c].prompts_made for c in cases if goldens.corpora[c].prompts_made), None)
    prompts = StoredPrompts(made["encoder"], stored.prompt) if made else None
    compare_options = CompareOptions(parse_special=goldens.header.get("parse_special", False), oracle=ORACLE,
                                     explicit_backends=bool(options.backends), ops=options.ops,
                                     services=Services(known=options.known, progress=options.progress,
                                                       ready={ORACLE: stored}, prompts=prompts))
    # (prompts: every backend that applies chat templates, as compare asks them; their prompts never move)
    backends = options.backends or (None if prompts else default_backends(goldens))
    pipeline = ModelPipeline.open(checked.spec, backends, compare_options, results)
    run = pipeline.run
    pieces_changed = False
    try:
        if "pieces" in options.ops:
            stored.pieces_table, stored.lossy_pieces, pieces_changed = _prove_pieces(goldens, run, model, options)
        passes = [(False, options.ops)] + ([(True, ("encode",))] if "encode" in options.ops else [])
        for add_special, ops in passes:
            # both settings through one run: backends load once
            pipeline.reask(replace(compare_options, add_special=add_special, ops=ops))
            label = SPECIAL_LABEL if add_special else ""
            pipeline.count(run.judged(enumerate(Case(c.id, c.text, c.corpus + label, c.tags)
                                                for c in chain(*cases.values()))))
            if not add_special and run.decoding is not None and goldens.decoding is not None:
                first = sum(len(c) for c in cases.values())
                for k, id_case in enumerate(goldens.decoding.id_cases):
                    pipeline.count(run.id_records(first + k, id_case))
            pipeline.diagnose(None)  # with this add_special: the diagnosis runs the reference the same way
    finally:
        pipeline.close()
    def stated(backend: str, op: str, mismatches: int) -> tuple[str, str, int]:
        # a digest that changed (a digest-only corpus's ids, the tokens' bytes) is a change nobody explained
        unexplained = (len(changed) if op == "encode" else 0) + (pieces_changed and op == "pieces")
        if made and op == "chat":
            return (f"{ORACLE} (the template's prompts encoded by {made['encoder']} {made.get('version', '?')})",
                    f"the prompts the model's chat template gave (rendered as transformers renders it) when "
                    f"`regress --update` made {goldens.path.name}", unexplained)
        return (f"{ORACLE} ({goldens.made_by()})",
                f"the ids its oracle gave when `regress --update` made {goldens.path.name}"
                + _release_bump(backend, mismatches, goldens.header.get("versions", {}), results.backends),
                unexplained)

    summaries = pipeline.settle(stated=stated)
    if options.known is not None:
        # (the decoding ops are judged against texts the decoder's own library made: a difference between
        # that library and another, what most decoding entries describe, shows only where another is judged,
        # and then as a change to read, not a stale entry)
        options.known.not_run(model.name, compare_options.decoding_ops)
    results.runs.extend(summaries)
    results.options.setdefault("goldens", {})[model.name] = {
        "file": str(goldens.path), "made_by": goldens.header.get("versions", {}),
        "tokparity": goldens.header.get("tokparity"), "corpora": list(cases),
        "digest_changed": changed + (["pieces"] if pieces_changed else [])}


def _release_bump(name: str, mismatches: int, then: dict, backends: dict) -> str:
    """Where a backend that made the goldens runs another release of its library now and gives
    other ids, a clause saying so: its changes are that bump's (``tokparity drift`` shows them).
    ``then``: the goldens' versions; ``backends``: the run's, as Results.backends holds them."""
    from tokparity.backends.registry import without_release
    library = without_release(name)
    was, now = then.get(library), backends.get(name, {}).get("version")
    if not mismatches or not isinstance(was, str) or not now or was == now:
        return ""
    return (f"; {library} {was} made them and {name} runs {now}: its changes are that release bump's "
            "(tokparity drift compares two releases case by case)")


@dataclass(frozen=True)
class JudgedElsewhere:
    """What a Ray task sends back of one model: its results, the notes for the user and the known
    list's counts, or the error it met (returned, not raised: the driver says it in one line)."""

    results: ResultsSoFar | None = None
    notes: list[str] = field(default_factory=list)
    known: KnownList | None = None
    error: str = ""


def judge_elsewhere(checked: CheckedModel, options: RegressOptions) -> JudgedElsewhere:
    """``judge_model`` in another process (a Ray task)."""
    from tokparity.run.cluster import off_the_path

    off_the_path()  # (Ray puts the driver's folder on the path for every task: its modules must not load here)
    results = ResultsSoFar()
    try:
        judge_model(checked, options, results)
    except TokparityError as e:
        return JudgedElsewhere(error=str(e))
    except Exception as e:  # a bug, not bad input: the driver shows where
        return JudgedElsewhere(error=f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
    return JudgedElsewhere(results, options.notes, options.known)


def judge_on_ray(checked: list[CheckedModel], options: RegressOptions, results: ResultsSoFar) -> None:
    """``regress --ray``: each model judged by a Ray task of its own (a model's two passes share
    its loaded backends, so a model is the unit), as many at once as the cluster has CPUs; the
    parts are merged here in model order, so the reports are those of one process."""
    from tokparity.run.cluster import WAIT_SECONDS, ray_session

    address = options.ray or ""
    with ray_session(address) as (ray, slots):
        results.timing_jobs = slots
        _say(options, f"--ray {address or 'local'}: {len(checked)} model(s), a task each, up to {slots} at once")
        task = ray.remote(num_cpus=1, max_retries=0)(judge_elsewhere)
        sent = replace(options, progress=None, notes=[], ray=None,
                       known=options.known.blank() if options.known else None)
        refs = {task.remote(model, sent): i for i, model in enumerate(checked)}
        parts: dict[int, JudgedElsewhere] = {}
        waiting = list(refs)
        try:
            while waiting:  # (a short wait, so that Ctrl-C is handled at once)
                ready, waiting = ray.wait(waiting, num_returns=1, timeout=WAIT_SECONDS)
                for ref in ready:
                    i = refs[ref]
                    try:
                        part = parts[i] = ray.get(ref)
                    except ray.exceptions.RayError as e:  # (its worker died: one line, not Ray's traceback)
                        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                        raise TokparityError(f"{checked[i].goldens.model}: its Ray task failed ({first}); run "
                                             "without --ray to see the model's own error") from None
                    if part.error or part.results is None:
                        raise TokparityError(f"{checked[i].goldens.model}: {part.error}")
                    for line in part.results.options.get("unavailable", []):
                        _say(options, f"skipping {line}")
                    _say(options, judged_message(checked[i]))
        finally:  # (interrupted: the models judged whole are counted all the same, in model order)
            for i in sorted(parts):
                part = parts[i]
                if part.error or part.results is None:
                    continue  # (its error is the one raised)
                results.absorb(part.results)
                options.notes.extend(part.notes)
                if options.known is not None and part.known is not None:
                    options.known.absorb(part.known)


def judged_message(checked: CheckedModel) -> str:
    n = sum(len(c) for c in checked.cases.values())
    prompts = any(checked.goldens.corpora[c].prompts_made is not None for c in checked.cases)
    return f"{checked.goldens.model}: {n} {'conversations' if prompts else 'cases × 2 settings'} against " \
           f"{checked.goldens.path.name}"


def models_in(goldens_dir: Path, with_prompts: bool = False) -> list[str]:
    """The model specs of every goldens file in the folder, as they were given to --update
    (``with_prompts``: only those that hold the prompts of conversations)."""
    specs = []
    for path in sorted(Path(goldens_dir).glob(f"*{SUFFIX}")):
        goldens = read_goldens(path)
        if not with_prompts or any(c.prompts_made is not None for c in goldens.corpora.values()):
            specs.append(goldens.header.get("spec") or path.name.removesuffix(SUFFIX))
    return specs


def corpora_in(goldens_dir: Path) -> list[str]:
    """The corpora the goldens files of the folder hold, by the names they were given to --update
    (a file's path among them): a regress without -c reads them."""
    return list(dict.fromkeys(name for path in sorted(Path(goldens_dir).glob(f"*{SUFFIX}"))
                              for name in read_goldens(path).corpora))


def run_regress(models: list[str], options: RegressOptions) -> Results:
    started = time.perf_counter()
    results = ResultsSoFar(options={"command": "regress", "goldens_dir": str(options.goldens_dir)})
    if not models:
        chat = options.ops == ("chat",)
        models = models_in(options.goldens_dir, with_prompts=chat)
        if not models:
            raise TokparityError(f"{options.goldens_dir}: holds no goldens (*{SUFFIX})" +
                                 (" with the prompts of conversations" if chat else "") + "; make them with "
                                 f"`tokparity regress --update [MODEL…] --goldens {options.goldens_dir}`")
    checked = [check_model(spec, options) for spec in models]  # bad goldens or corpora: before any run
    try:  # Ctrl-C or a stop signal: the reports of the models judged whole (regress keeps no journal)
        if options.ray is not None:
            judge_on_ray(checked, options, results)
        else:
            for model in checked:
                judge_model(model, options, results)
                _say(options, judged_message(model))
    except KeyboardInterrupt:
        results.interrupted = True
    # One "goldens" row for the whole run: each model's provenance is in options["goldens"].
    results.backends[ORACLE] = {"version": f"{len(models)} goldens file(s) in {options.goldens_dir}"}
    return results.final(__version__, time.perf_counter() - started, options.known.report() if options.known else None)
