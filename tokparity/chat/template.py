"""A model's chat template, as its files carry it, and the special tokens' texts it is rendered with.

Where the template is read, first found wins (as transformers and llama.cpp read them):

    chat_template.jinja beside tokenizer.json      (transformers ≥ 4.43 saves it apart; the other
                                                   named ones in additional_chat_templates/)
    tokenizer_config.json's "chat_template"        (a string, or a list of named templates)
    the GGUF's tokenizer.chat_template             (and tokenizer.chat_template.NAME)

Of several named templates, ``default`` renders a conversation, ``tool_use`` one with tools
where the model has it (transformers' ``get_chat_template``). The special tokens' texts
(``bos_token``, ``eos_token``, ``unk_token``, ``sep_token``, ``pad_token``, ``cls_token``,
``mask_token``) are the template's variables, as
transformers passes its ``special_tokens_map``: from tokenizer_config.json, else from the
vocabulary's special ids.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from tokparity.errors import TokparityError
from tokparity.vocab.hf_json import CONFIG_BYTES
from tokparity.zoo import ModelFiles
from tokparity.zoo.model_file import read_model_json, read_model_text

SPECIAL_ROLES = ("bos", "eos", "unk", "sep", "pad", "cls", "mask")  # transformers' special_tokens_map
PART_TYPE = re.compile(r"""\[\s*['"]type['"]\s*\]|\.type\b""")  # item['type'], item.type
TRIMS = re.compile(r"\btrim\b|\bl?r?strip\b")  # (jinja2's trim filter, Python's strip methods)
MAX_TEMPLATE_CHARS = 1_000_000  # (the largest real ones are about 30,000: tool-calling models)
MAX_TEMPLATE_BYTES = 4 * MAX_TEMPLATE_CHARS  # (read no further: a larger file holds more characters)


@dataclass(frozen=True)
class ChatTemplate:
    source: str  # the file (and key) it came from, as a report shows it
    templates: dict[str, str]  # name -> Jinja source ("default" for a single template)
    specials: dict[str, str] = field(default_factory=dict)  # bos_token -> "<s>", ...
    # special-token text in the prompt parsed to its id (tokenizer_config.json's split_special_tokens: false)
    parse_special: bool = True

    @cached_property
    def reads_parts(self) -> bool:
        """Whether a template reads list-of-parts content (a part's ``type``), so claims to take
        both a string and a list of parts for a message's content."""
        return any(PART_TYPE.search(text) for text in self.templates.values())

    @cached_property
    def trims(self) -> bool:
        """Whether a template may trim or strip a text (``|trim``, ``.strip()``): a mark put before
        a content's own leading whitespace would then change what it writes."""
        return any(TRIMS.search(text) for text in self.templates.values())

    @property
    def digest(self) -> str:
        """sha256 over the templates (by name) and the special tokens' texts: what makes the prompts."""
        made = json.dumps([sorted(self.templates.items()), sorted(self.specials.items()), self.parse_special],
                          ensure_ascii=False)
        return hashlib.sha256(made.encode("utf-8")).hexdigest()

    def for_conversation(self, has_tools: bool) -> str:
        if has_tools and "tool_use" in self.templates:
            return self.templates["tool_use"]
        if "default" in self.templates:
            return self.templates["default"]
        raise TokparityError(f"{self.source}: {len(self.templates)} named chat templates "
                             f"({', '.join(sorted(self.templates))}) and none named 'default'")


def _special_text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):  # an AddedToken as saved
        return value["content"]
    return None


def _named(value: object, where: str) -> dict[str, str]:
    if isinstance(value, str):
        return {"default": value}
    if isinstance(value, list) and all(isinstance(t, dict) and isinstance(t.get("name"), str) and
                                       isinstance(t.get("template"), str) for t in value):
        return {t["name"]: t["template"] for t in value}
    raise TokparityError(f"{where}: 'chat_template' must be a string or a list of {{name, template}} objects")


def _from_vocab(path: Path) -> dict[str, str]:
    from tokparity.vocab import load_vocab

    vocab = load_vocab(path)
    return {f"{role}_token": vocab.tokens[vocab.special_ids[role]] for role in SPECIAL_ROLES
            if 0 <= vocab.special_ids.get(role, -1) < vocab.size}


