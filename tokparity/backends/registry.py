"""Backends by name: the one place that turns ``-b NAME`` into a ``Backend``.

    make_backend("llama.cpp", model)                 llama-cpp-python on the model's GGUF
    make_backend("cmd:python3 eng.py {gguf}", model) a user's program, JSON lines over pipes
    make_backend("py:mypkg.eng:encode", model)       a user's Python callable, in a child process
    make_backend("mine=cmd:python3 eng.py {gguf}", model)   the same, labelled ``mine`` (see ``split_label``)
    make_backend("hf@0.21.4", model)                 tokenizers 0.21.4, in a virtualenv of its own (releases.py)

Every library is imported lazily, when its backend is made, so a user with only ``tokenizers``
installed still has a working tool; asking for a backend whose library is missing is a
``BackendUnavailable`` that names the pip extra to install. ``known_backends()`` lists the names.

Isolation. A native library can take the interpreter down with it (llama.cpp aborts on a GGUF
whose vocabulary lacks the byte tokens its tokenizer needs). ``isolate=True`` runs any backend
in a child process (``isolated.py``), where a crash becomes a ``crash`` record for that case and
the child is restarted. ``cmd:`` and ``py:`` backends are always (``py:`` by default) out of
process. llama.cpp's default is ``isolate="auto"``: in process, where it is about twice as fast,
for zoo files (pinned by sha256 and tested against this llama.cpp), in a child for any other file,
derived zoo GGUFs included.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tokparity.backends.base import Backend
from tokparity.errors import BackendUnavailable, TokparityError, UnknownBackend

if TYPE_CHECKING:  # (annotations only: the CLI imports this module for -b's help, at every start)
    from tokparity.backends.releases import Release
    from tokparity.zoo import ModelFiles


@dataclass(frozen=True)
class BackendSpec:
    """Everything tokparity knows of a backend, in one place: where its class lives, what it needs
    installed, which of a model's files it runs on, and whether it is that file's own library."""

    name: str
    target: str  # "module:Class"
    module: str | None = None  # the library that must be importable
    package: str | None = None  # its name on PyPI
    extra: str | None = None  # the tokparity extra that installs it
    summary: str = ""
    default_isolate: bool | str = False  # True, False or "auto" (see the module docstring)
    role: str | None = None  # the model file it runs on (tokparity.zoo.FILE_ROLES); None: any model
    # Why it judges a model that has that file: it is the library the file's format belongs to (the
    # one that trains it). "": it is one implementation among others (tokparity.run.oracle).
    trains: str = ""
    # "module:function" telling whether that file is one it reads (mistral-common: a tiktoken-role
    # file that is a tekken JSON); "": every file of its role
    fits: str = ""
    # A server tokparity builds and starts: asked for by name only (not by a run without -b), and
    # never named by data (a goldens file)
    starts_server: bool = False
    # It loads in C, without Python's lock: a run makes it on a thread beside the others (beside.py)
    loads_in_c: bool = False


# In the order reports list them (tokparity.run.oracle tries the training libraries in this order too).
BUILTIN: dict[str, BackendSpec] = {
    spec.name: spec
    for spec in (
        BackendSpec("ref", "tokparity.backends.ref:RefBackend", summary="tokparity's own pure-Python tokenizers"),
        BackendSpec("llama.cpp", "tokparity.backends.llamacpp:LlamaCppBackend", "llama_cpp", "llama-cpp-python",
                    "llama", "llama-cpp-python on a GGUF (vocab_only)", default_isolate="auto", role="gguf",
                    loads_in_c=True),
        BackendSpec("sentencepiece", "tokparity.backends.spm:SentencePieceBackend", "sentencepiece",
                    "sentencepiece", "spm", "SentencePieceProcessor on a .model", role="spm_model",
                    trains="its .model is SentencePiece's own format, the one SentencePiece trains"),
        BackendSpec("hf", "tokparity.backends.hf:HFBackend", "tokenizers", "tokenizers", "hf",
                    "Hugging Face tokenizers on a tokenizer.json (transformers.AutoTokenizer on a folder)",
                    role="tokenizer_json",
                    trains="its tokenizer.json is the tokenizers library's own format, the one tokenizers trains "
                           "and transformers loads"),
        BackendSpec("tiktoken", "tokparity.backends.tiktoken:TiktokenBackend", "tiktoken", "tiktoken", "tiktoken",
                    "OpenAI tiktoken on a tiktoken encoding (rank file, js-tiktoken JSON, Mistral tekken)",
                    role="tiktoken", trains="its rank file is tiktoken's own format, the one its encodings ship in"),
        BackendSpec("hf-gguf", "tokparity.backends.hf_gguf:HFGGUFBackend", "transformers", "transformers", "hf",
                    "the tokenizer transformers builds from a GGUF's metadata", role="gguf"),
        BackendSpec("golden", "tokparity.backends.golden:GoldenBackend", summary="llama.cpp's .inp/.out expected ids",
                    role="golden_out"),
        BackendSpec("mistral-common", "tokparity.backends.mistral_common:MistralCommonBackend", "mistral_common",
                    "mistral-common", "mistral", "Mistral's mistral-common on its tekken JSON (chat: "
                    "encode_chat_completion)", role="tiktoken", fits="tokparity.backends.mistral_common:is_tekken"),
        BackendSpec("rwkv", "tokparity.backends.rwkv:RwkvBackend", "rwkv", "rwkv", "rwkv",
                    "the rwkv package's TRIE_TOKENIZER on an RWKV World vocabulary (rwkv_vocab_*.txt)",
                    role="rwkv_vocab",
                    trains="its vocabulary is the rwkv package's own file, read by the package's tokenizer"),
        BackendSpec("llama-server", "tokparity.backends.llama_server:LlamaServerBackend", "llama_cpp",
                    "llama-cpp-python", "llama", "llama-server (built from llama-cpp-python's llama.cpp) on a tiny "
                    "model with the GGUF's tokenizer: /tokenize, /detokenize, /completion, /apply-template", role="gguf",
                    starts_server=True),
        BackendSpec("llama.cpp-jinja", "tokparity.backends.llama_server:LlamaCppJinjaBackend", "llama_cpp",
                    "llama-cpp-python", "llama", "llama.cpp's own Jinja chat templates (common/jinja), as "
                    "llama-server renders and tokenizes them", role="gguf", starts_server=True),
    )
}


def backends_for(model: ModelFiles) -> list[str]:
    """The built-in backends that can run on ``model``'s files, in report order."""
    return [spec.name for spec in BUILTIN.values() if not spec.starts_server and (spec.role is None or
            spec.role in model.files and (not spec.fits or _fits(spec.fits, model.files[spec.role])))]


