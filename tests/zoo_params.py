"""Zoo model names for parametrizing tests (a plain module: test folders have conftests of their own)."""

from tokparity.zoo import load_manifest

ZOO_MODELS = list(load_manifest().models)
GGUF_MODELS = [name for name, m in load_manifest().models.items() if "gguf" in m.files]
GOLDEN_MODELS = [name for name, m in load_manifest().models.items() if "golden_out" in m.files]
