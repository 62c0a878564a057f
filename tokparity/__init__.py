"""tokparity: prove that tokenizer implementations agree, and when they do not, show where, how and why."""

__version__ = "0.1.0"
