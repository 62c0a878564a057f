"""Backends: adapters that put every tokenizer implementation behind one protocol (see base.py)."""
