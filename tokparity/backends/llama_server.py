"""llama-server over HTTP: what a deployed llama.cpp server tokenizes, renders and decodes.

    -b llama-server                         a server tokparity starts on the model, and stops
    -b llama.cpp-jinja                      the same server, named for its chat path (--ops chat)
    -b 'srv=http:llama-server@8080'         a server you run, on 127.0.0.1:8080
    -b 'srv=http:llama-server@HOST:PORT'    one elsewhere: only where you name the host

Each op asks the server's own endpoint. Encode: ``POST /tokenize`` with ``add_special`` and
``parse_special``. Decode: ``POST /detokenize``. Stream: ``POST /completion`` generates the ids
asked and streams them (``stream``). Chat: ``POST /apply-template`` renders the
conversation with llama.cpp's own Jinja engine (``common/jinja``, the server's default), then
``/tokenize`` turns the prompt into ids as a completion does (specials added and parsed). The
answer is those ids: llama.cpp takes the BOS text off the prompt where the tokenizer adds a BOS.
A template that refuses the conversation is the answer's ``raised``. A server that is gone, slow or
answers no JSON fails that case only: a crash, a timeout or an error.

The server tokparity starts runs a tiny model (tokparity.convert.tiny_model): the GGUF's tokenizer
keys with the model's chat template, and random weights. It listens on a free loopback port. Its
log is kept beside the tiny model. It is stopped with the run, and on any signal that ends it.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tokparity.backends.base import Backend
from tokparity.backends.process import ENGINE_MARK, exited, kill_engine, wait_for_exit
from tokparity.backends.server_http import CASE_SECONDS, LOOPBACK, ServerClient, free_port, parse_address, said
from tokparity.errors import BackendCrash, CaseFailure, NotCovered, TokparityError
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings, incomplete_tail

if TYPE_CHECKING:
    from tokparity.chat import ChatAnswer
    from tokparity.chat.conversation import Conversation
    from tokparity.zoo import ModelFiles

START_SECONDS = 120.0  # to load the tiny model (a 262,144-token vocabulary takes a few seconds)
# Added to each id a stream asks for, less a step for each position before its first: the steps
# are far wider than the tiny model's logits (random weights: tens apart), so the sampler's first
# pick is the earliest id not yet generated
FORCING_BIAS, FORCING_STEP = 1e7, 1e3
TOKEN_TRIGGER = 0  # common/common.h COMMON_GRAMMAR_TRIGGER_TYPE_TOKEN: a lazy grammar starts at this id
RESTARTS = 3  # a server that dies more often than this is left dead: each case is then a crash


class LlamaServerBackend(Backend):
    """llama-server's endpoints, on a server tokparity starts (``url`` None) or one at ``url``."""

    name = "llama-server"
    decode_switches = frozenset()

    def __init__(self, model: ModelFiles, url: str | None = None, timeout: float = CASE_SECONDS,
                 say=None, **opts):
        if opts:
            raise TokparityError(f"llama-server backend: unknown option(s) {', '.join(sorted(opts))}")
        self.say = say or _to_stderr
        self.model, self.gguf = model, gguf_of(model, self.say)
        from tokparity.vocab import load_vocab
        self.vocab = load_vocab(self.gguf)  # (the file's pieces, for reports: a server has no endpoint for them)
        self.proc: subprocess.Popen | None = None
        self._mark = f"llama-server-{os.getpid()}-{id(self)}"
        self._restarts = 0
        self._generation_marks: tuple[frozenset[int], frozenset[int]] | None = None
        self._local = None  # (llama.cpp on the server's file, for the stream: loaded when first asked)
        self.url = url
        if url is None:
            self.client = ServerClient(LOOPBACK, 0, timeout)
            self.tiny = tiny_model_for(model, self.gguf)
            self._start()
        else:
            host, port = parse_address(url, self.name)
            self.client = ServerClient(host, port, timeout, yours=True)
        self._version = self._ask_version()

    # -- the server tokparity starts ------------------------------------------------------------

    def _start(self) -> None:
        from tokparity.backends.server_build import server_binary
        binary = server_binary(self.say)
        tiny = self.tiny
        port = free_port()
        _forget_old_logs(tiny)
        self.log = tiny.with_suffix(f".{port}.log")
        argv = [str(binary), "-m", str(tiny), "--host", LOOPBACK, "--port", str(port), "-c", "4096", "-np", "1",
                "-t", "1", "--no-webui", "--seed", "0"]
        env = {**os.environ, ENGINE_MARK: self._mark}
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True, env=env, preexec_fn=_die_with_parent)
        from tokparity.backends import orphans
        orphans.started(self.proc)
        self.client.close()
        self.client.port = port
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if exited(self.proc):
                proc = self.proc
                self.close()  # (reaps it: its exit status is known after)
                raise TokparityError(f"llama-server stopped while loading {tiny.name} ({_ended(proc)}); its last "
                                     f"log line: {_tail(self.log)} (log: {self.log})")
            try:
                if self.client.post("/tokenize", {"content": ""})[0] == 200 and not exited(self.proc):
                    return  # (ours: a server that lost the port to another has exited)
            except CaseFailure:
                pass
            time.sleep(0.1)
        self.close()
        raise TokparityError(f"llama-server did not answer within {START_SECONDS:.0f} s (log: {self.log})")

    def _alive(self) -> None:
        """A server that died before this case (its crash was the case before's) is started again,
        up to RESTARTS times; then every case is a crash."""
        if self.url is not None or (self.proc is not None and not exited(self.proc)):
            return  # (a server you run is yours to start)
        if self.proc is not None:
            kill_engine(self.proc, self._mark)
            self.proc = None
        if self._restarts >= RESTARTS:
            raise BackendCrash(f"llama-server is gone; not started again after {RESTARTS} restarts (log: {self.log})")
        self._restarts += 1
        try:
            self._start()
        except TokparityError as e:
            raise BackendCrash(f"llama-server is gone and starting it again failed: {e}") from None

    def _post(self, path: str, body: dict) -> tuple[int, object]:
        """``POST path`` to a live server; where the server dies on it, the crash says how it ended."""
        self._alive()
        try:
            return self.client.post(path, body)
        except BackendCrash as e:
            raise self._ended(e) from None

    def _ended(self, crash: BackendCrash) -> BackendCrash:
        """A dropped connection, said as how the server ended where it did."""
        if self.proc is not None and wait_for_exit(self.proc, 2.0):
            kill_engine(self.proc, self._mark)  # (reaped: its exit status is known)
            return BackendCrash(f"llama-server exited ({self.proc.returncode}) on this case; it is started again "
                                f"for the next (log: {self.log})")
        return crash

    def _ask(self, path: str, body: dict, key: str) -> object:
        status, reply = self._post(path, body)
        if status != 200 or not isinstance(reply, dict) or key not in reply:
            raise CaseFailure(f"{self.client.url}{path}: HTTP {status}: {said(reply)}")
        return reply[key]

    def _ask_version(self) -> str:
        """The server's build, as ``GET /props`` says it; a server that does not answer is one line."""
        try:
            _, reply = self.client.request("GET", "/props")
        except CaseFailure as e:
            self.close()
            raise TokparityError(f"{self.client.url}: no llama-server answers there ({e.detail}); start it "
                                 "first, or use -b llama-server") from None
        build = reply.get("build_info", "") if isinstance(reply, dict) else ""
        return f"llama-server {build}".strip()

    # -- the ops ---------------------------------------------------------------------------------

    @property
    def version(self) -> str:
        return self._version

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> list[int]:
        return _ids(self._ask("/tokenize", {"content": text, "add_special": add_special,
                                            "parse_special": parse_special}, "tokens"))

    def decode(self, ids: list[int], settings: DecodeSettings = AS_FILES_SAY) -> str:
        text = self._ask("/detokenize", {"tokens": list(ids)}, "content")
        if not isinstance(text, str):
            raise CaseFailure(f"/detokenize answered {type(text).__name__}, not text")
        return text

    def pieces(self, ids: list[int]) -> list[str]:
        return [self.vocab.tokens[i] if 0 <= i < self.vocab.size else "" for i in ids]

    def stream(self, ids: list[int], prompt: int, settings: DecodeSettings = AS_FILES_SAY, step: int = 1) -> list[str]:
        """The server's own stream (``POST /completion`` with ``stream``). The server generates the ids
        after the first ``prompt`` (``_forcing``) and sends each chunk as it sends a model's
        (server-context.cpp ``process_token``): nothing while the text ends inside a character."""
        from tokparity.backends.base import in_steps
        rest = [int(i) for i in ids[prompt:]]
        body = self._forcing([int(i) for i in ids[:prompt]], rest, settings)
        self._alive()
        try:
            status, events = self.client.events("/completion", body)
        except BackendCrash as e:
            raise self._ended(e) from None
        if not events:
            raise CaseFailure(f"{self.client.url}/completion: HTTP {status}, and no event")
        deltas = [""] * len(rest)
        last = 0
        for event in events:
            if status != 200 or not isinstance(event, dict) or "error" in event:
                raise CaseFailure(f"{self.client.url}/completion: HTTP {status}: {said(event)}")
            if event.get("stop"):
                if event.get("tokens_predicted") != len(rest):
                    raise CaseFailure(f"/completion stopped after {event.get('tokens_predicted')} of {len(rest)} "
                                      f"ids ({event.get('stop_type')})")
                continue
            n, token = event.get("tokens_predicted"), event.get("tokens")
            if not isinstance(n, int) or not 0 < n <= len(rest):
                raise CaseFailure(f"/completion sent {str(token)[:60]} as id {n} of {len(rest)}")
            if token != [rest[n - 1]]:  # (another id the grammar let through, spelling the same bytes)
                raise NotCovered(f"the server generated {str(token)[:60]} where id {rest[n - 1]} was asked: "
                                 "the grammar and biases do not tell these ids apart here")
            deltas[n - 1] = str(event.get("content", ""))
            last = n
        if last != len(rest):  # (the last id ends a character: its chunk is sent, unless other ids were taken)
            raise NotCovered("the server generated other ids than those asked, spelling the same text: the grammar "
                             "and biases do not tell them apart here")
        return in_steps(deltas, step)

    def _marks(self) -> tuple[frozenset[int], frozenset[int]]:
        """The end-of-generation ids and the ids written only as special tokens."""
        if self._generation_marks is None:
            self._generation_marks = self._llama().generation_marks()
        return self._generation_marks

    def _forcing(self, prompt: list[int], rest: list[int], settings: DecodeSettings) -> dict:
        """The request that makes the server generate ``rest`` after ``prompt``. A grammar lets through
        only those ids, or ids that spell the same text; biases make each the sampler's first pick.
        A server writes a special token as nothing: ``preserved_tokens`` asks for its text, as a chat
        format does for its own tokens.
        Not covered: ids that hold an end-of-generation id, and ids neither can ask for."""
        if not prompt:
            raise NotCovered("a server generates after a prompt, and these ids have none")
        ends, hidden = self._marks()
        stop = next((i for i in rest if i in ends), None)
        if stop is not None:
            raise NotCovered(f"id {stop} ends a generation (llama_vocab_is_eog): a server cannot be asked to stream it")
        first: dict[int, int] = {}
        for at, i in enumerate(rest):
            first.setdefault(i, at)
        # Each id is raised by less the later it first comes, and lowered below the ids not yet
        # generated once it is (still far above the others). A first pick the grammar refuses costs
        # a pass over the whole vocabulary: an id that comes again.
        body: dict = {"prompt": prompt, "n_predict": len(rest), "stream": True, "return_tokens": True,
                      "temperature": 0, "cache_prompt": False, "sse_ping_interval": -1,
                      "logit_bias": [[i, FORCING_BIAS - FORCING_STEP * at] for i, at in first.items()],
                      "presence_penalty": FORCING_BIAS / 2, "repeat_last_n": len(prompt) + len(rest)}
        pieces = self._llama().token_bytes(rest, special=True)  # (as the server's grammar reads them)
        lead = _finishing(pieces)
        if lead and (len(set(rest[:lead + 1])) <= min(lead, len(rest) - 1) or set(rest[:lead + 1]) & set(prompt)):
            # (a generated id is lowered, and so is an id of the prompt: the biases cannot ask for it there)
            raise NotCovered("the ids that finish the character the prompt began, or the id after them, come twice: "
                             "without a grammar the server cannot be asked for them")
        if lead < len(rest):  # (the biases alone ask for the ids that finish it; the grammar starts after them)
            body["grammar"] = _grammar(rest[lead:], pieces[lead:])
            if lead:
                body |= {"grammar_lazy": True,
                         "grammar_triggers": [{"type": TOKEN_TRIGGER, "value": "", "token": rest[lead]}]}
        shown = sorted({self.vocab.tokens[i] for i in rest if i in hidden})
        if shown and not settings.skip_special:
            body["preserved_tokens"] = shown
        return body

    def _llama(self):
        """llama.cpp as it reads the file the server loads (llama-cpp-python: the same release as the
        server tokparity builds)."""
        if self._local is None:
            from tokparity.backends.llamacpp import LlamaCppBackend
            from tokparity.zoo import ModelFiles
            loaded = self.gguf if self.url is not None else self.tiny
            self._local = LlamaCppBackend(ModelFiles(self.model.name, {"gguf": loaded}, "local"))
        return self._local

    def chat(self, conversation: Conversation) -> ChatAnswer:
        from tokparity.chat import ChatAnswer
        body: dict = {"messages": conversation.messages,
                      "add_generation_prompt": conversation.add_generation_prompt,
                      "chat_template_kwargs": conversation.variables}
        if conversation.tools is not None:
            body["tools"] = conversation.tools
        if conversation.continue_final_message:
            body["continue_final_message"] = True
        status, reply = self._post("/apply-template", body)
        if status != 200 or not isinstance(reply, dict) or not isinstance(reply.get("prompt"), str):
            if status == 400 and isinstance(reply, dict) and isinstance(reply.get("error"), dict) \
                    and reply["error"].get("type") == "invalid_request_error":
                # (the template raised, or the server refused the request: a 500 is the server's own fault)
                return ChatAnswer(raised=said(reply))
            raise CaseFailure(f"{self.client.url}/apply-template: HTTP {status}: {said(reply)}")
        # Only the ids: llama.cpp takes the BOS text off the front of the prompt where the tokenizer
        # adds a BOS (common/chat.cpp), so the text it shows is not the text the ids come from.
        return ChatAnswer(None, self.encode(reply["prompt"], add_special=True, parse_special=True))

    def close(self) -> None:
        self.client.close()
        local, self._local = self._local, None
        if local is not None:
            local.close()
        proc, self.proc = self.proc, None
        if proc is not None:
            kill_engine(proc, self._mark)


