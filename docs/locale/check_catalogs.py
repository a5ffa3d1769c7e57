"""Check the zh_CN catalogs: complete, current, markup intact, terms kept.

Run it after editing a catalog (``tests/test_translations.py`` runs it too)::

    python docs/locale/check_catalogs.py [--fix-spacing] [path/to/file.po ...]

``--fix-spacing`` first adds the spaces that inline markup needs around it
(reST renders ````code```` only when it does not touch a Chinese character).

Each problem is printed as ``file: msgid: what is wrong``; the exit status is
the number of problems (0: all good). The rules:

* every message has a translation, and none is fuzzy (outdated);
* inline code, roles and link targets of the English message appear unchanged
  in the translation (so links and code still work in the zh edition);
* a translation contains Chinese, unless the message is only code or links;
* the terminology in ``zh_CN/terms.csv``: a message that uses an English
  term translates it with the one agreed Chinese term, never an alternative.
"""

from __future__ import annotations

import csv
import re
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from babel.messages.pofile import read_po

HERE = Path(__file__).resolve().parent
CATALOGS = HERE / "zh_CN" / "LC_MESSAGES"
TERMS = HERE / "zh_CN" / "terms.csv"

CJK = re.compile(r"[\u4e00-\u9fff]")
# ``literal`` (reST), `literal` (MyST), $math$, roles with their target.
LITERAL = re.compile(r"``.+?``|(?<![`\w}])`[^`]+?`(?!`)")
ROLE = re.compile(r"(?<!`)(?::[\w:-]+:|\{[\w:-]+\})`[^`]*`")
LINK = re.compile(r"\]\(([^)\s]+)\)|<(https?://[^>]+)>")
MATH = re.compile(r"\$[^$]+\$")
LATEX = re.compile(r"\\[A-Za-z]+")


def is_formula(text: str) -> bool:
    """A display-math message: LaTeX commands, and no word of prose."""
    return bool(LATEX.search(text)) and not re.search(
        r"[A-Za-z]{4,}", LATEX.sub(" ", text)
    )


@dataclass(frozen=True)
class Term:
    english: tuple[str, ...]
    chinese: str
    avoid: tuple[str, ...]

    def used_in(self, text: str) -> bool:
        return any(
            re.search(rf"(?<![\w-]){re.escape(word)}s?(?![\w-])", text, re.I)
            for word in self.english
        )


def load_terms(path: Path = TERMS) -> list[Term]:
    with path.open(encoding="utf-8", newline="") as f:
        return [
            Term(
                tuple(row["english"].split("/")),
                row["chinese"],
                tuple(a for a in row["avoid"].split("/") if a),
            )
            for row in csv.DictReader(f)
        ]


def _prose(text: str) -> str:
    """The words of a message: without code, roles, links and math."""
    for pattern in (ROLE, LITERAL, MATH, LINK):
        text = pattern.sub(" ", text)
    return text


def _role_targets(text: str) -> Counter[str]:
    """Roles whose target must survive translation, e.g. ``{ref}`x```.

    A role with an explicit title (``{doc}`title <target>```) may translate
    its title; only the target is compared.
    """
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


# Inline markup: ``code``, roles, `links`_, **strong**, *emphasis*, $math$.
MARKUP = re.compile(
    r"``.+?``|(?::[\w:-]+:|\{[\w:-]+\})?`[^`]+`_{0,2}|\*\*[^*]+\*\*|\*[^*\s][^*]*\*"
)
# docutils: markup may start after a space or an opening/dash/other punctuation
# and end before a space or a closing/dash/other punctuation, never touching a
# Chinese character (nor, at its end, an opening bracket such as "（").
OK_BEFORE = {"Pd", "Po", "Ps", "Pi", "Pf"}
OK_AFTER = {"Pd", "Po", "Pe", "Pi", "Pf"}


def _fits(char: str, allowed: set[str]) -> bool:
    return not char or char.isspace() or unicodedata.category(char) in allowed