def witnesses(spec: str, model: ModelFiles) -> list[str]:
    """The libraries of the model's files an engine may read, each the first built-in of its file's
    role that trains it, or else the first of that role. A ``cmd:`` engine reads the files it names
    (``{tokenizer_json}``: hf). A ``py:`` engine is given every file of the model, so each may be
    its own. A server's is the library whose code it runs (SERVER_LIBRARY). The run asks these
    libraries beside the engine, unjudged. An engine that gives a
    library's ids on the library's own file does what that library does there: a known divergence
    of the library is one of the engine's too."""
    command = split_label(spec)[1]
    if command.startswith("http:"):  # a server that runs a library's own code: that library
        library = SERVER_LIBRARY.get(command[len("http:"):].partition("@")[0])
        return [library] if library else []
    if command.startswith("cmd:"):
        roles = list(dict.fromkeys(re.findall(r"\{(\w+)\}", command)))
    elif command.startswith("py:"):
        roles = list(model.files)
    else:
        return []
    found = []
    for role in roles:
        of_role = [s for s in BUILTIN.values() if s.role == role and not s.fits and s.module]  # (a library: not golden ids)
        if role in model.files and of_role:
            found.append(next((s.name for s in of_role if s.trains), of_role[0].name))
    return found


def _fits(target: str, path) -> bool:
    module, _, function = target.partition(":")
    return bool(getattr(importlib.import_module(module), function)(path))


RELEASE_STARTUP_TIMEOUT = 900.0  # seconds for a backend on another release to load the model (see make_backend)

