"""llama-server over HTTP: what a deployed llama.cpp server tokenizes, renders and decodes.

    -b llama-server                         a server tokparity starts on the model, and stops
    -b llama.cpp-jinja                      the same server, named for its chat path (--ops chat)
    -b 'srv=http:llama-server@8080'         a server you run, on 127.0.0.1:8080
    -b 'srv=http:llama-server@HOST:PORT'    one elsewhere: only where you name the host

Each op asks the server's own endpoint. Encode: ``POST /tokenize`` with ``add_special`` and
``parse_special``. Decode: ``POST /detokenize``. Chat: ``POST /apply-template`` renders the
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
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from tokparity.backends.base import Backend
from tokparity.backends.process import ENGINE_MARK, exited, kill_engine, wait_for_exit
from tokparity.errors import BackendCrash, BackendTimeout, CaseFailure, TokparityError
from tokparity.reference.decode import AS_FILES_SAY, DecodeSettings

if TYPE_CHECKING:
    from tokparity.chat import ChatAnswer
    from tokparity.chat.conversation import Conversation
    from tokparity.zoo import ModelFiles

PROTOCOL = "llama-server"  # the one server protocol http: speaks so far
LOOPBACK = "127.0.0.1"
START_SECONDS = 120.0  # to load the tiny model (a 262,144-token vocabulary takes a few seconds)
CASE_SECONDS = 60.0
RESTARTS = 3  # a server that dies more often than this is left dead: each case is then a crash


class ServerClient:
    """JSON over one kept-alive HTTP connection to a server at ``host:port``."""

    def __init__(self, host: str, port: int, timeout: float = CASE_SECONDS):
        self.host, self.port, self.timeout = host, port, timeout
        self._conn: http.client.HTTPConnection | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def post(self, path: str, body: dict) -> tuple[int, object]:
        """The status and JSON body of ``POST path``. A refused or dropped connection is a crash, a
        slow answer a timeout, a body that is not JSON an error: each of this case only."""
        return self.request("POST", path, json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogatepass"))

    def request(self, method: str, path: str, data: bytes | None = None) -> tuple[int, object]:
        for attempt in (0, 1):  # (a kept-alive connection the server closed meanwhile: once more, anew)
            conn = self._conn or http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self._conn = conn
            try:
                conn.request(method, path, data, {"Content-Type": "application/json"})
                response = conn.getresponse()
                raw = response.read()
                break
            except TimeoutError:
                self.close()
                raise BackendTimeout(f"{self.url}{path}: no answer within {self.timeout:.0f} s") from None
            except (ConnectionError, http.client.HTTPException, OSError) as e:
                self.close()
                if attempt or isinstance(e, ConnectionRefusedError):
                    raise BackendCrash(f"{self.url}{path}: {type(e).__name__}: {e}") from None
        try:
            return response.status, json.loads(raw)
        except ValueError:
            raise CaseFailure(f"{self.url}{path}: HTTP {response.status}, a body that is not JSON: "
                              f"{raw[:120]!r}") from None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _said(reply: object) -> str:
    """What a server's error body says, on one line."""
    if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
        reply = reply["error"].get("message", reply["error"])
    return " ".join(str(reply).split())[:300]


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
        self.url = url
        if url is None:
            self.client = ServerClient(LOOPBACK, 0, timeout)
            self.tiny = tiny_model_for(model, self.gguf)
            self._start()
        else:
            host, port = parse_address(url)
            self.client = ServerClient(host, port, timeout)
        self._version = self._ask_version()

    # -- the server tokparity starts ------------------------------------------------------------

    def _start(self) -> None:
        from tokparity.backends.server_build import server_binary
        binary = server_binary(self.say)
        tiny = self.tiny
        port = free_port()
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
                self.close()
                raise TokparityError(f"llama-server stopped while loading {tiny.name}: {_tail(self.log)} "
                                     f"(log: {self.log})")
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
            if self.proc is not None and wait_for_exit(self.proc, 2.0):
                kill_engine(self.proc, self._mark)  # (reaped: its exit status is known)
                raise BackendCrash(f"llama-server exited ({self.proc.returncode}) on this case; it is started again "
                                   f"for the next (log: {self.log})") from None
            raise e

    def _ask(self, path: str, body: dict, key: str) -> object:
        status, reply = self._post(path, body)
        if status != 200 or not isinstance(reply, dict) or key not in reply:
            raise CaseFailure(f"{self.client.url}{path}: HTTP {status}: {_said(reply)}")
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
                return ChatAnswer(raised=_said(reply))
            raise CaseFailure(f"{self.client.url}/apply-template: HTTP {status}: {_said(reply)}")
        # Only the ids: llama.cpp takes the BOS text off the front of the prompt where the tokenizer
        # adds a BOS (common/chat.cpp), so the text it shows is not the text the ids come from.
        return ChatAnswer(None, self.encode(reply["prompt"], add_special=True, parse_special=True))

    def close(self) -> None:
        self.client.close()
        proc, self.proc = self.proc, None
        if proc is not None:
            kill_engine(proc, self._mark)


class LlamaCppJinjaBackend(LlamaServerBackend):
    """The same server, named for what its chat op checks: llama.cpp's own Jinja engine."""

    name = "llama.cpp-jinja"


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


def _tail(log: Path) -> str:
    try:
        lines = [line for line in log.read_text("utf-8", "replace").splitlines() if line.strip()]
    except OSError:
        return "no log"
    return " ".join(lines[-1].split())[:200] if lines else "no output"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def parse_address(url: str) -> tuple[str, int]:
    """``PORT`` or ``HOST:PORT`` (``http:llama-server@…``'s part after the ``@``): loopback unless
    a host is named."""
    host, _, port = url.rpartition(":")
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not 0 < number < 65536:
        raise TokparityError(f"http:{PROTOCOL}@{url}: give a port, or HOST:PORT (http:{PROTOCOL}@8080)")
    return host.strip("[]") or LOOPBACK, number


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
