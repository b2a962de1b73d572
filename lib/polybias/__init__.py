"""polybias: reproducible, multilingual measurement of intrinsic social bias in language models.

The library is flat: one module per concept (``paths``, ``records``, ``data``,
``wordlists``, ``models``, ``stats``, ``metrics.weat``, ``sweep``, ``cli``).
"""

__version__ = "0.1.0"