# The servers ``http:SERVER@[HOST:]PORT`` speaks to: each its own endpoints, a backend class each.
SERVERS = {
    "llama-server": "tokparity.backends.llama_server:LlamaServerBackend",
    "llama-cpp-python": "tokparity.backends.llama_cpp_python_server:LlamaCppPythonServerBackend",
    "mistral-common": "tokparity.backends.mistral_common_server:MistralCommonServerBackend",
}
# The library whose own code answers a server's requests. Where the server gives that library's very
# answer, the library's reviewed differences are the server's too (``witnesses``).
SERVER_LIBRARY = {"mistral-common": "mistral-common"}

# Names that take an argument after the colon.
PREFIXED = {
    "cmd:": "cmd:COMMAND",
    "py:": "py:MODULE:CALLABLE",
    "http:": "http:SERVER@[HOST:]PORT",
}


def known_backends() -> list[str]:
    """``["ref", "llama.cpp", …, "rwkv", "llama-server", "llama.cpp-jinja", "cmd:COMMAND", "py:MODULE:CALLABLE",
    "http:SERVER@[HOST:]PORT"]``."""
    return list(BUILTIN) + list(PREFIXED.values())


# A backend's own name, as in ``-b mine=cmd:python3 eng.py {gguf}``: no colon, so it can never be
# read as a ``cmd:``/``py:`` spec, and no space or ``=``, so it is one word in every table.
LABEL = re.compile(r"[A-Za-z0-9_.-]+")
RESERVED = ("goldens",)  # the label regress's stored goldens judge under


def split_label(arg: str) -> tuple[str, str]:
    """``-b``'s argument as (label, spec): ``"mine=cmd:eng {gguf}" -> ("mine", "cmd:eng {gguf}")``,
    ``"fast=hf" -> ("fast", "hf")``; without a name the label is the argument itself, as it always
    was (``"cmd:eng --x=1" -> ("cmd:eng --x=1", "cmd:eng --x=1")``: text before ``=`` that holds a
    colon or a space is part of a command, not a name)."""
    name, sep, spec = arg.partition("=")
    if not sep or not LABEL.fullmatch(name):
        return arg, arg
    if name in BUILTIN or name in RESERVED or name in ("cmd", "py"):
        raise TokparityError(f"backend {arg!r}: {name!r} names a backend of tokparity's own; choose another name "
                             "(e.g. mine=…)")
    if not spec.strip():
        raise TokparityError(f"backend {arg!r}: nothing after '='; write NAME=BACKEND, e.g. mine=cmd:COMMAND")
    if split_label(spec)[0] != spec:
        raise TokparityError(f"backend {arg!r}: one name per backend (NAME=BACKEND)")
    return name, spec


def labelled(args: list[str]) -> dict[str, str]:
    """``-b`` arguments as {label: argument}, in order; the same argument twice counts once, two
    different backends under one name are refused (their results would be counted as one), and so
    is a typo in a ``cmd:`` placeholder."""
    from tokparity.backends.cmd import refuse_unknown_placeholders

    out: dict[str, str] = {}
    for arg in args:
        label, spec = split_label(arg)
        if spec.strip().startswith("cmd:"):  # (a typo in a placeholder: said before anything runs)
            refuse_unknown_placeholders(spec.strip()[4:])
        if label in out and split_label(out[label])[1].strip() != spec.strip():
            raise TokparityError(f"two backends are named {label!r} ({out[label]!r} and {arg!r}); give each its "
                                 "own name")
        out.setdefault(label, arg)
    return out


def labelled_with_oracle(args: list[str], oracle: str | None) -> dict[str, str]:
    """As ``labelled``, the ``--oracle`` too: ``--oracle mine`` names a backend of ``args`` by its
    label, ``--oracle mine=cmd:…`` defines it there."""
    out = labelled(args)
    if oracle and oracle not in out:
        out = labelled([*out.values(), oracle])
    return out


def backend_available(name: str) -> bool:
    """Whether ``name``'s library can be imported (without importing it). ``cmd:``/``py:`` are always;
    a release (``hf@0.21.4``) is whenever its library has releases (it is installed when made)."""
    name = split_label(name)[1]
    if name.startswith(tuple(PREFIXED)):
        return True
    if without_release(name) != name:
        spec = BUILTIN.get(without_release(name))
        return spec is not None and spec.package is not None
    spec = BUILTIN.get(name)
    return spec is not None and (spec.module is None or importlib.util.find_spec(spec.module) is not None)