class LlamaCppJinjaBackend(LlamaServerBackend):
    """The same server, named for what its chat op checks: llama.cpp's own Jinja engine."""

    name = "llama.cpp-jinja"


def _grammar(ids: list[int], pieces: list[bytes]) -> str:
    """A grammar that lets the server generate only ``ids``. A token that is whole characters is
    asked by its id (``<[id]>``). Tokens that split a character are asked as the text they spell
    together: at an id, a grammar refuses a token that holds no whole character and ends inside
    one (src/llama-grammar.cpp). Ids no grammar can ask for (an empty piece, bytes that are not
    UTF-8) are not covered."""
    parts: list[str] = []
    group = b""
    for i, piece in zip(ids, pieces):
        if not piece or piece[0] == 0:  # (a grammar lets through no token whose piece is empty or begins with NUL)
            raise NotCovered(f"id {i} is empty or begins with a NUL byte: no grammar lets a server generate it")
        if not group and _whole(piece):
            parts.append(f"<[{i}]>")
            continue
        group += piece
        if not incomplete_tail(group):
            if not _whole(group):
                raise NotCovered("the ids after the prompt are not UTF-8: a grammar cannot ask a server for them")
            parts.append(_literal(group.decode("utf-8")))
            group = b""
    if group:
        raise NotCovered("the ids end inside a character: a grammar cannot ask a server for them")
    return "root ::= " + " ".join(parts)