def _made(source: str, templates: dict[str, str], specials: dict[str, str], parse_special: bool = True
          ) -> ChatTemplate | None:
    """The template, once each of its texts is checked; None where every text is empty (a GGUF's
    ``tokenizer.chat_template`` of "" is no template: rendered, it would agree with anything)."""
    for name, text in templates.items():
        if len(text) > MAX_TEMPLATE_CHARS:
            raise TokparityError(f"{source}: chat template {name!r} has {len(text):,} characters, more than "
                                 f"{MAX_TEMPLATE_CHARS:,}; a template that large is refused")
    templates = {name: text for name, text in templates.items() if text.strip()}
    return ChatTemplate(source, templates, specials, parse_special) if templates else None


def find_template(model: ModelFiles, role: str | None = None) -> ChatTemplate | None:
    """The chat template of ``model``'s file ``role``, or None where that file has none. Without a
    role: a template file of its own first (a zoo model's ``chat_template``), then transformers' files
    (the template a model is published with), then the GGUF's."""
    if role is None:
        for candidate in ("chat_template", "tokenizer_config", "tokenizer_json", "spm_model", "gguf"):
            if candidate in model.original_files and (found := find_template(model, candidate)) is not None:
                return found
        return None
    path = model.files.get(role)
    if path is None:
        return None
    if role in ("tokenizer_json", "tokenizer_config", "spm_model"):
        config_path = model.files.get("tokenizer_config") or path.with_name("tokenizer_config.json")
        folder = config_path.parent
        config = {}
        if config_path.is_file() or config_path.is_symlink():
            config = read_model_json(config_path, folder, CONFIG_BYTES, "the tokenizer's configuration")
        specials = {f"{r}_token": t for r in SPECIAL_ROLES if (t := _special_text(config.get(f"{r}_token"))) is not None}
        if not specials and path.suffix in (".json", ".model"):
            specials = _from_vocab(model.files.get("tokenizer_json") or path)
        parse_special = not config.get("split_special_tokens", False)
        jinja_file = config_path.with_name("chat_template.jinja")
        if jinja_file.is_file() or jinja_file.is_symlink():
            saved = {"default": read_model_text(jinja_file, folder, MAX_TEMPLATE_BYTES, "the chat template")}
            # transformers ≥ 4.55 saves the other named templates beside it, one file each
            for named in sorted(folder.glob("additional_chat_templates/*.jinja")):
                saved[named.stem] = read_model_text(named, folder, MAX_TEMPLATE_BYTES, "the chat template")
            return _made(str(jinja_file), saved, specials, parse_special)
        if "chat_template" in config:
            where = f"{config_path} chat_template"
            return _made(where, _named(config["chat_template"], where), specials, parse_special)
        return None
    if role == "chat_template":  # a template file of its own: the special tokens' texts from the vocabulary
        where = str(path)
        text = read_model_text(path, path.parent, MAX_TEMPLATE_BYTES, "the chat template")
        return _made(where, {"default": text}, _from_vocab(model.primary[1]))
    if role == "gguf":
        from tokparity.vocab.gguf_reader import GGUFMetadata

        meta = GGUFMetadata(path)
        templates: dict[str, str] = {}
        default = meta.get("tokenizer.chat_template")
        if isinstance(default, str):
            templates["default"] = default
        for key, value in meta.fields.items():
            if key.startswith("tokenizer.chat_template.") and isinstance(value, str):
                templates[key.rsplit(".", 1)[1]] = value
        where = f"{path} tokenizer.chat_template"
        return _made(where, templates, _from_vocab(path)) if templates else None
    return None


def gguf_template(model: ModelFiles, template: ChatTemplate) -> ChatTemplate | None:
    """The template in ``model``'s GGUF, where it has one that is not ``template`` (transformers'
    files and the GGUF can carry two, and llama.cpp reads the GGUF's)."""
    if "gguf" not in model.files:
        return None
    found = find_template(model, "gguf")
    return found if found is not None and found.templates != template.templates else None
