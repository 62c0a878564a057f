"""Maintainer tools, not installed with tokparity: run from the source checkout.

    robustness/          hostile-input campaigns (nox -s robustness, tests/robustness)
    unicode_data_gen.py  regenerates tokparity/reference/_unicode_data.py from llama.cpp's tables
    hf_unicode_gen.py    regenerates tokparity/reference/_hf_unicode_data.py from tokenizers' crates
"""