def _finishing(pieces: list[bytes]) -> int:
    """How many of the first pieces finish a character the prompt began, up to a character's end: no
    grammar spells their bytes, which are not UTF-8 alone. 0 where the first begins a character."""
    joined = b"".join(pieces)
    stray = len(joined) - len(joined.lstrip(bytes(range(0x80, 0xC0))))  # (UTF-8's continuation bytes)
    size = 0
    for k, piece in enumerate(pieces, 1):
        size += len(piece)
        if stray and size >= stray and not incomplete_tail(joined[stray:size]) and _whole(joined[stray:size]):
            return k
    if stray:
        raise NotCovered("the ids end inside a character: the server sends nothing for them")
    return 0


def _whole(piece: bytes) -> bool:
    """Whether ``piece`` is whole UTF-8 characters."""
    try:
        piece.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _literal(text: str) -> str:
    """``text`` as a GBNF string literal, each character escaped (``\\UXXXXXXXX``)."""
    return '"' + "".join(f"\\U{ord(c):08X}" for c in text) + '"'


def _ids(value: object) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise CaseFailure(f"/tokenize answered {str(value)[:100]}, not a list of ids")
    return value


def _die_with_parent() -> None:
    """In the server's process, before it runs: SIGKILL when tokparity dies, even by SIGKILL itself
    (Linux ``PR_SET_PDEATHSIG``), so no server outlives the run that started it."""
    import ctypes
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # (not Linux: the run's own cleanup stops it)
        pass


