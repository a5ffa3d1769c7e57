r"""Check the zh_CN catalogs: ``check_catalogs.py [--fix-spacing] [file.po ...]``.

Prints ``file: msgid: problem`` and exits with their number: untranslated or fuzzy;
code, math, roles or link targets changed; no Chinese; spacing between markup and
Chinese (``--fix-spacing`` rewrites it); a ``terms.csv`` term not as agreed.
sphinx-intl's ``stat`` only counts untranslated and fuzzy messages.
"""

from __future__ import annotations

import csv
import io
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po, write_po
from docutils.utils import punctuation_chars

HERE = Path(__file__).resolve().parent
# What counts as Chinese text is defined once, in the site's autograd_site/cjk.py.
sys.path.insert(0, str(HERE.parent / "_ext"))
from autograd_site.cjk import HAN, HAN_CHARACTER, PUNCTUATION_CHARACTER, WIDE_CHARACTER  # noqa: E402

CATALOGS = HERE / "zh_CN" / "LC_MESSAGES"
TERMS = HERE / "zh_CN" / "terms.csv"

LITERAL = re.compile(r"``.+?``|(?<![`}A-Za-z0-9_])`[^`]+?`(?!`)")
ROLE = re.compile(r"(?<!`)(?::[\w:-]+:|\{[\w:-]+\})`[^`]*`")
LINK = re.compile(r"\]\(([^)\s]+)\)|<(https?://[^>]+)>")
MATH = re.compile(r"\$[^$]+\$")
LATEX = re.compile(r"\\[A-Za-z]+")


class Term(NamedTuple):
    english: list[str]
    chinese: str
    avoid: list[str]

    def used_in(self, text: str) -> bool:
        words = "|".join(map(re.escape, self.english))
        return bool(re.search(rf"(?<![\w-])(?:{words})s?(?![\w-])", text, re.I))


def load_terms(path: Path = TERMS) -> list[Term]:
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    split = lambda cell: [word for word in cell.split("/") if word]  # noqa: E731
    return [Term(split(r["english"]), r["chinese"], split(r["avoid"])) for r in rows]


def _prose(text: str) -> str:
    """The words of a message, without code, roles, links and math."""
    for pattern in (ROLE, LITERAL, MATH, LINK):
        text = pattern.sub(" ", text)
    return text


def _role_targets(text: str) -> Counter[str]:
    """Roles that must survive translation; a titled one only by its target."""
    found: Counter[str] = Counter()
    for role in ROLE.findall(text):
        name, _, body = role.partition("`")
        body = body.rstrip("`")
        if name in (":math:", "{math}"):
            found[role] += 1
        elif m := re.search(r"<([^<>]+)>$", body):
            found[f"{name}<{m.group(1)}>"] += 1
        elif name.startswith(("{bdg", ":bdg")):
            found[name] += 1  # a badge's label is prose
        else:
            found[role] += 1
    return found


# -- Spacing: no visible space between Chinese text and inline markup ----------
# reST needs an escaped space (``是\ **原地**\ 累加``), MyST none (``是**原地**累加``)
# unless emphasis has punctuation inside: it moves out (``在“**原地**”``).
REST_MARKUP = re.compile(
    r"``.+?``|(?::[\w:-]+:)?`[^`]+`_{0,2}|\*\*[^*\s][^*]*\*\*|\*[^*\s][^*]*\*"
)
MYST_MARKUP = re.compile(
    r"``.+?``|(?:\{[\w:-]+\})?`[^`]+`|\[[^\]]+\]\([^)\s]*\)"
    r"|\*\*[^*\s][^*]*\*\*|\*[^*\s][^*]*\*"
)
BOXED = re.compile(r"(?::|\{)(?:math|bdg[\w-]*)(?::|\})`")  # keeps its spaces
# docutils: what may come before a start-string and after an end-string.
_BEFORE = re.compile(f"[\\s{punctuation_chars.openers}{punctuation_chars.delimiters}]")
_AFTER = re.compile(
    f"[\\s\\\\{punctuation_chars.closing_delimiters}"
    f"{punctuation_chars.delimiters}{punctuation_chars.closers}]"
)
SPACES_BEFORE = re.compile(r"(?:\\ | )+$")  # spaces, and escaped spaces
SPACES_AFTER = re.compile(r"(?:\\ | )+")
# Math next to a Chinese character: one plain space, not "\ " and not none.
MATH_BEFORE = re.compile(f"([{HAN}])(?:\\\\ )?((?::math:|\\{{math\\}})`)")
MATH_AFTER = re.compile(f"((?::math:|\\{{math\\}})`[^`]*`)(?:\\\\ )?([{HAN}])")


