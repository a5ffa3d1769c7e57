"""What the package notes about a graph, as data, said in each language.

A module's or a fold's summary, a node's marks, a leaf's label: each is
:data:`Words`, clauses of phrases, a phrase being a key of the table of words
(package data: ``_html/notes.json``, one table per language) and its values.
:func:`.format_graph`, :func:`.to_dot` and :func:`.draw_graph` print them in
English (:func:`english`); :func:`.to_html`'s page carries them as they are,
with the table, and its script says them in the reader's language. So no
note is translated by matching its English text, and a language is one more
table.

A value is a string (a module path, a node kind: never translated; ``""``
reads as the table's word for the model), an int (written ``1,234``), or a
list of phrases (said one by one, joined as the language lists things). A
template that is a pair is ``[one, many]``, chosen by the phrase's first
int.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from importlib import resources
from typing import Any

from autograd_notes.labels import visible

__all__ = ["Phrase", "Text", "Words", "english", "kinds_clause", "say"]

Phrase = tuple[Any, ...]  # (key, value, ...): str and int values
Words = list[list[Phrase]]  # clauses of phrases
Text = str | Words  # a title or note: as it is, or words to say

_FIELD = re.compile(r"\{(\d)\}")


@cache
def tables() -> dict[str, Any]:
    """Every language's table: ``{"en": {"phrase": ", ", ..., "notes": {...}}}``."""
    raw = (resources.files("autograd_notes") / "_html" / "notes.json").read_text(
        "utf-8"
    )
    found: dict[str, Any] = json.loads(raw)
    return found


def _phrase(phrase: Phrase, table: dict[str, Any]) -> str:
    key, *values = phrase
    template = table["notes"][key]
    if isinstance(template, list):
        count = next(v for v in values if isinstance(v, int))
        template = template[0] if count == 1 else template[1]
    shown = [_value(v, table) for v in values]
    return _FIELD.sub(lambda m: shown[int(m.group(1))], template)


def _value(value: Any, table: dict[str, Any]) -> str:
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, list):
        listed: str = table["list"]
        return listed.join(_phrase(p, table) for p in value)
    return str(value) or str(table["model"])


def say(text: Text, language: str) -> str:
    """``text`` in ``language`` (a key of the table: "en", "zh").

    >>> say([[("moduleNodes", 4), ("kindTimes", "TBackward0", 2)]], "zh")
    '模块：4 个节点，TBackward0 ×2'
    """
    if isinstance(text, str):
        return text
    table = tables()[language]
    clause: str = table["clause"]
    return clause.join(
        table["phrase"].join(_phrase(p, table) for p in clause) for clause in text
    )


def english(text: Text) -> str:
    """``text`` in English, as the printed outputs show it.

    >>> english([[("foldCalls", 3), ("nodesEach", 1)], [("leaves", 2)]])
    'fold: 3 calls, 1 node each; 2 leaves'
    """
    return say(text, "en")


def kinds_clause(found: Counter[str]) -> list[Phrase]:
    """The three commonest kinds (``MulBackward0 ×5``), then how many more: a list.

    >>> english([kinds_clause(Counter({"Mul": 2, "Sum": 1}))])
    'Mul ×2, Sum'
    >>> say([kinds_clause(Counter({"Mul": 2, "Sum": 1}))], "zh")
    'Mul ×2、Sum'
    """
    shown: list[Phrase] = [
        ("kind", visible(k)) if t == 1 else ("kindTimes", visible(k), t)
        for k, t in found.most_common(3)
    ]
    if len(found) > 3:
        shown.append(("moreKinds", len(found) - 3))
    return [("kinds", shown)]
