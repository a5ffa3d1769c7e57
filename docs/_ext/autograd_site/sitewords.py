"""Our code's words in each edition's language (``site.po``), read without Sphinx.

A build gets them from ``sphinx.locale.get_translation("site")`` (``catalogs``
installs ``site.po`` for it); what runs where no Sphinx does, or must not
depend on the language being built (the PDF printer, the alt text of a
drawing, the tests and the browser tests), reads the same catalog here:
:func:`site_words` (a language's catalog) and :func:`say` (one message).
"""

from functools import cache

from babel.messages.pofile import read_po

from .siteconfig import ROOT, SOURCE


@cache
def site_words(language: str) -> dict[str, str]:
    """``site.po`` of ``language``: English -> its words, translated entries only."""
    if language == SOURCE:
        return {}
    po = ROOT / "docs" / "locale" / language / "LC_MESSAGES" / "site.po"
    with po.open("rb") as f:
        return {
            str(m.id): str(m.string)
            for m in read_po(f)
            if m.id and m.string and not m.fuzzy
        }


def say(language: str, message: str) -> str:
    """``message`` in ``language``; ``KeyError`` where ``site.po`` lacks it.

    >>> say("en", "Contents"), say("zh_CN", "Contents")
    ('Contents', '目录')
    """
    return message if language == SOURCE else site_words(language)[message]