def catalog_syntax(catalog: Iterable[Message]) -> str:
    """``"myst"`` for a catalog of a MyST page (``#: ../../about.md:12``), else rst."""
    md = any(f.endswith(".md") for m in catalog for f, _ in m.locations)
    return "myst" if md else "rst"


def _punct(char: str) -> bool:
    """Punctuation to CommonMark's flanking rules (as markdown-it-py counts)."""
    return unicodedata.category(char).startswith(("P", "S"))


def _opens(before: str, after: str) -> bool:
    """A ``*`` run between ``before`` and ``after`` is left-flanking."""
    space = (not before or before.isspace(), not after or after.isspace())
    return not space[1] and (not _punct(after) or space[0] or _punct(before))


def _emphasis_parses(text: str, start: int, end: int, run: int) -> bool:
    """Whether CommonMark reads text[start:end] as emphasis (closing: mirrored)."""
    return _opens(text[start - 1 : start], text[start + run]) and _opens(
        text[end : end + 1], text[end - run - 1]
    )


PAIRS = dict(zip("“‘（《「『【〔［(", "”’）》」』】〕］)", strict=True))


def _move_punctuation_out(span: str, before: str, after: str) -> tuple[str, str, str]:
    """``**“原地”**`` -> ``“**原地**”``: (text before, span, text after)."""
    run = 2 if span.startswith("**") else 1
    mark, inner = span[:run], span[run:-run]
    lead = trail = ""
    while True:
        if len(inner) > 2 and PAIRS.get(inner[0]) == inner[-1]:
            lead, inner, trail = lead + inner[0], inner[1:-1], inner[-1] + trail
        elif len(inner) > 1 and unicodedata.category(inner[-1]) == "Po":
            inner, trail = inner[:-1], inner[-1] + trail
        else:
            return before + lead, mark + inner + mark, trail + after


def _split(text: str, syntax: str) -> tuple[list[str], list[str]]:
    """(gaps, marks): ``gaps[i]`` before ``marks[i]``, ``gaps[-1]`` at the end."""
    pattern = MYST_MARKUP if syntax == "myst" else REST_MARKUP
    spans = list(pattern.finditer(text))
    cuts = [0, *(i for m in spans for i in m.span()), len(text)]
    gaps = [text[a:b] for a, b in zip(cuts[::2], cuts[1::2], strict=True)]
    return gaps, [m.group(0) for m in spans]


def _shown(mark: str) -> str:
    """The text that inline markup shows (roughly)."""
    if m := re.fullmatch(r"(?::[\w:-]+:|\{[\w:-]+\})?`(.*)`_{0,2}", mark, re.S):
        inner = m.group(1)
        return re.sub(r"\s*<[^<>]+>$", "", inner) or inner
    if mark.startswith("["):
        return mark[1 : mark.index("](")]
    return mark.strip("*`")


def _wide(text: str, index: int, boxed: bool = False) -> bool:
    """Whether ``text[index]`` is Chinese (``boxed``: full-width punctuation)."""
    character = PUNCTUATION_CHARACTER if boxed else WIDE_CHARACTER
    return bool(text) and character.match(text[index]) is not None


def _unspaced(gaps: list[str], marks: list[str]) -> list[str]:
    """``gaps`` without the (escaped) spaces between markup and Chinese text."""
    new = list(gaps)
    for i, gap in enumerate(gaps):
        left = marks[i - 1] if i > 0 else None
        right = marks[i] if i < len(marks) else None
        boxed = (bool(left and BOXED.match(left)), bool(right and BOXED.match(right)))
        if left and right and SPACES_AFTER.fullmatch(gap):
            # Between two marks: look at the edges of their text.
            edges = _wide(_shown(left), -1) or _wide(_shown(right), 0)
            new[i] = "" if edges and not any(boxed) else gap
            continue
        after = SPACES_AFTER.match(gap) if left else None
        if after and after.end() < len(gap) and _wide(gap, after.end(), boxed[0]):
            gap = gap[after.end() :]
        before = SPACES_BEFORE.search(gap) if right else None
        if before and before.start() > 0 and _wide(gap, before.start() - 1, boxed[1]):
            gap = gap[: before.start()]
        new[i] = gap
    return new


