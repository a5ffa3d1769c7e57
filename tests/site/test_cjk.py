"""autograd_site/cjk.py: one definition of Chinese text, and no other left in the code.

The classes are checked against Unicode's own data (``unicodedata``), not
against a copy of their ranges; and a scan of the site, the catalog checker and
the tests fails on a Han range written anywhere but ``cjk.py``.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
from autograd_site.cjk import (
    BREAKABLE,
    CLOSING,
    HAN,
    HAN_CHARACTER,
    OPENING,
    PUNCTUATION_CHARACTER,
    WIDE_CHARACTER,
    han,
    width,
)

ROOT = Path(__file__).resolve().parents[2]


def characters(ranges: str) -> set[str]:
    """Every character a regex class body (``a-c“”``) matches."""
    return {chr(code) for code in range(0x110000) if re.match(f"[{ranges}]", chr(code))}


def test_han_is_every_ideograph_of_the_basic_plane() -> None:
    """HAN holds each CJK ideograph of the BMP (Unicode names them ``CJK
    UNIFIED IDEOGRAPH`` or ``CJK COMPATIBILITY IDEOGRAPH``) and nothing else."""
    ideographs = {
        chr(code)
        for code in range(0x10000)
        if unicodedata.name(chr(code), "").startswith(
            ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH")
        )
    }
    found = characters(HAN)
    assert ideographs <= found
    assert all(unicodedata.category(c) in ("Lo", "Cn") for c in found - ideographs)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("梯度", True), ("㐀", True), ("隣", True), ("grad", False), ("，。", False)],
)
def test_han_finds_ideographs_not_punctuation(text: str, expected: bool) -> None:
    assert han(text) is expected
    assert (HAN_CHARACTER.search(text) is not None) is expected


@pytest.mark.parametrize("character", list("是，。：（）“”…—、《》"))
def test_chinese_characters_and_punctuation_are_wide(character: str) -> None:
    assert WIDE_CHARACTER.match(character)


@pytest.mark.parametrize("character", list("a1 _.,:()\"'`*"))
def test_latin_characters_are_not_wide(character: str) -> None:
    assert not WIDE_CHARACTER.match(character)
    assert not PUNCTUATION_CHARACTER.match(character)


def test_punctuation_is_wide_and_not_han() -> None:
    punctuation = characters(PUNCTUATION_CHARACTER.pattern[1:-1])
    assert {"，", "、", "“", "…"} <= punctuation
    assert "梯" not in punctuation
    assert all(WIDE_CHARACTER.match(c) for c in punctuation)
    assert not any(han(c) for c in punctuation)


def test_a_line_may_break_next_to_han_kana_and_full_width_forms() -> None:
    breakable = characters(BREAKABLE)
    assert characters(HAN) <= breakable
    assert {"あ", "カ", "，", "ｱ", "⺀"} <= breakable
    assert not {"a", " ", "-", "“"} & breakable


def test_opening_and_closing_marks_are_punctuation_of_each_kind() -> None:
    """Openers are Unicode's open or initial-quote punctuation, closers its
    close, final-quote or other punctuation (，。：)."""
    assert all(unicodedata.category(c) in ("Ps", "Pi") for c in OPENING)
    assert all(unicodedata.category(c) in ("Pe", "Pf", "Po") for c in CLOSING)
    assert not set(OPENING) & set(CLOSING)


@pytest.mark.parametrize(
    ("text", "columns"),
    [("", 0), ("grad", 4), ("梯度", 4), ("（）", 4), ("x.grad 是 None", 14), ("ｱ", 1)],
)
def test_width_counts_wide_characters_twice(text: str, columns: int) -> None:
    assert width(text) == columns


# A Han range written out: "\u4e00", "\\u9fff", or the JS "\p{Script=Han}".
HAN_RANGE = re.compile(r"\\+u(?:3400|4e00|4E00|9fff|9FFF)|\\p\{Script=Han\}")


def test_no_other_definition_of_chinese_text() -> None:
    """The site, the catalog checker and every test import cjk.py; only the
    package's own view.js (shipped in the wheel, no docs/_ext there) keeps one."""
    sources = [
        *ROOT.glob("docs/**/*.py"),
        *ROOT.glob("docs/_static/*.js"),
        *ROOT.glob("tests/**/*.py"),
        *ROOT.glob("browser_tests/*.py"),
        *ROOT.glob(".ci/*.py"),
    ]
    found = [
        str(path.relative_to(ROOT))
        for path in sources
        if "_build" not in path.parts
        and path.name not in ("cjk.py", "test_cjk.py")
        and HAN_RANGE.search(path.read_text(encoding="utf-8"))
    ]
    assert len(sources) > 50
    assert found == []