def fix_spacing(text: str) -> str:
    """Add the spaces inline markup needs next to Chinese text."""
    out, last = [], 0
    for match in MARKUP.finditer(text):
        start, end = match.span()
        out.append(text[last:start])
        if not _fits(text[start - 1 : start], OK_BEFORE):
            out.append(" ")
        out.append(match.group(0))
        if not _fits(text[end : end + 1], OK_AFTER):
            out.append(" ")
        last = end
    out.append(text[last:])
    return "".join(out)


def problems(message_id: str, message_str: str, terms: list[Term]) -> list[str]:
    """What is wrong with one translation, as short sentences."""
    if not message_str.strip():
        return ["no translation"]
    found = []
    if (
        fix_spacing(message_str) != message_str
        and fix_spacing(message_id) == message_id
    ):
        found.append("inline markup touches a Chinese character or bracket")
    for name, pattern in (("inline code", LITERAL), ("math", MATH)):
        want = Counter(pattern.findall(ROLE.sub(" ", message_id)))
        got = Counter(pattern.findall(ROLE.sub(" ", message_str)))
        if want != got:
            missing = sorted((want - got).elements())
            extra = sorted((got - want).elements())
            found.append(f"{name} differs: missing {missing}, extra {extra}")
    if _role_targets(message_id) != _role_targets(message_str):
        want, got = _role_targets(message_id), _role_targets(message_str)
        found.append(
            f"roles differ: missing {sorted((want - got).elements())}, "
            f"extra {sorted((got - want).elements())}"
        )
    if Counter(LINK.findall(message_id)) != Counter(LINK.findall(message_str)):
        found.append("link targets differ")
    prose = _prose(message_id)
    if is_formula(message_id):
        return found if message_str == message_id else [*found, "formula changed"]
    if re.search(r"[A-Za-z]{2,}", prose) and not CJK.search(message_str):
        found.append("no Chinese in the translation")
    for term in terms:
        if term.used_in(prose) and term.chinese not in message_str:
            found.append(f"term {term.english[0]!r} must be {term.chinese!r}")
        for alternative in term.avoid:
            if alternative in message_str:
                found.append(f"use {term.chinese!r}, not {alternative!r}")
    return found


def check(paths: list[Path]) -> list[str]:
    terms = load_terms()
    report = []
    for path in paths:
        with path.open("rb") as f:
            catalog = read_po(f)
        name = path.relative_to(CATALOGS) if path.is_relative_to(CATALOGS) else path
        for message in catalog:
            if not message.id:
                continue
            msgid, msgstr = str(message.id), str(message.string or "")
            issues = ["fuzzy (outdated)"] if message.fuzzy else []
            issues += problems(msgid, msgstr, terms)
            report += [f"{name}: {msgid[:70]!r}: {issue}" for issue in issues]
    return report


def summary(paths: list[Path]) -> str:
    """Message counts: total, translated, fuzzy, untranslated."""
    total = translated = fuzzy = 0
    for path in paths:
        with path.open("rb") as f:
            for message in read_po(f):
                if not message.id:
                    continue
                total += 1
                fuzzy += message.fuzzy
                translated += bool(message.string) and not message.fuzzy
    untranslated = total - translated - fuzzy
    return (
        f"{total} messages: {translated} translated, {fuzzy} fuzzy, "
        f"{untranslated} untranslated"
    )


def fix(paths: list[Path]) -> None:
    """Rewrite the catalogs with the spaces that inline markup needs."""
    from babel.messages.pofile import write_po

    for path in paths:
        with path.open("rb") as f:
            catalog = read_po(f)
        for message in catalog:
            if message.id and message.string:
                message.string = fix_spacing(str(message.string))
        with path.open("wb") as f:
            write_po(f, catalog, width=76)


def main(argv: list[str]) -> int:
    fixing = "--fix-spacing" in argv
    argv = [a for a in argv if a != "--fix-spacing"]
    paths = [Path(a).resolve() for a in argv] or sorted(CATALOGS.rglob("*.po"))
    if fixing:
        fix(paths)
    report = check(paths)
    print("\n".join(report) or f"{len(paths)} catalogs: OK")
    print(summary(paths))
    return min(len(report), 100)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
