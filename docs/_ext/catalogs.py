"""Reading the edition's gettext catalogs: a library, not an extension.

Jobs (no ``setup``; the extensions that translate import it):

* :func:`catalog_files`: the ``.po`` files of the edition being built
  (``docs/locale/<lang>/LC_MESSAGES/``);
* :func:`messages`: every current translation in them (not fuzzy, not
  empty), English message -> translation;
* :func:`plain` and :func:`unmarked`: a message as text to compare with what
  sphinx-gallery writes into raw HTML (a tutorial card's title and tooltip),
  and a translation without its inline markup, to write there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from babel.messages.pofile import read_po
from sphinx.application import Sphinx


def catalog_files(app: Sphinx) -> Iterator[Path]:
    """The ``.po`` files of the language being built, sorted by path."""
    for folder in app.config.locale_dirs:
        base = Path(app.srcdir, folder, app.config.language, "LC_MESSAGES")
        yield from sorted(base.rglob("*.po"))


def messages(app: Sphinx) -> dict[str, str]:
    """Every current translation of the site, English message -> translation."""
    found: dict[str, str] = {}
    for po in catalog_files(app):
        with po.open("rb") as f:
            for message in read_po(f):
                if message.id and message.string and not message.fuzzy:
                    found[str(message.id)] = str(message.string)
    return found


def plain(text: str) -> str:
    """Letters and digits only: how a message compares with a tooltip."""
    text = re.sub(r":\w+:`([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", text)
    return "".join(ch for ch in text.lower() if ch.isalnum())


def unmarked(text: str) -> str:
    """A translation as plain text: inline markup and escaped spaces removed."""
    text = re.sub(r":\w+:`([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", text)
    text = text.replace("\\ ", "")  # reST's separator next to Chinese text
    return text.replace("``", "").replace("**", "").replace("*", "")
