"""A chat template rendered the way transformers renders it, with named switches a buggy engine
may have set otherwise (the chat causes, tokparity.diagnose.chat).

transformers' ``apply_chat_template`` compiles the template in jinja2's
``ImmutableSandboxedEnvironment`` with ``trim_blocks`` and ``lstrip_blocks`` on, the
``loopcontrols`` extension and a ``{% generation %}`` block (which renders its body); it replaces
the ``tojson`` filter by ``json.dumps(x, ensure_ascii=False, indent, separators, sort_keys)`` (no
HTML escaping, keys in their order), adds the globals ``raise_exception``, ``strftime_now``,
``dict`` (a call and ``fromkeys``) and ``namespace`` (no ``_`` names), and passes ``messages``,
``tools``, ``documents`` (the option of that name),
``add_generation_prompt``, the special tokens' texts and every other keyword as variables. A message
whose value is None loses that key; reasoning under ``thinking`` or ``reasoning`` is also passed as
``reasoning_content`` (and the reverse), as it does. ``continue_final_message`` renders the last
message with a marker after its text and cuts the prompt there.

This module is imported only inside the sandbox's child process (tokparity.chat.sandbox): a
template is code from a file.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from functools import lru_cache, partial
from typing import TypeVar

from tokparity.errors import TemplateRaised

MAX_OUTPUT_CHARS = 4_000_000  # a prompt longer than this is a template gone wrong
CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


@dataclass(frozen=True)
class RenderSwitches:
    """How the template is rendered. The defaults are transformers'; each other value is a way an
    engine renders otherwise (tokparity.diagnose.chat names them)."""

    trim_blocks: bool = True
    lstrip_blocks: bool = True
    keep_trailing_newline: bool = False  # jinja2's default: a template's one last newline is dropped
    # | "jinja2": jinja2's own filter (HTML-safe, keys sorted) | traits joined by "+" (TOJSON_TRAITS)
    tojson: str = "transformers"
    bos_token: str | None = None  # the text bos_token renders as, where an engine passes another
    trim: str = "python"  # | "javascript": the trim filter as String.prototype.trim (a Jinja port in JavaScript)
    #                     | "none": a trim filter that returns its input unchanged
    #                     | "ascii": space, tab, CR and LF only (minja's strip) | "c-space": C's isspace()
    # "raise" | any other text: raise_exception returns it, "{message}" replaced by its message, and the
    # template goes on ("{message}": the message written into the prompt; "": the check skipped)
    raise_exception: str = "raise"
    autoescape: bool = False  # every {{ }} output HTML-escaped (jinja2's autoescape, on in some engines' environments)
    special_tokens: bool = True  # bos_token, eos_token and the other special tokens' texts given to the template
    globals_missing: str = ""  # transformers' globals the engine's environment lacks, by name ("strftime_now")
    # a missing value read where jinja2 raises: "raise" (jinja2); "concatenated": a string plus an
    # undefined value or None is the string; "lenient": that, and an attribute or a call of an
    # undefined value is undefined (llama.cpp's Jinja engine)
    missing: str = "raise"

    def to_json(self) -> dict:
        return asdict(self)


TRANSFORMERS = RenderSwitches()


# The ways a JSON writer departs from Python's json.dumps(x, ensure_ascii=False), each a trait of a
# tojson that writes them: no space after a comma or a colon (JSON.stringify, serde_json), every
# non-ASCII character as \uXXXX, "/" as "\/" (Foundation's JSONEncoder, PHP), "<", ">" and "&" as
# \u003c… (Go's encoding/json), "'" as \u0027 (with "html": an HTML-safe tojson, as jinja2's and
# minijinja's), the keys sorted (a sorted map: Go, Foundation with .sortedKeys).
TOJSON_TRAITS = ("compact", "ascii", "slash", "html", "apostrophe", "sorted")
_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def _tojson(kind: str):
    if kind == "jinja2":
        return None  # jinja2's built-in
    traits = set(kind.split("+")) - {"transformers"}
    if not traits <= set(TOJSON_TRAITS):
        raise ValueError(f"no such tojson: {kind!r}")
    ensure_ascii = "ascii" in traits
    compact = (",", ":") if "compact" in traits else None  # (no space after a comma or a colon)

    def tojson(x, ensure_ascii=ensure_ascii, indent=None, separators=None, sort_keys=False):
        # (compact only on one line: an indented JSON.stringify keeps ": " after each key)
        separators = separators or (compact if indent is None else None)
        text = json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys or "sorted" in traits)
        if "slash" in traits:
            text = text.replace("/", "\\/")
        if "html" in traits:
            text = "".join(_HTML.get(c, c) for c in text)
        if "apostrophe" in traits:
            text = text.replace("'", "\\u0027")
        return text
    return tojson


# ECMAScript's WhiteSpace and LineTerminator: what String.prototype.trim takes off both ends. Unlike
# Python's str.strip (jinja2's trim), it strips U+FEFF and keeps U+0085 and U+001C..U+001F.
_JS_TRIMMED = re.compile("^[\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+|"
                         "[\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$")


def _javascript_trim(value: object, chars: str | None = None) -> str:
    text = str(value)
    return text.strip(chars) if chars is not None else _JS_TRIMMED.sub("", text)


# Compiled templates, the most recently used kept: the chat diagnosis renders one template with
# up to a few hundred sets of switches, again for each conversation, and compiling one costs forty
# renders. The sources kept are bounded in characters, so a huge template is not kept hundreds of times.
_COMPILED: OrderedDict = OrderedDict()
KEPT_TEMPLATES = 512
KEPT_SOURCE_CHARS = 8_000_000
# The Python code jinja2 compiles a template to, kept per source and the switches its compiler
# reads (COMPILED_BY); the others (a global, the BOS text) only bind other values to that code.
# A search's few hundred sets of switches then compile a template a few dozen times, not hundreds.
_CODE: OrderedDict = OrderedDict()
COMPILED_BY = ("trim_blocks", "lstrip_blocks", "keep_trailing_newline", "autoescape", "missing", "tojson", "trim")


def compiled(source: str, switches: RenderSwitches):
    key = (source, switches)
    if key in _COMPILED:
        _COMPILED.move_to_end(key)
        return _COMPILED[key]
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class Generation(jinja2.ext.Extension):
        """``{% generation %}…{% endgeneration %}``: transformers marks the assistant's tokens with it; it renders its body."""

        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

        def _body(self, caller):
            return caller()

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def check_name(name):
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(f"a namespace attribute may not start with '_': {name!r}")

    class Namespace(jinja2.utils.Namespace):
        """transformers' TemplateNamespace: no attribute whose name starts with ``_``, made or set."""

        def __init__(*args, **kwargs):
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                check_name(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name, value):
            check_name(name)
            super().__setitem__(name, value)

    class TemplateDict:
        """transformers' ``dict`` global: a call and ``fromkeys``, no method to change a dict in place."""

        def __call__(self, *args, **kwargs):
            return dict(*args, **kwargs)

        def fromkeys(self, *args, **kwargs):
            return dict.fromkeys(*args, **kwargs)

    environment = _lenient(switches.missing) if switches.missing != "raise" else ImmutableSandboxedEnvironment
    env = environment(trim_blocks=switches.trim_blocks, lstrip_blocks=switches.lstrip_blocks,
                      keep_trailing_newline=switches.keep_trailing_newline, autoescape=switches.autoescape,
                      extensions=[Generation, jinja2.ext.loopcontrols])
    own = _tojson(switches.tojson)
    if own is not None:
        env.filters["tojson"] = own
    if switches.trim == "javascript":
        env.filters["trim"] = _javascript_trim
    elif switches.trim == "none":
        env.filters["trim"] = _untrimmed
    elif switches.trim in ASCII_TRIMMED:
        env.filters["trim"] = partial(_ascii_trim, ASCII_TRIMMED[switches.trim])
    said = switches.raise_exception
    env.globals["raise_exception"] = raise_exception if said == "raise" else \
        (lambda message: said.replace("{message}", str(message)))
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    env.globals["dict"] = TemplateDict()
    env.globals["namespace"] = Namespace
    for name in switches.globals_missing.split():
        env.globals.pop(name, None)
    code_key = (source, *(getattr(switches, name) for name in COMPILED_BY))
    code = _CODE.get(code_key)
    if code is None:
        try:
            code = env.compile(source)
        except jinja2.exceptions.TemplateError as e:
            raise TemplateRaised(f"the template does not compile: {type(e).__name__}: {e}") from None
        _CODE[code_key] = code
        _bounded(_CODE)
    _CODE.move_to_end(code_key)
    # (what Environment.from_string does, the compiling left out)
    template = env.template_class.from_code(env, code, env.make_globals(None))
    _COMPILED[key] = template
    _bounded(_COMPILED)
    return template


