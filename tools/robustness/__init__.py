"""Robustness tooling: hostile variants of real tokenizer files and a checker that loads them
in a sandboxed child process (time and address-space limits), for tests and a nox session.

    python -m tools.robustness.loaders --seconds 60 --seed 1
"""