def fix_spacing(text: str, syntax: str = "rst") -> str:
    """Inline markup next to Chinese text, as ``syntax`` needs it."""
    gaps, marks = _split(text, syntax)
    if not marks:
        return text
    gaps = _unspaced(gaps, marks)
    if syntax == "myst":
        for i, mark in enumerate(marks):
            if not mark.startswith("*"):
                continue
            run = 2 if mark.startswith("**") else 1
            start = len(gaps[i])
            if _emphasis_parses(
                gaps[i] + mark + gaps[i + 1], start, start + len(mark), run
            ):
                continue
            before, moved, after = _move_punctuation_out(mark, gaps[i], gaps[i + 1])
            joined = before + moved + after
            if _emphasis_parses(joined, len(before), len(before) + len(moved), run):
                gaps[i], marks[i], gaps[i + 1] = before, moved, after
                continue
            # Nothing else works: the one space CommonMark needs.
            first, last = mark[run], mark[-run - 1]
            if not _opens(gaps[i][-1:], first):
                gaps[i] += " "
            if not _opens(gaps[i + 1][:1], last):
                gaps[i + 1] = " " + gaps[i + 1]
    else:
        for i, mark in enumerate(marks):
            if mark.startswith("*") and _wide(mark.rstrip("*"), -1, boxed=True):
                after = gaps[i + 1].removeprefix("\\ ")
                gaps[i], marks[i], gaps[i + 1] = _move_punctuation_out(
                    mark, gaps[i], after
                )
        for i in range(len(marks)):
            before, after = gaps[i][-1:], gaps[i + 1][:1]
            if i > 0 and not gaps[i]:
                before = marks[i - 1][-1]
            if i + 1 < len(marks) and not gaps[i + 1]:
                after = marks[i + 1][0]
            if before and not _BEFORE.match(before):
                gaps[i] += "\\ "
            if after and not _AFTER.match(after):
                gaps[i + 1] = "\\ " + gaps[i + 1]
    text = "".join(g + m for g, m in zip(gaps, [*marks, ""], strict=True))
    return MATH_AFTER.sub(r"\1 \2", MATH_BEFORE.sub(r"\1 \2", text))


def spaced_markup(text: str, syntax: str = "rst") -> list[str]:
    """The inline markup of ``text`` with a visible space to Chinese text."""
    gaps, marks = _split(text, syntax)
    fixed = _unspaced(gaps, marks)
    found = []
    for i, (old, new) in enumerate(zip(gaps, fixed, strict=True)):
        old, new = old.replace("\\ ", ""), new.replace("\\ ", "")
        if old == new:
            continue
        lead = len(old) - len(old.lstrip(" ")), len(new) - len(new.lstrip(" "))
        trail = len(old) - len(old.rstrip(" ")), len(new) - len(new.rstrip(" "))
        if i > 0 and (not new or lead[0] != lead[1]):
            found.append(marks[i - 1])  # spaces after the markup go
        if i < len(marks) and (not new or trail[0] != trail[1]):
            found.append(marks[i])  # spaces before it go
    return list(dict.fromkeys(found))


SPACING_ADVICE = {
    "rst": "no space, and an escaped space '\\ ' where reST needs a separator",
    "myst": "no space, no backslash, no punctuation at the inner edge of emphasis",
}


def _avoided(alternative: str, text: str, terms: list[Term], prose: str) -> bool:
    """Whether ``text`` uses ``alternative`` outside every agreed term (斜率 is
    avoided for "gradient", agreed where the English says "slope")."""
    for other in terms:
        if alternative in other.chinese and (
            other.chinese != alternative or other.used_in(prose)
        ):
            text = text.replace(other.chinese, "")
    return alternative in text