def _install_hint(spec: BackendSpec) -> str:
    return f"pip install 'tokparity[{spec.extra}]'" if spec.extra else f"pip install {spec.package}"


def backend_class(name: str) -> Callable[..., Backend]:
    """The class behind a built-in name, imported now; ``BackendUnavailable`` says what to install."""
    spec = BUILTIN.get(name)
    if spec is None:
        raise UnknownBackend(name, known_backends())
    if spec.module is not None and importlib.util.find_spec(spec.module) is None:
        raise BackendUnavailable(name, f"backend {name!r} needs {spec.package} ({_install_hint(spec)})")
    module_name, _, class_name = spec.target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        if e.name == module_name:  # tokparity's own module is missing (a backend still being written)
            raise BackendUnavailable(name, f"backend {name!r} is not available in this tokparity: its module "
                                           f"{module_name} does not exist yet") from None
        hint = f" ({_install_hint(spec)})" if spec.package else ""
        raise BackendUnavailable(name, f"backend {name!r} could not be imported: {type(e).__name__}: {e}{hint}") \
            from None
    try:
        return getattr(module, class_name)
    except AttributeError:
        raise BackendUnavailable(name, f"backend {name!r}: {module_name} has no {class_name}") from None


def without_release(name: str) -> str:
    """A backend's name without its release (``"hf@0.21.4" -> "hf"``); a ``cmd:``/``py:`` spec (a
    command may hold an ``@``) or a name without one as it is."""
    if "@" in name and not name.startswith(tuple(PREFIXED)):
        return name.partition("@")[0]
    return name


def builtin_name(name: str) -> str:
    """The built-in backend a ``-b`` argument stands for, a release's included (``"old=hf@0.21.4" ->
    "hf"``); a ``cmd:``/``py:`` spec or an unknown name as it is."""
    return without_release(split_label(name)[1].strip())


def release_of(name: str) -> Release | None:
    """``"hf@0.21.4"`` as a Release (tokenizers 0.21.4, releases.py); None for a name without ``@``
    or a ``cmd:``/``py:`` spec (a command may hold an ``@``). ``TokparityError`` for a backend with
    no library of its own (``ref@1``) or a version that is not one."""
    if "@" not in name or name.startswith(tuple(PREFIXED)):
        return None
    from tokparity.backends.releases import VERSION, Release
    backend, _, version = name.partition("@")
    spec = BUILTIN.get(backend)
    if spec is None:
        raise UnknownBackend(backend, known_backends())
    if spec.package is None or spec.module is None:
        raise TokparityError(f"backend {name!r}: {backend} is part of tokparity, not a library with releases; "
                             "NAME@VERSION is for the library backends (e.g. hf@0.21.4, sentencepiece@0.2.0)")
    if not VERSION.fullmatch(version):
        raise TokparityError(f"backend {name!r}: {version!r} is not a release number; write {backend}@VERSION, "
                             f"e.g. {backend}@1.0.0 (the releases of {spec.package} on its package index)")
    return Release(backend, spec.package, spec.module, version)


def _should_isolate(spec: BackendSpec, model: ModelFiles, isolate: bool | str | None) -> bool:
    choice = spec.default_isolate if isolate is None else isolate
    if choice == "auto":  # a GGUF tokparity derived is not pinned, and may lack byte tokens: a child
        return model.origin != "zoo" or "gguf" in model.derived
    if not isinstance(choice, bool):
        raise TokparityError(f"backend {spec.name!r}: isolate must be true, false or 'auto', not {choice!r}")
    return choice


def in_this_process(name: str, model: ModelFiles, isolate: bool | str | None = None) -> bool:
    """Whether backend ``name`` is a library run in this process: no child process, no server."""
    spec = BUILTIN.get(split_label(name)[1].strip())
    return spec is not None and not spec.starts_server and not _should_isolate(spec, model, isolate)


def loads_beside(name: str, model: ModelFiles, isolate: bool | str | None = None) -> bool:
    """Whether backend ``name`` loads in this process, in C without Python's lock, so a run may
    make it on a thread (beside.py). Not in a child process: the child's death signal follows the
    thread that started it, and that thread ends."""
    spec = BUILTIN.get(split_label(name)[1].strip())
    return spec is not None and spec.loads_in_c and in_this_process(name, model, isolate)


