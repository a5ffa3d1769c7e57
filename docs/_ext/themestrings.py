"""The theme's interface strings, in the zh_CN edition's own words.

One job: :func:`theme_strings` (``config-inited``) puts our translations of
sphinx-book-theme's strings (``locale/<lang>/LC_MESSAGES/booktheme.po``, kept
by hand) first in the theme's catalog, with the theme's own as the fallback.
"""

from __future__ import annotations

import gettext
import io
from pathlib import Path
from typing import Any

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from sphinx.application import Sphinx
from sphinx.config import Config


def theme_strings(app: Sphinx, config: Config) -> None:
    """Our translations of sphinx-book-theme's strings come first.

    The theme reads them from its ``booktheme`` catalog only, and computes some
    (the header buttons) as soon as the builder starts, before Sphinx compiles
    our ``.po`` files. So ours (``locale/<lang>/LC_MESSAGES/booktheme.po``) is
    read here, from the ``.po``, and becomes that catalog; the theme's own,
    loaded later, joins it as the fallback. Ours adds what the theme's lacks
    and corrects what it has in another usage (its zh_CN is Taiwan's).
    """
    if config.language == "en":
        return
    from sphinx import locale

    for folder in config.locale_dirs:
        po = Path(app.srcdir, folder, config.language, "LC_MESSAGES", "booktheme.po")
        if not po.exists():
            continue
        with po.open("rb") as f:
            catalog = read_po(f)
        compiled = io.BytesIO()
        write_mo(compiled, catalog)
        compiled.seek(0)
        ours = gettext.GNUTranslations(compiled)
        theirs = locale.translators.get(("general", "booktheme"))
        if theirs is not None and theirs.__class__ is not gettext.NullTranslations:
            ours.add_fallback(theirs)
        locale.translators["general", "booktheme"] = ours


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", theme_strings)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
