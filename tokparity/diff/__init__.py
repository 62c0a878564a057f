"""The diff engine: align two id lists, locate the divergence, name its bug class."""