def make_backend(name: str, model: ModelFiles, **opts) -> Backend:
    """A ready backend for ``model``. Options: ``isolate`` (see the module docstring), ``timeout``
    (seconds per case, for out-of-process backends), and whatever the backend's class takes.
    ``NAME=BACKEND`` makes BACKEND and calls it NAME (its ``name``, the label of every report)."""
    label, named = split_label(name)
    if label != named:
        backend = make_backend(named, model, **opts)
        backend.name = label
        return backend
    name = name.strip()
    isolate = opts.pop("isolate", None)
    if name.startswith("cmd:"):
        from tokparity.backends.cmd import CmdBackend
        if isolate is False:
            raise TokparityError(f"backend {name!r}: a cmd: engine is a separate program; it cannot run in process")
        return CmdBackend(name[len("cmd:"):], model, **opts)
    if name.startswith("py:"):
        from tokparity.backends.pyfunc import PyFuncBackend, check_target
        target = name[len("py:"):]
        check_target(target)
        cwd = opts.pop("cwd", None)
        if isolate is False:
            if cwd is not None:  # (in process: its file found where the run began)
                raise TokparityError(f"backend {name!r}: a py: engine resumed from another folder runs in a child "
                                     "process; resume from the folder the run began in")
            opts.pop("timeout", None)  # in process a call cannot be interrupted
            opts.pop("startup_timeout", None)
            return PyFuncBackend(target, model, **opts)
        from tokparity.backends.isolated import IsolatedBackend
        return IsolatedBackend(name, model, cwd=cwd, **opts)
    if name.startswith("http:"):
        server, at, address = name[len("http:"):].partition("@")
        if server not in SERVERS or not at:
            raise TokparityError(f"backend {name!r}: write http:SERVER@PORT or http:SERVER@HOST:PORT, SERVER one of "
                                 f"{', '.join(SERVERS)} (http:llama-server@8080)")
        opts.pop("startup_timeout", None)
        module, _, cls_name = SERVERS[server].partition(":")
        return getattr(importlib.import_module(module), cls_name)(model, url=address, **opts)
    release = release_of(name)
    if release is not None and release.installed_here():  # the release this interpreter has: no virtualenv
        backend = make_backend(release.backend, model, isolate=isolate, **opts)
        backend.name = str(release)
        return backend
    if release is not None:  # another release of the library, in a virtualenv of its own (releases.py)
        from tokparity.backends.isolated import IsolatedBackend
        from tokparity.backends.releases import python_for
        if isolate is False:
            raise TokparityError(f"backend {name!r}: a release runs in a virtualenv of its own; it cannot run in "
                                 "process")
        # (a release may convert the model's files on start, uncached: transformers 4.57.6 takes over two
        # minutes on Gemma 3's 262,144 pieces on 2 cores)
        opts.setdefault("startup_timeout", RELEASE_STARTUP_TIMEOUT)
        backend = IsolatedBackend(release.backend, model, python=str(python_for(release)), label=str(release), **opts)
        from tokparity.backends.releases import environment_dir, same_version
        from tokparity.errors import ReleaseError
        running = backend.version.split()[0] if backend.version else ""
        if not same_version(running, release.version):  # (a package from elsewhere took the release's place)
            backend.close()
            raise ReleaseError(f"backend {release}: its child process imported {release.package} {running or '?'}, "
                               f"not {release.version}; remove {environment_dir(release)} to install it again")
        return backend
    spec = BUILTIN.get(name)
    if spec is None:
        raise UnknownBackend(name, known_backends())
    cls = backend_class(name)  # import errors surface here, in the parent, with their hint
    if _should_isolate(spec, model, isolate):
        from tokparity.backends.isolated import IsolatedBackend
        return IsolatedBackend(name, model, **opts)
    if not spec.starts_server:  # (a server's requests have their own timeout: it keeps it)
        opts.pop("timeout", None)  # an in-process call cannot be interrupted; the options are for children
    opts.pop("startup_timeout", None)
    return cls(model, **opts)
