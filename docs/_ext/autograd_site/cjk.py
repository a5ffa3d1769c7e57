"""What counts as Chinese text, defined once for the build, the catalogs and the tests.

Why a module of its own: wrapping a translated code comment, spacing inline code
next to Chinese, checking the catalogs' spacing and finding English left on a
Chinese page all ask the same questions (is this a Han character? how many
columns does it take? may a line end here?). Eight regular expressions used to
answer them, with ranges that disagreed (some missed extension A, some the
compatibility ideographs). This one has no Sphinx import, so the catalog checker
and the browser tests use it too.

* the character classes: ``HAN`` (ideographs), ``PUNCTUATION``, ``WIDE``
  (what sits flush against inline markup), ``BREAKABLE`` (what a line may
  break next to), ``CLOSING`` and ``OPENING`` (what never starts, or ends,
  a line);
* :func:`han`: whether a text holds a Han character;
* :func:`width`: the columns a text takes in a monospaced font.
"""

from __future__ import annotations

import re
import unicodedata

# Han ideographs: extension A, the unified block, the compatibility block.
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# Chinese punctuation: CJK symbols and punctuation (、。《》「」), the full-width
# forms (，：？（）), and the marks shared with English (curly quotes, …, —).
PUNCTUATION = "\u3001-\u303f\uff01-\uffee“”‘’…—"
# Characters that sit flush against inline markup in Chinese prose.
WIDE = HAN + PUNCTUATION
# Characters a line may break next to: radicals, CJK symbols and punctuation,
# kana, Han, the full-width and half-width forms.
BREAKABLE = "\u2e80-\u2fff\u3000-\u303f\u3040-\u30ff" + HAN + "\uff00-\uffef"
# Punctuation that never starts a line, and punctuation that never ends one.
CLOSING = "，。、：；？！）》」』”’"
OPENING = "（《「『“‘"

HAN_CHARACTER = re.compile(f"[{HAN}]")
WIDE_CHARACTER = re.compile(f"[{WIDE}]")
PUNCTUATION_CHARACTER = re.compile(f"[{PUNCTUATION}]")


def han(text: str) -> bool:
    """Whether ``text`` holds a Han character.

    >>> han("x.grad 是 None"), han("x.grad is None")
    (True, False)
    """
    return HAN_CHARACTER.search(text) is not None


def width(text: str) -> int:
    """Columns ``text`` takes in a monospaced font: wide characters count twice.

    >>> width("x 是"), width("，")
    (4, 2)
    """
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
