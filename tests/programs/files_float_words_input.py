"""The input of files_float_words.sgl: a text file of float words in the
forms C's strtod reads (docs/language.md §7): NaN with a payload in
parentheses, signs, infinities, exponents, hex floats."""

from pathlib import Path

Path("float_words.txt").write_text(
    "1.5 NAN(0x2a)\n-nan(abc_9)\tnan() -INF Infinity 2e3\n0x1p-2 -0.0 .5 7.\n")