def _to_stderr(line: str) -> None:
    print(f"tokparity: {line}", file=sys.stderr, flush=True)


LOG_DAYS = 1  # a server's log is kept this long after it was last written: runs name it in their messages


def _forget_old_logs(tiny: Path) -> None:
    """The logs of this model's earlier servers that no run has written for a day (one per start)."""
    old = time.time() - LOG_DAYS * 86400
    for log in tiny.parent.glob(f"{tiny.stem}.*.log"):
        try:
            if log.stat().st_mtime < old:
                log.unlink()
        except OSError:  # (another run's, removed first)
            pass


def _ended(proc: subprocess.Popen | None) -> str:
    """How a process ended, as its exit status says: ``killed by signal 9``, ``exit status 1``."""
    code = proc.returncode if proc is not None else None
    if code is None:
        return "its exit status unknown"
    return f"killed by signal {-code}" if code < 0 else f"exit status {code}"


def _tail(log: Path) -> str:
    try:
        lines = [line for line in log.read_text("utf-8", "replace").splitlines() if line.strip()]
    except OSError:
        return "no log"
    return " ".join(lines[-1].split())[:200] if lines else "no output"


def gguf_of(model: ModelFiles, say) -> Path:
    """The model's GGUF; for a model with only a tokenizer.json, one tokparity converts (cached)."""
    path = model.path("gguf")
    if path is not None:
        return Path(path)
    source = model.path("tokenizer_json")
    if source is None:
        raise TokparityError(f"model {model.name}: llama-server needs a .gguf file, and it has none (it has: "
                             f"{', '.join(model.files) or 'nothing'})")
    from tokparity.convert import convert
    from tokparity.zoo.fetch import cache_dir, file_lock
    home = cache_dir() / "llama-server" / "models"
    out = home / f"{_digest([Path(source)], {})}.converted.gguf"
    with file_lock(home / "models.lock"):
        if not out.is_file():
            part = out.with_name(out.name + ".part")
            convert(source, "gguf", part)
            os.replace(part, out)
    say(f"{model.name}: no GGUF; llama-server runs on one tokparity converted from {Path(source).name} "
        "(a derived file: a difference may be the conversion's)")
    return out


def _digest(files: list[Path], templates: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for path in files:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    digest.update(json.dumps(templates, sort_keys=True).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:24]


def tiny_model_for(model: ModelFiles, gguf: Path) -> Path:
    """The tiny model of ``gguf`` with the model's chat template, made once and cached by content."""
    from tokparity.chat.template import find_template
    from tokparity.convert.tiny_model import FORMAT, write_tiny_model
    from tokparity.zoo.fetch import cache_dir, file_lock
    template = find_template(model)
    templates = dict(template.templates) if template is not None else {}
    home = cache_dir() / "llama-server" / "models"
    out = home / f"{_digest([gguf], templates)}.tiny{FORMAT}.gguf"
    if out.is_file():
        return out
    with file_lock(home / "models.lock"):
        if not out.is_file():
            part = out.with_name(out.name + ".part")
            write_tiny_model(gguf, part, templates)
            os.replace(part, out)
    return out
