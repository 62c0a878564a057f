"""What a model's files hold (tokparity/checks), for ``tokparity check`` and ``compare --check``.
It lives in the run layer because the multi-turn property renders conversations with the chat
reference and encodes them with the model's oracle, as a chat run does."""

from __future__ import annotations

from tokparity.checks import PROPERTIES, ModelCheck, PropertyCheck


def check_model(spec: str, properties: tuple[str, ...] = PROPERTIES) -> ModelCheck:
    """Every property of ``properties`` on the model ``spec`` names."""
    from tokparity.checks import ends, round_trip, sizes
    from tokparity.checks.libraries import Libraries
    from tokparity.zoo import resolve_model

    model = resolve_model(spec)
    libraries = Libraries(model)
    try:
        done: list[PropertyCheck] = []
        if "end-of-generation" in properties:
            done.append(ends.check(model, libraries))
        if "vocabulary-size" in properties:
            done.append(sizes.check(model, libraries))
        if "multi-turn-prefix" in properties:
            done.append(multi_turn(model, libraries))
        if "round-trip" in properties:
            done.append(round_trip.check(model, libraries))
        return ModelCheck(model.name, tuple(done))
    finally:
        libraries.close()


def multi_turn(model, libraries) -> PropertyCheck:
    """The multi-turn property, with the template rendered as transformers does and the prompts
    encoded by the model's oracle (its first library)."""
    from tokparity.chat.template import find_template
    from tokparity.checks import turns
    from tokparity.checks.ends import ids_vocabulary, template_turn_end
    from tokparity.run.chat import chat_reference
    from tokparity.run.oracle import choose_oracle

    template = find_template(model)
    if template is None:
        return PropertyCheck.skipped(turns.NAME, "no chat template")
    name = next((n for n in choose_oracle(model).chain if n != "golden"), None)
    encoder = libraries.backend(name) if name else "no library reads the model's files"
    if isinstance(encoder, str):
        return PropertyCheck.skipped(turns.NAME, f"no encoder: {encoder}")
    _role, vocab = ids_vocabulary(model)
    end = template_turn_end(model, vocab)
    reference = chat_reference(template, encoder, vocab, model=model)
    try:
        return turns.check(turns.conversations(), reference, vocab, end[0] if isinstance(end, tuple) else None)
    finally:
        reference.close()
