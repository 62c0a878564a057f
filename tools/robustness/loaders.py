"""Load hostile tokenizer files in a sandboxed child process and say how each load ended.

Every file is loaded with ``load_vocab`` in a long-lived worker process (imports paid once),
under a time limit and an address-space limit (``RLIMIT_AS``) that grows with the file:

    limit = address space in use before the load + ALLOWANCE + FACTOR[format] × size of the files

so a loader that believes a length field and allocates 2**63 bytes fails at once instead of
swapping the machine. After a load the worker also touches what a user touches next (merges,
fingerprint, token-type counts, special tokens) and walks the ``precompiled_charsmap`` with the
reference parser. Each check ends in one of three outcomes:

* ``ok``: the file loaded (a mutant can still be a valid file);
* ``clear-error``: a ``TokparityError`` whose message is one line that starts with the file's path;
* ``bad``: anything else: another exception type (with the frame that raised it), a message
  of several lines or one not naming the file, a MemoryError, a timeout, a crash.

``check_loader(path).kind`` is ``'ok'`` on llama.cpp's own ``ggml-vocab-llama-spm.gguf``.

As a nox session (fuzz the small zoo files for N seconds; exit status 1 if any ``bad``)::

    python -m tools.robustness.loaders --seconds 120 --seed 1 [-o reports/hostile-loaders]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from tools.robustness.mutators import Mutant, Recipe

Tag = TypeVar("Tag")  # whatever the caller pairs with each mutant, handed back with its outcome

OK, CLEAR, BAD = "ok", "clear-error", "bad"
ROOT = Path(__file__).resolve().parents[2]  # the checkout: the worker imports tools.robustness from it
OUTCOMES = (OK, CLEAR, BAD)

MiB = 1 << 20
ALLOWANCE = 64 * MiB
# Bytes of address space a load (and the probe after it) may use per byte of file: what the file
# justifies. Measured: gemma-4's GGUF (515k merges, decoded by the probe) needs 13; a GGUF of
# 300k one-character merges 15, a .model of 15-byte pieces 19, a Unigram tokenizer.json of
# short pieces 12; JSON can reach 24 (``[{},{},…]``: a 64-byte dict per 3 bytes).
FACTOR = {"gguf": 24, "spm-model": 32, "hf-json": 48}
MAX_MESSAGE = 600  # a longer error message is not "one line" a user can read
DEFAULT_TIMEOUT = 10.0


@dataclass(frozen=True)
class Outcome:
    kind: str  # ok | clear-error | bad
    detail: str = ""  # the error message, or what went wrong
    seconds: float = 0.0


def _format_of(path: Path) -> str:
    return {".gguf": "gguf", ".model": "spm-model", ".json": "hf-json"}.get(path.suffix, "hf-json")


def address_space_limit(in_use: int, size: int, fmt: str) -> int:
    return in_use + ALLOWANCE + FACTOR.get(fmt, max(FACTOR.values())) * size


# ---------------------------------------------------------------------------------------------
# Worker side: runs in the child, one request per line on stdin, one answer per line.

def _address_space_in_use() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


PROBE_TEXTS = ("ﬁx ½ ｱｲｳ Ａ\u3000ｶﾞ ㍻ ℡ ⅷ ﹏ 한국어 Ǆ ǅ ß ﬀ ｰ ︎ 𝐀 ⑴", "".join(map(chr, range(1, 0x250))))


def _probe(vocab, path: Path) -> None:
    """What a user does right after loading: fingerprint, merges, inspect, the bytes of tokens
    (the diff), the charsmap walk."""
    from tokparity.reference.charsmap import CharsMap
    from tokparity.vocab.token_bytes import token_bytes

    vocab.merges  # noqa: B018 (lazy: decoded on first use)
    vocab.fingerprint  # noqa: B018
    vocab.type_counts()
    vocab.special_tokens()
    odd_types = [i for i, t in enumerate(vocab.token_types or []) if not 0 <= t <= 6]
    for i in [*range(0, vocab.size, max(1, vocab.size // 500)), *odd_types[:100]]:
        token_bytes(vocab, i)  # what the diff shows for a token
    if vocab.precompiled_charsmap:
        cm = CharsMap(vocab.precompiled_charsmap, f"{path}: precompiled_charsmap")
        for text in PROBE_TEXTS:
            data = text.encode()
            for start in range(len(data)):
                cm.longest_match(data, start)
            cm.can_extend(data[:3])
            cm.walk_reach(data)
        cm.continuation_chars()  # the normalizer's fast path walks the whole trie once


def _where(e: BaseException) -> str:
    frames = traceback.extract_tb(e.__traceback__)
    if not frames:
        return ""
    f = frames[-1]
    return f" at {Path(f.filename).name}:{f.lineno} in {f.name}"


def classify_error(e: BaseException, path: Path) -> Outcome:
    """A ``TokparityError`` that is one line naming a file of the case is clear; all else is bad."""
    from tokparity.errors import TokparityError

    if isinstance(e, TokparityError):
        msg = str(e)
        if "\n" in msg or "\r" in msg:
            return Outcome(BAD, f"message of several lines: {msg[:300]!r}")
        if not msg.startswith(str(path.parent) + os.sep) or ": " not in msg:
            return Outcome(BAD, f"message does not start with the file's path: {msg[:300]!r}")
        if len(msg) > MAX_MESSAGE:
            return Outcome(BAD, f"message of {len(msg)} characters: {msg[:300]!r}…")
        return Outcome(CLEAR, msg)
    return Outcome(BAD, f"{type(e).__name__}: {str(e)[:300]}{_where(e)}")


def check_here(path: str | os.PathLike, probe: bool = True) -> Outcome:
    """Load ``path`` in this process under the address-space limit and classify the outcome.
    Meant for the worker process: a MemoryError can leave the process in a poor state."""
    import resource

    from tokparity.vocab import load_vocab

    path = Path(path)
    size = path.stat().st_size
    config = path.with_name("tokenizer_config.json")  # read beside a tokenizer.json
    if _format_of(path) == "hf-json" and config.is_file():
        size += config.stat().st_size
    limit = address_space_limit(_address_space_in_use(), size, _format_of(path))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    start = time.perf_counter()
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    try:
        vocab = load_vocab(path)
        if probe:
            _probe(vocab, path)
        del vocab
        outcome = Outcome(OK)
    except MemoryError as e:
        outcome = Outcome(BAD, f"MemoryError under an address-space limit of {limit // MiB} MiB "
                               f"for {size} bytes of files{_where(e)}")
    except Exception as e:  # noqa: BLE001 (classifying every exception is the point)
        outcome = classify_error(e, path)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    return Outcome(outcome.kind, outcome.detail, time.perf_counter() - start)


def _worker_main() -> None:
    # Answers go to the original stdout; anything a loader prints goes to stderr.
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    import numpy  # noqa: F401  (OpenBLAS allocates its buffers on import: before any limit)

    import tokparity.reference.charsmap  # noqa: F401  (import once, before any limit)
    import tokparity.vocab.gguf  # noqa: F401
    import tokparity.vocab.hf_json  # noqa: F401
    import tokparity.vocab.spm_model  # noqa: F401

    out.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        o = check_here(req["path"], req.get("probe", True))
        out.write(json.dumps({"kind": o.kind, "detail": o.detail, "seconds": o.seconds}) + "\n")


# ---------------------------------------------------------------------------------------------
# Parent side

class LoaderWorker:
    """One child process that loads files on request, restarted after a timeout or crash."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT, probe: bool = True):
        self.timeout, self.probe = timeout, probe
        self.proc: subprocess.Popen | None = None
        self._buf = b""
        self._stderr = tempfile.TemporaryFile()

    def _start(self) -> None:
        self._stderr.seek(0)
        self._stderr.truncate()
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        self.proc = subprocess.Popen([sys.executable, "-m", "tools.robustness.loaders", "--worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                     bufsize=0, env={**os.environ, "PYTHONPATH": path})
        self._buf = b""
        if not self._read_line(60.0):
            raise RuntimeError(f"the loader worker did not start: {self._stderr_tail()}")

    def _read_line(self, timeout: float) -> bytes | None:
        """One line from the worker; None on timeout, b"" at end of file (the worker died)."""
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return b""
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        lines = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
        return " | ".join(lines[-3:])

    def _stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
            for f in (self.proc.stdin, self.proc.stdout):
                if f is not None:
                    f.close()
            self.proc = None

    def check(self, path: str | os.PathLike) -> Outcome:
        if self.proc is None or self.proc.poll() is not None:
            self._stop()
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        start = time.perf_counter()
        try:
            self.proc.stdin.write(json.dumps({"path": str(path), "probe": self.probe}).encode() + b"\n")
        except BrokenPipeError:
            pass
        line = self._read_line(self.timeout)
        if line:
            answer = json.loads(line)
            if answer["detail"].startswith("MemoryError"):
                self._stop()  # start afresh rather than go on in a process that ran out of memory
            return Outcome(answer["kind"], answer["detail"], answer["seconds"])
        if line is None:
            self._stop()
            return Outcome(BAD, f"timeout: no answer after {self.timeout:g} s", time.perf_counter() - start)
        code = self.proc.wait()
        how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        tail = self._stderr_tail()
        self._stop()
        return Outcome(BAD, f"crash: the worker died ({how}){': ' + tail if tail else ''}",
                       time.perf_counter() - start)

    def close(self) -> None:
        self._stop()
        self._stderr.close()

    def __enter__(self) -> LoaderWorker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def check_loader(path: str | os.PathLike, timeout: float = DEFAULT_TIMEOUT, probe: bool = True) -> Outcome:
    """Load one file in a fresh child process (time and address-space limits) and classify it.
    To check many files, a ``LoaderPool`` reuses its workers."""
    with LoaderWorker(timeout, probe) as worker:
        return worker.check(path)


class LoaderPool:
    """``workers`` LoaderWorkers, each with its own scratch folder where mutants are written."""

    def __init__(self, workers: int = 2, timeout: float = DEFAULT_TIMEOUT, probe: bool = True):
        self._root = Path(tempfile.mkdtemp(prefix="tokparity-hostile-"))
        self._free: list[tuple[LoaderWorker, Path]] = []
        for i in range(workers):
            folder = self._root / f"w{i}"
            folder.mkdir()
            self._free.append((LoaderWorker(timeout, probe), folder))
        self._all = list(self._free)
        self._lock = threading.Lock()
        self.workers = workers

    def check(self, mutant) -> Outcome:
        """Write ``mutant`` (a ``Mutant`` or a ``Recipe``) to a scratch folder and load it."""
        return self._check(mutant)[1]

    def _check(self, mutant) -> tuple[Mutant, Outcome]:
        if hasattr(mutant, "build"):
            mutant = mutant.build()
        with self._lock:
            worker, folder = self._free.pop()
        try:
            for p in folder.iterdir():
                p.unlink()
            path = folder / mutant.filename
            path.write_bytes(mutant.data)
            for name, data in mutant.extra_files:
                (folder / name).write_bytes(data)
            return mutant, worker.check(path)
        finally:
            with self._lock:
                self._free.append((worker, folder))

    def map(self, items: Iterable[tuple[Tag, Mutant | Recipe]]) -> Iterator[tuple[Tag, Mutant, Outcome]]:
        """``(tag, mutant or recipe)`` in, ``(tag, mutant, outcome)`` out as they complete;
        at most two mutants per worker are built at a time."""
        with ThreadPoolExecutor(self.workers) as ex:
            pending: dict[Future, Tag] = {}
            for tag, m in items:
                pending[ex.submit(self._check, m)] = tag
                if len(pending) >= 2 * self.workers:
                    done, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        yield (pending.pop(f), *f.result())
            for f in list(pending):
                yield (pending.pop(f), *f.result())

    def close(self) -> None:
        for worker, _ in self._all:
            worker.close()
        shutil.rmtree(self._root, ignore_errors=True)

    def __enter__(self) -> LoaderPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------
# The fuzz campaign (the nox session)

# (zoo model, file role, format): small files, one per loader and the charsmap paths.
DEFAULT_SOURCES = (
    ("llama-spm", "gguf", "gguf"),
    ("nomic-bert-moe", "gguf", "gguf"),  # UGM with a precompiled_charsmap
    ("deepseek-coder", "gguf", "gguf"),  # byte-level BPE with merges
    ("bert-bge", "gguf", "gguf"),  # WordPiece
    ("botchan-unigram", "spm_model", "spm-model"),  # with a precompiled_charsmap
    ("lenml-llama2", "tokenizer_json", "hf-json"),
)


class Source:
    """One seed file (``data`` as ``filename``) and what it takes to make random hostile variants."""

    def __init__(self, label: str, data: bytes, filename: str, fmt: str, seed: int, origin: str = ""):
        from tools.robustness import mutators as m

        self.label, self.data, self.filename, self.fmt = label, data, filename, fmt
        self.origin = origin or label
        rng = random.Random(f"{seed}-{label}-structural")
        if fmt == "gguf":
            self.layout = m.GGUFLayout(self.data)
            self.structural = m.gguf_structural(self.layout, rng, filename, per_array=4)
        elif fmt == "spm-model":
            self.structural = m.spm_structural(self.data, rng, filename, pieces=2)
        else:
            self.structural = m.hf_json_structural(self.data, rng, filename)

    def random_mutant(self, rng: random.Random):
        from tools.robustness import mutators as m

        if self.fmt == "gguf":
            return m.gguf_random(self.layout, rng, self.filename, self.structural)
        if self.fmt == "spm-model":
            return m.spm_random(self.data, rng, self.filename, self.structural)
        return m.hf_json_random(self.data, rng, self.filename, self.structural)


def default_sources(seed: int) -> list[Source]:
    """The small zoo files, plus botchan's .model rewritten as a Unigram tokenizer.json with a
    Precompiled normalizer (the zoo's only such tokenizer.json is Gemma 3's 33 MB one)."""
    from tokparity.vocab import load_vocab
    from tokparity.zoo import resolve_model
    from tools.robustness.mutators import unigram_json

    sources = []
    for model, role, fmt in DEFAULT_SOURCES:
        path = resolve_model(model).files[role]
        sources.append(Source(f"{model}-{role}", path.read_bytes(), path.name, fmt, seed, str(path)))
    spm = load_vocab(resolve_model("botchan-unigram").files["spm_model"])
    sources.append(Source("botchan-unigram-as-tokenizer_json",
                          unigram_json(spm.tokens, spm.scores or [], spm.precompiled_charsmap),
                          "tokenizer.json", "hf-json", seed, f"{spm.source} (as a Unigram tokenizer.json)"))
    return sources


def fuzz(sources: list[Source], seconds: float, seed: int, out_dir: Path, workers: int = 2,
         timeout: float = DEFAULT_TIMEOUT, log=print) -> Counter:
    """Random mutants of ``sources``, round robin, for ``seconds``. Every ``bad`` one is written
    to ``out_dir`` (the file, plus a ``.txt`` saying what happened). Returns counts keyed by
    ``(format, outcome)``."""
    counts: Counter = Counter()
    deadline = time.monotonic() + seconds

    def stream():
        i = 0
        while time.monotonic() < deadline:
            src = sources[i % len(sources)]
            # One generator per case: case i of seed S is the same mutant on every run.
            yield (src, i), src.random_mutant(random.Random(f"{seed}-{i}"))
            i += 1

    with LoaderPool(workers, timeout) as pool:
        for (src, i), mutant, outcome in pool.map(stream()):
            counts[(src.fmt, outcome.kind)] += 1
            if outcome.kind == BAD:
                out_dir.mkdir(parents=True, exist_ok=True)
                stem = f"{i:06d}-{src.label}"
                (out_dir / f"{stem}-{mutant.filename}").write_bytes(mutant.data)
                for name, data in mutant.extra_files:
                    (out_dir / f"{stem}-{name}").write_bytes(data)
                (out_dir / f"{stem}.txt").write_text(
                    f"source: {src.origin}\nmutant: {mutant.name}\nseed: {seed}, case {i}\n"
                    f"outcome: {outcome.detail}\n")
                log(f"BAD {stem} {mutant.name}: {outcome.detail}")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.robustness.loaders",
                                     description="Fuzz the tokenizer-file loaders with hostile variants of zoo files.")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per file")
    parser.add_argument("-o", "--out", type=Path, default=Path("reports/hostile-loaders"),
                        help="where the inputs with a 'bad' outcome are written")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker_main()
        return 0

    # A SIGTERM (a CI time limit) unwinds like Ctrl-C: workers stopped, scratch folder removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sources = default_sources(args.seed)
    print(f"fuzzing {len(sources)} files for {args.seconds:g} s (seed {args.seed}, {args.workers} workers)")
    counts = fuzz(sources, args.seconds, args.seed, args.out, args.workers, args.timeout)
    formats = sorted({fmt for fmt, _ in counts})
    print(f"{'format':<10} " + " ".join(f"{k:>12}" for k in OUTCOMES) + f" {'total':>8}")
    for fmt in formats:
        row = [counts[(fmt, k)] for k in OUTCOMES]
        print(f"{fmt:<10} " + " ".join(f"{n:>12}" for n in row) + f" {sum(row):>8}")
    total = [sum(counts[(f, k)] for f in formats) for k in OUTCOMES]
    print(f"{'all':<10} " + " ".join(f"{n:>12}" for n in total) + f" {sum(total):>8}")
    if total[2]:
        print(f"{total[2]} bad outcomes; the inputs are in {args.out}/")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
