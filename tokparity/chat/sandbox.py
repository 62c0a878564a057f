"""Chat templates rendered in a child process: a template is code from a file.

The child (``python -m tokparity.chat.sandbox``) renders in jinja2's immutable sandbox
(tokparity.chat.render), under an address-space limit, and answers one JSON line per request
over the same pipe protocol as ``cmd:`` engines (tokparity.backends.engine_process.EngineProcess)::

    -> {"id": 1, "op": "render", "template": "...", "messages": [...], "tools": null,
        "options": {...}, "specials": {"bos_token": "<s>"}, "switches": {...}}
    <- {"id": 1, "text": "<s>[INST] Hi [/INST]"}  |  {"id": 1, "raised": "TemplateError: ..."}

The parent gives every render a time limit (``RENDER_TIMEOUT``): a template that loops is killed
with its process group, and the child is started again for the next one. After
``GIVE_UP_AFTER`` such failures in a row, a template is not rendered again in that run: every
later conversation gets the same failure at once, so a hostile template costs one model a few
seconds and one error line, never a hang.
"""

from __future__ import annotations

import json
import os
import sys

from tokparity.child_python import die_with_parent, python_argv
from tokparity.errors import BackendTimeout, CaseFailure

RENDER_TIMEOUT = 10.0
GIVE_UP_AFTER = 2
KEPT_ANSWERS, KEPT_CHARS = 1 << 15, 64_000_000  # (the answers kept: a diagnosis asks again within a case)
ADDRESS_SPACE = 2 << 30  # bytes; a template that builds a huge string fails there, not the machine


class TemplateSandbox:
    """The parent's handle on the child. ``render`` returns the prompt, raises ``TemplateRaised``
    (the template refused the conversation: an answer) or ``CaseFailure`` (it could not be
    rendered: too slow, too big, the child died). After ``GIVE_UP_AFTER`` failures in a row a
    template is given up on: each of its renders fails at once."""

    def __init__(self, timeout: float = RENDER_TIMEOUT):
        from tokparity.backends.engine_process import EngineProcess
        from tokparity.backends.isolated import child_env

        self.timeout = timeout
        self.engine = EngineProcess(python_argv("-m", "tokparity.chat.sandbox"), "chat template sandbox",
                                    env=child_env(), startup_timeout=60.0, hello=True)
        # template and switches -> (failures in a row, the last one's kind and words)
        self._failures: dict[str, tuple[int, type[CaseFailure], str]] = {}
        # a request -> its answer, a prompt or a refusal: a template renders the same request alike,
        # and a diagnosis asks many ways that send the same request (a switch its template ignores)
        self._answers: dict[str, dict] = {}
        self._answered_chars = 0

    def render(self, template: str, messages: list[dict], tools: list[dict] | None, options: dict,
               specials: dict[str, str], switches: dict | None = None) -> str:
        from tokparity.errors import TemplateRaised

        key = template + json.dumps(switches or {}, sort_keys=True)  # (a way that loops gives up on that way alone)
        count, kind, last = self._failures.get(key, (0, CaseFailure, ""))
        if count >= GIVE_UP_AFTER:  # (as the last failure: a template given up on for its timeouts times out)
            raise kind(f"not rendered: {last} (the template failed {count} times in a row)")
        body = json.dumps({"op": "render", "template": template, "messages": messages, "tools": tools,
                           "options": options, "specials": specials, "switches": switches or {}},
                          ensure_ascii=True)[1:-1]
        reply = self._answers.get(body)
        try:
            if reply is None:
                reply, _junk = self.engine.request(body, self.timeout)
                self._kept(body, reply)
        except BackendTimeout:
            self._failures[key] = (count + 1, BackendTimeout, f"the template took more than {self.timeout:g} s to render")
            raise BackendTimeout(self._failures[key][2]) from None
        except CaseFailure as e:
            self._failures[key] = (count + 1, CaseFailure, f"the renderer died ({e})")
            raise
        if "failed" in reply:
            self._failures[key] = (count + 1, CaseFailure, str(reply["failed"]))
            raise CaseFailure(self._failures[key][2])
        self._failures.pop(key, None)
        if "raised" in reply:
            raise TemplateRaised(str(reply["raised"]))
        if not isinstance(reply.get("text"), str):
            raise CaseFailure(f"the sandbox answered no text: {json.dumps(reply)[:200]}")
        return reply["text"]

    def _kept(self, body: str, reply: dict) -> None:
        """Keeps a prompt or a refusal (not a failure: a template that failed may render next time)."""
        if "text" not in reply and "raised" not in reply:
            return
        if len(self._answers) >= KEPT_ANSWERS or self._answered_chars > KEPT_CHARS:
            self._answers.clear()
            self._answered_chars = 0
        self._answers[body] = reply
        self._answered_chars += len(body) + len(str(reply.get("text") or ""))

    def given_up(self, template: str, switches: dict | None = None) -> str:
        """Why ``template``, rendered with ``switches``, is given up on (its last failure), or "" while it is not."""
        key = template + json.dumps(switches or {}, sort_keys=True)
        count, _kind, last = self._failures.get(key, (0, CaseFailure, ""))
        return last if count >= GIVE_UP_AFTER else ""

    def close(self) -> None:
        self.engine.close()


def _serve() -> None:
    import resource

    from tokparity.chat.render import RenderSwitches, render
    from tokparity.errors import TemplateRaised

    die_with_parent(os.getppid())  # (a template that loops for ever must not outlive a killed tokparity)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    except (ValueError, OSError):  # a lower hard limit already: keep it
        pass
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever prints goes to stderr, never into the replies
    out.write('{"id": 0, "ready": true}\n')
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        reply: dict = {"id": request.get("id")}
        try:
            switches = RenderSwitches(**request.get("switches") or {})
            reply["text"] = render(request["template"], request["messages"], request.get("tools"),
                                   request.get("options") or {}, request.get("specials") or {}, switches)
        except TemplateRaised as e:
            reply["raised"] = str(e)[:2000]
        except MemoryError:  # (no refusal of the conversation: a failure, given up on as a timeout is)
            reply["failed"] = f"the template needed more than {ADDRESS_SPACE >> 30} GiB of memory"
        except Exception as e:  # the sandbox's own refusal (SecurityError) and anything else a template does
            reply["raised"] = f"{type(e).__name__}: {e}"[:2000]
        out.write(json.dumps(reply, ensure_ascii=True) + "\n")
        out.flush()


if __name__ == "__main__":
    _serve()