def _bounded(kept: OrderedDict) -> None:
    """Drops the least recently used of ``kept`` (keyed by a template's source first) beyond
    KEPT_TEMPLATES, or beyond KEPT_SOURCE_CHARS of sources."""
    while len(kept) > KEPT_TEMPLATES or len(kept) > 1 and sum(len(key[0]) for key in kept) > KEPT_SOURCE_CHARS:
        kept.popitem(last=False)


@lru_cache(maxsize=2)
def _lenient(kind: str):
    """An environment class that reads a missing value where jinja2 raises, as llama.cpp's Jinja
    engine does (common/jinja/runtime.cpp). "concatenated": a string plus an undefined value or
    None is the string (binary_expression). "lenient": also, an attribute or a call of an undefined
    value is undefined (member_expression). Made on first use: jinja2 is imported late."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
    if kind not in ("concatenated", "lenient"):
        raise ValueError(f"no such reading of a missing value: {kind!r}")

    def missing(value) -> bool:
        return value is None or isinstance(value, jinja2.Undefined)

    class Chained(jinja2.ChainableUndefined):
        def __call__(self, *args, **kwargs):
            return self

    class Lenient(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset({"+"})

        def __init__(self, **options):
            super().__init__(undefined=Chained if kind == "lenient" else jinja2.Undefined, **options)

        def unsafe_undefined(self, obj, attribute):
            # (what the sandbox refuses stays refused, as jinja2's plain undefined: never chained to "")
            return jinja2.Undefined(f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe.",
                                    name=attribute, obj=obj, exc=SecurityError)

        def call_binop(self, context, operator, left, right):
            if operator == "+" and isinstance(left, str) and missing(right):
                return left
            if operator == "+" and isinstance(right, str) and missing(left):
                return right
            return super().call_binop(context, operator, left, right)
    return Lenient


def _untrimmed(value, chars=None):
    return value


ASCII_TRIMMED = {"ascii": " \t\n\r", "c-space": " \t\n\v\f\r"}  # (what a C or C++ port's trim takes off)


def _ascii_trim(whitespace: str, value: object, chars: str | None = None) -> str:
    return str(value).strip(whitespace if chars is None else chars)


def _messages(messages: list[dict]) -> list[dict]:
    out = []
    for m in messages:
        m = {k: v for k, v in m.items() if v is not None}
        reasoning = next((m[k] for k in REASONING_FIELDS if m.get(k) is not None), None)
        if reasoning is not None:
            m = {"thinking": reasoning, **m, "reasoning_content": reasoning}
        out.append(m)
    return out


def render(source: str, messages: list[dict], tools: list[dict] | None, options: dict, specials: dict[str, str],
           switches: RenderSwitches = TRANSFORMERS) -> str:
    """The prompt ``source`` makes of the conversation. Raises ``TemplateRaised`` where the template
    refuses it (as transformers raises)."""
    import jinja2

    template = compiled(source, switches)
    messages = _messages(messages)
    add_generation_prompt = bool(options.get("add_generation_prompt", False))
    continue_final = options.get("continue_final_message", False)
    final = None
    if continue_final:
        key = continue_final if isinstance(continue_final, str) else "content"
        final = messages[-1].get(key)
        if final is None:
            raise TemplateRaised(f'continue_final_message: the last message has no "{key}" to continue')
        if isinstance(final, list):
            block = next((b for b in reversed(final) if isinstance(b, dict) and "text" in b), None)
            if block is None:
                raise TemplateRaised("continue_final_message: no text part in the last message to continue")
            final = block["text"]
            block["text"] = str(block["text"]) + CONTINUE_TAG
        else:
            messages[-1][key] = str(final) + CONTINUE_TAG
    variables = {**(specials if switches.special_tokens else {}),
                 **{k: v for k, v in options.items() if k not in ("add_generation_prompt",
                                                                               "continue_final_message", "documents")}}
    if switches.bos_token is not None:
        variables["bos_token"] = switches.bos_token
    parts: list[str] = []
    size = 0
    try:
        for chunk in template.generate(messages=messages, tools=tools, documents=options.get("documents"),
                                       add_generation_prompt=add_generation_prompt, **variables):
            size += len(chunk)
            if size > MAX_OUTPUT_CHARS:
                raise TemplateRaised(f"the template rendered more than {MAX_OUTPUT_CHARS:,} characters; stopped")
            parts.append(chunk)
    except jinja2.exceptions.TemplateError as e:
        raise TemplateRaised(f"{type(e).__name__}: {e}") from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError, OverflowError,
            RecursionError) as e:
        raise TemplateRaised(f"{type(e).__name__}: {e}") from None
    text = "".join(parts)
    if final is not None:
        if str(final).strip() not in text or CONTINUE_TAG.strip() not in text:
            raise TemplateRaised("continue_final_message: the template does not render the last message whole")
        at = text.rindex(CONTINUE_TAG.strip())
        text = text[:at] if text[at:at + len(CONTINUE_TAG)] == CONTINUE_TAG else text[:at].rstrip()
    return text


_Record = TypeVar("_Record")


def replaced(record: _Record, changes: Mapping[str, object]) -> _Record:
    """``dataclasses.replace(record, **changes)`` for a frozen record without ``__post_init__``,
    made by copying its fields. The chat search makes about a million ways a run: ``replace``,
    which reads the fields again on each call, took 40 % of its time there."""
    unknown = changes.keys() - record.__dataclass_fields__.keys()  # type: ignore[attr-defined]
    if unknown:
        raise TypeError(f"{type(record).__name__} has no field {sorted(unknown)[0]!r}")
    copy = object.__new__(type(record))
    copy.__dict__.update(record.__dict__, **changes)  # type: ignore[arg-type]
    return copy
