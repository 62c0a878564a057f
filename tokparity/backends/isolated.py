"""Any backend in a child process, where a crash cannot take the harness down.

``IsolatedBackend("llama.cpp", model)`` starts ``python -m tokparity.backends.isolated_child
SPEC``; the child makes the real backend and serves it over the same JSON-lines protocol as
``cmd:`` engines (cmd.py), with more ops: ``pieces``, ``normalize``, ``pre_tokenize``, ``version``.
When llama.cpp aborts on one input (``std::out_of_range`` from a vocabulary without byte
tokens), that case is a ``crash`` whose detail is the child's last stderr lines, the child is
started again, and the run goes on.

The child announces itself with one line before any request,
``{"id": 0, "ready": true, "version": "0.3.36", "stages": ["normalize"], "decode_switches": ["skip_special"]}``, or
``{"id": 0, "error": "why it cannot load the model"}``, so a model that cannot be loaded is
an error when the backend is made (exit status 2), not one crash per case.

In the child, fd 1 is pointed at stderr and the protocol gets a private copy of it: a library
that prints to stdout cannot corrupt the replies.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from tokparity.backends.cmd import ProtocolBackend
from tokparity.backends.engine_process import DEFAULT_TIMEOUT, EngineProcess
from tokparity.child_python import python_argv
from tokparity.errors import StartFailed, TokparityError
from tokparity.zoo import Derivation, ModelFiles

DEFAULT_STARTUP_TIMEOUT = 120.0  # a 262k vocabulary in pure Python takes a while


def model_to_json(model: ModelFiles) -> dict:
    return {"name": model.name, "files": {role: str(p) for role, p in model.files.items()},
            "origin": model.origin, "algorithm": model.algorithm, "description": model.description,
            "derived": {role: dataclasses.asdict(d) for role, d in model.derived.items()}}


def model_from_json(d: dict) -> ModelFiles:
    derived = {role: Derivation(**{**x, "warnings": tuple(x["warnings"])}) for role, x in d.get("derived", {}).items()}
    return ModelFiles(d["name"], {role: Path(p) for role, p in d["files"].items()}, d["origin"],
                      d.get("algorithm"), d.get("description", ""), derived=derived)


def child_env(own_site: bool = False) -> dict:
    """The child's environment: this very tokparity first on its path (a source checkout's folder).
    ``own_site``: the child runs another virtualenv's Python (a library release, releases.py), whose
    own packages must come first: an installed tokparity then comes from the ``.pth`` that adds this
    one's site folders after them."""
    from tokparity.backends.releases import parent_site

    env = dict(os.environ)
    env["GGML_NO_BACKTRACE"] = "1"  # ggml would otherwise run gdb on an abort, slowly and loudly
    sites = parent_site()
    own = {os.path.realpath(p) for p in sites["TOKPARITY_PARENT_SITE"].split(os.pathsep) if p}
    if own_site:
        env.update(sites)
    # (an empty entry of PYTHONPATH is the current folder, which -P keeps off the path: python_argv)
    path = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
    if own_site:  # (this Python's site folders come after the release's own, through the .pth; on
        # PYTHONPATH they would come first, and the release's child would import this one's library)
        path = [entry for entry in path if os.path.realpath(entry) not in own]
    root = Path(__file__).resolve().parents[2]
    # (an installed tokparity: this Python finds it in its own site folder, and a release's Python
    # through parent_site's .pth: on PYTHONPATH, that folder would pass on to a -j worker's release child)
    if os.path.realpath(root) not in own:
        path.insert(0, str(root))
    env["PYTHONPATH"] = os.pathsep.join(path)
    if not path:
        del env["PYTHONPATH"]
    return env


class IsolatedBackend(ProtocolBackend):
    """``name`` (a registry name, or ``py:...``) served by a child process; ``python``: another
    virtualenv's interpreter (a release of the backend's library, releases.py), this one's by
    default; ``label``: what messages and reports call it (``hf@0.21.4``), ``name`` by default."""

    def __init__(self, name: str, model: ModelFiles, timeout: float = DEFAULT_TIMEOUT,
                 startup_timeout: float = DEFAULT_STARTUP_TIMEOUT, python: str | None = None,
                 label: str | None = None, cwd: str | None = None, **opts):
        spec = {"backend": name, "model": model_to_json(model), "opts": opts}
        argv = python_argv("-m", "tokparity.backends.isolated_child", json.dumps(spec, default=str), python=python)
        name = label or name
        engine = EngineProcess(argv, f"{name} (child process)", env=child_env(own_site=python is not None),
                               startup_timeout=startup_timeout, hello=True, cwd=cwd)
        super().__init__(engine, model, timeout)
        self.name = name
        self.isolated = True
        try:
            hello = engine.start()
        except StartFailed as e:
            raise TokparityError(f"backend {name!r} on model {model.name}: {e}") from None
        self._version = str(hello.get("version", ""))
        self._stages = set(hello.get("stages", ()))
        self.decode_switches = frozenset(hello.get("decode_switches", ()))  # (the child's backend's)

    @property
    def version(self) -> str:
        return self._version

    def supports(self, stage: str) -> bool:
        return stage in self._stages

    def pieces(self, ids: list[int]) -> list[str]:
        return self._call({"op": "tokens", "ids": [int(i) for i in ids]})["pieces"]

    def normalize(self, text: str) -> str:
        return self._call({"op": "normalize", "text": text})["text"]

    def pre_tokenize(self, text: str) -> list[str]:
        return self._call({"op": "pre_tokenize", "text": text})["pieces"]

    def generation_marks(self) -> tuple[frozenset[int], frozenset[int]]:
        """The child's backend's ``generation_marks`` (llama.cpp's: LlamaCppBackend)."""
        reply = self._call({"op": "generation_marks"})
        return frozenset(reply["ends"]), frozenset(reply["hidden"])

    @property
    def restarts(self) -> int:
        return self.engine.starts - 1