def problems(
    message_id: str, message_str: str, terms: list[Term], syntax: str = "rst"
) -> list[str]:
    """What is wrong with one translation (of a ``"rst"`` or ``"myst"`` page)."""
    if not message_str.strip():
        return ["no translation"]
    found = []
    if (
        fix_spacing(message_str, syntax) != message_str
        and fix_spacing(message_id, syntax) == message_id
    ):
        found.append(
            f"inline markup next to Chinese text: {SPACING_ADVICE[syntax]} "
            "(--fix-spacing)"
        )
    elif syntax == "myst" and (spaced := spaced_markup(message_str, syntax)):
        found.append(
            f"a space stays between Chinese text and {', '.join(spaced)} "
            "(CommonMark cannot close or open the emphasis without it): rephrase"
        )
    for what, count in (
        ("inline code differs", lambda t: Counter(LITERAL.findall(ROLE.sub(" ", t)))),
        ("math differs", lambda t: Counter(MATH.findall(ROLE.sub(" ", t)))),
        ("roles differ", _role_targets),
        ("link targets differ", lambda t: Counter(LINK.findall(t))),
    ):
        want, got = count(message_id), count(message_str)
        if want != got:
            missing, extra = sorted((want - got).elements()), (got - want).elements()
            found.append(f"{what}: missing {missing}, extra {sorted(extra)}")
    prose = _prose(message_id)
    words = re.search(r"[A-Za-z]{4,}", LATEX.sub(" ", message_id))
    if LATEX.search(message_id) and not words:  # a formula
        return found if message_str == message_id else [*found, "formula changed"]
    if re.search(r"[A-Za-z]{2,}", prose) and not HAN_CHARACTER.search(message_str):
        found.append("no Chinese in the translation")
    avoided: dict[str, list[Term]] = {}
    for term in terms:
        if term.used_in(prose) and term.chinese not in message_str:
            found.append(f"term {term.english[0]!r} must be {term.chinese!r}")
        for alternative in term.avoid:
            if _avoided(alternative, message_str, terms, prose):
                avoided.setdefault(alternative, []).append(term)
    for alternative, instead in avoided.items():
        if len(instead) == 1:
            found.append(f"use {instead[0].chinese!r}, not {alternative!r}")
        else:
            choices = [f"{t.chinese!r} ({t.english[0]})" for t in instead]
            found.append(
                f"use {', '.join(choices[:-1])} or {choices[-1]} by meaning, "
                f"not {alternative!r}"
            )
    return found


def _read(path: Path) -> Catalog:
    return read_po(io.BytesIO(path.read_bytes()))


def _name(path: Path) -> Path:
    return path.relative_to(CATALOGS) if path.is_relative_to(CATALOGS) else path


def check(paths: list[Path]) -> list[str]:
    terms, report = load_terms(), []
    for path in paths:
        catalog = _read(path)
        syntax = catalog_syntax(catalog)
        for m in (m for m in catalog if m.id):
            issues = ["fuzzy (outdated)"] if m.fuzzy else []
            issues += problems(str(m.id), str(m.string or ""), terms, syntax)
            report += [f"{_name(path)}: {str(m.id)[:70]!r}: {i}" for i in issues]
    return report


def summary(paths: list[Path]) -> str:
    """Message counts: total, translated, fuzzy, untranslated."""
    found = [m for path in paths for m in _read(path) if m.id]
    fuzzy = sum(m.fuzzy for m in found)
    done = sum(bool(m.string) and not m.fuzzy for m in found)
    return (
        f"{len(found)} messages: {done} translated, {fuzzy} fuzzy, "
        f"{len(found) - done - fuzzy} untranslated"
    )


def fix(paths: list[Path]) -> dict[Path, int]:
    """:func:`fix_spacing` on each catalog; the number of messages it changed."""
    changed = {}
    for path in paths:
        catalog, count = _read(path), 0
        syntax = catalog_syntax(catalog)
        for message in catalog:
            if message.id and isinstance(message.string, str) and message.string:
                fixed = fix_spacing(message.string, syntax)
                count += fixed != message.string
                message.string = fixed
        if count:
            with path.open("wb") as f:
                write_po(f, catalog, width=76)
        changed[path] = count
    return changed


def main(argv: list[str]) -> int:
    fixing = "--fix-spacing" in argv
    argv = [a for a in argv if a != "--fix-spacing"]
    paths = [Path(a).resolve() for a in argv] or sorted(CATALOGS.rglob("*.po"))
    if fixing:
        for path, count in fix(paths).items():
            if count:
                print(f"{_name(path)}: spacing fixed in {count} messages")
    report = check(paths)
    print("\n".join(report) or f"{len(paths)} catalogs: OK")
    print(summary(paths))
    return min(len(report), 100)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
