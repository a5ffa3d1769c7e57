"""The Chinese edition's text, read from the built HTML files (no browser).

* No visible space between a Chinese character (or full-width punctuation)
  and an ``<em>``, ``<strong>`` or ``<code>`` span, on either side, in the
  prose of any zh page: Chinese typography puts none there ("是**原地**累加",
  not "是 **原地** 累加"). The catalogs write it as their page's parser needs
  it (``docs/locale/check_catalogs.py --fix-spacing``); this checks what the
  build made of it. Math and badges are boxes of their own and keep their
  spaces; links are looked through (``<a><code>`` is code).
* No code comment in English on a zh page: a Pygments comment span (``c1``,
  ``c``, ``ch``, ``cm``) of a ``div.highlight`` with two English words or
  more and no Chinese character. The failure lists each page and comment.

Both walk every page of ``zh_CN/`` (``harness.discover_pages``) except the
highlighted module sources (``_modules/``) and the API docstrings, which stay
English by design; each prints its counts. ``test_zh_text_detectors_fire``
feeds both detectors crafted HTML, so a detector that silently stopped
finding anything fails there.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import harness
from autograd_site.cjk import HAN, WIDE_CHARACTER, han

EDITION = "zh_CN"

# A word of English: two letters or more, not part of an identifier, a
# dotted name, a number or a call.
ENGLISH_WORD = re.compile(r"(?<![\w.])[A-Za-z]{2,}(?:'[a-z]+)?(?![\w.(])")

MARKUP = {"em", "strong", "code"}
# Inline elements that are looked through: their text is part of the sentence.
TRANSPARENT = {"a", "span", "abbr", "b", "i", "small", "sub", "sup", "cite", "bdi"}
VOID = {"br", "img", "hr", "input", "meta", "link", "wbr", "col", "source"}
# Not prose: code blocks, outputs, math, scripts, headerlinks, API docstrings.
SKIP_CLASSES = {
    "highlight",
    "sphx-glr-script-out",
    "cell_output",
    "headerlink",
    "MathJax",
}
SKIP_TAGS = {"pre", "script", "style", "template", "svg", "mjx-container"}
# Shown as one box: a formula, a badge. A space next to one is fine.
BOX_CLASSES = {"math", "sd-badge"}
BOX = "\ufffc"  # stands for a box in the text
COMMENT_CLASSES = {"c1", "c", "ch", "cm"}


def _classes(attrs: list[tuple[str, str | None]]) -> set[str]:
    return set((dict(attrs).get("class") or "").split())


@dataclass
class _Char:
    char: str
    inside: tuple[tuple[str, int], ...]  # the open em/strong/code elements


class TextScan(HTMLParser):
    """One pass over a page: the article's prose as runs of characters (each
    knowing which ``<em>``/``<strong>``/``<code>`` it is in; a new run at each
    block), the number of those spans, and the comments of its highlighted
    code."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.runs: list[list[_Char]] = [[]]
        self.spans: Counter[str] = Counter()
        self.comments: list[str] = []
        self._stack: list[tuple[str, str, bool]] = []  # (tag, role, highlight)
        self._markup: list[tuple[str, int]] = []
        self._count = 0
        self._comment: list[str] | None = None
        self._comment_depth = 0

    def _in(self, role: str) -> bool:
        return any(r == role for _, r, _ in self._stack)

    def _in_highlight(self) -> bool:
        return any(h for _, _, h in self._stack)

    def _break(self) -> None:
        if self.runs[-1]:
            self.runs.append([])

    def _role(self, tag: str, classes: set[str]) -> str:
        if tag == "article" and "bd-article" in classes:
            return "article"
        if tag == "dl" and "py" in classes:
            return "api"  # a docstring: English by design
        if not self._in("article"):
            return "outside"
        if self._in("skip") or self._in("box") or self._in("api"):
            return "inner"
        if tag in SKIP_TAGS or classes & SKIP_CLASSES:
            return "skip"
        if classes & BOX_CLASSES:
            self.runs[-1].append(_Char(BOX, tuple(self._markup)))
            return "box"
        if tag in MARKUP:
            self._count += 1
            self._markup.append((tag, self._count))
            self.spans[tag] += 1
            return "markup"
        if tag in TRANSPARENT:
            return "inline"
        self._break()
        return "block"

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            if self._in("article") and not self._in("skip"):
                self._break()
            return
        classes = _classes(attrs)
        if (
            self._comment is None
            and tag == "span"
            and classes & COMMENT_CLASSES
            and self._in_highlight()
            and not self._in("api")
        ):
            self._comment, self._comment_depth = [], len(self._stack)
        role = self._role(tag, classes)
        self._stack.append((tag, role, "highlight" in classes))

    def handle_endtag(self, tag: str) -> None:
        # Close up to the matching start tag (HTML may omit some end tags).
        for index in range(len(self._stack) - 1, -1, -1):
            if self._stack[index][0] == tag:
                break
        else:
            return
        while len(self._stack) > index:
            _, role, _ = self._stack.pop()
            if role == "markup":
                self._markup.pop()
            elif role == "block":
                self._break()
        if self._comment is not None and len(self._stack) <= self._comment_depth:
            self.comments.append("".join(self._comment).strip())
            self._comment = None

    def handle_data(self, data: str) -> None:
        if self._comment is not None:
            self._comment.append(data)
        if not self._in("article") or self._in("api"):
            return
        if self._in("skip") or self._in("box"):
            return
        inside = tuple(self._markup)
        self.runs[-1].extend(_Char(c, inside) for c in data)


def scan(markup: str) -> TextScan:
    parser = TextScan()
    parser.feed(markup)
    parser.close()
    return parser


def _show(run: list[_Char], start: int, end: int) -> str:
    """``run[start:end]`` with its markup as tags (for messages)."""
    out, inside = [], ()
    for char in run[max(start, 0) : end]:
        if char.inside != inside:
            closing = [t for t in inside if t not in char.inside]
            opening = [t for t in char.inside if t not in inside]
            out += [f"</{tag}>" for tag, _ in reversed(closing)]
            out += [f"<{tag}>" for tag, _ in opening]
            inside = char.inside
        out.append(char.char)
    out += [f"</{tag}>" for tag, _ in reversed(inside)]
    return "".join(out)


def spaced_markup(markup: str) -> list[str]:
    """Each visible space between a Chinese character (or full-width
    punctuation mark) and an em/strong/code span in the article's prose,
    shown in context: ``'用 <code>x</code>'``. The Chinese character may be
    the edge of another span (``<strong>边</strong> <code>x</code>``); a space
    between a span and a Latin word is the usual one between Chinese and
    Latin text (``autograd <strong>记录</strong>``), not counted."""
    found = []
    for run in scan(markup).runs:
        i = 0
        while i < len(run):
            if not run[i].char.isspace():
                i += 1
                continue
            j = i
            while j < len(run) and run[j].char.isspace():
                j += 1
            if i > 0 and j < len(run):
                left, right = run[i - 1], run[j]
                opens = set(right.inside) - set(left.inside)  # a span starts
                closes = set(left.inside) - set(right.inside)  # one ends
                if (WIDE_CHARACTER.match(left.char) and opens) or (
                    WIDE_CHARACTER.match(right.char) and closes
                ):
                    found.append(_show(run, i - 16, j + 16).replace("\n", " "))
            i = j
    return found


def english_comments(markup: str) -> list[str]:
    """The comments of the page's highlighted code that are English: two
    English words or more, and no Chinese character."""
    return [
        comment
        for comment in scan(markup).comments
        if not han(comment) and len(ENGLISH_WORD.findall(comment)) >= 2
    ]


def zh_pages(site: Path) -> list[str]:
    """Every page of the zh edition, but the highlighted module sources."""
    root = harness.edition_root(site, EDITION)
    return [p for p in harness.discover_pages(root) if not p.startswith("_modules/")]


def _read(site: Path, page: str) -> str:
    return (harness.edition_root(site, EDITION) / page).read_text(encoding="utf-8")


def test_zh_no_space_between_chinese_and_inline_markup(site: Path) -> None:
    pages = zh_pages(site)
    assert pages, f"no pages in {harness.edition_root(site, EDITION)}"
    problems: dict[str, list[str]] = {}
    spans: Counter[str] = Counter()
    for page in pages:
        markup = _read(site, page)
        spans += scan(markup).spans
        if found := spaced_markup(markup):
            problems[page] = found
    total = sum(len(found) for found in problems.values())
    print(
        f"\n{EDITION}: {len(pages)} pages, {spans['em']} <em>, {spans['strong']} "
        f"<strong>, {spans['code']} <code> spans in prose; {total} with a visible "
        f"space next to Chinese text, on {len(problems)} pages"
    )
    for page, found in problems.items():
        print(f"  {page}: {len(found)}")
    assert not problems, "a visible space between Chinese text and inline markup:\n" + (
        "\n".join(
            f"{page}: {snippet!r}" for page, f in problems.items() for snippet in f
        )
    )


def test_zh_code_comments_are_chinese(site: Path) -> None:
    pages = zh_pages(site)
    assert pages, f"no pages in {harness.edition_root(site, EDITION)}"
    english: dict[str, list[str]] = {}
    comments = chinese = 0
    for page in pages:
        markup = _read(site, page)
        found = scan(markup).comments
        comments += len(found)
        chinese += sum(han(c) for c in found)
        if bad := english_comments(markup):
            english[page] = bad
    total = sum(len(bad) for bad in english.values())
    print(
        f"\n{EDITION}: {comments} code comments on {len(pages)} pages: {chinese} "
        f"with Chinese, {total} in English (on {len(english)} pages)"
    )
    for page, bad in english.items():
        print(f"  {page}: {len(bad)}")
    assert not english, f"{total} code comments in English:\n" + "\n".join(
        f"{page}: {comment}" for page, bad in english.items() for comment in bad
    )


# -- the detectors fire -----------------------------------------------------------


def _page(article: str) -> str:
    return (
        '<html lang="zh-CN"><body><nav><em>导航</em> <code>x</code></nav>'
        f'<article class="bd-article">{article}</article></body></html>'
    )


def test_zh_text_detectors_fire() -> None:
    spaced = _page(
        "<p>梯度是 <strong>原地</strong> 累加的。</p>"  # 2: both sides
        '<p>调用 <a href="x.html"><code class="docutils literal"><span class="pre">'
        "loss.backward()</span></code></a>。</p>"  # 1: through a link
        "<p><em>叶子</em> 张量</p>"  # 1: after
        "<p>用 <code>x.grad</code> （即梯度）</p>"  # 2: incl. before "（"
        "<p>一条<strong>边</strong> <code>(node, input_nr)</code>指明</p>"  # 1
    )
    found = spaced_markup(spaced)
    print(f"\ncrafted page with 7 spaced spans: the detector finds {len(found)}")
    assert len(found) == 7, found
    assert found[2].startswith("调用 <code>loss.backward"), found
    fine = _page(
        "<p>梯度是<strong>原地</strong>累加的，<code>x</code>（即梯度）。</p>"
        "<p>the <em>leaf</em> tensor, autograd <strong>记录</strong>, <code>x</code>和"
        '<span class="sd-badge">不成立</span> <code>retain_graph=True</code></p>'
        '<p>其中 <span class="math notranslate">\\(x\\)</span> 是</p>'
        '<div class="highlight"><pre>梯度 <span class="n">x</span></pre></div>'
        "<dl class='py function'><dd><p>文档 <code>x</code></p></dd></dl>"
    )
    assert spaced_markup(fine) == []

    code = _page(
        '<div class="highlight-python notranslate"><div class="highlight"><pre>'
        '<span class="n">y</span> <span class="o">=</span> <span class="n">x</span>'
        '  <span class="c1"># in place: y is the tensor exp saved</span>\n'
        '<span class="c1"># 原地修改：y 是 exp 保存的张量</span>\n'
        '<span class="c1"># (A)</span>\n'
        '<span class="c1"># noqa: E501</span>\n'
        '<span class="ch">#!/usr/bin/env python shebang line</span>\n'
        '<span class="cm">"""two English words"""</span>\n'
        '<span class="sd">"""a docstring, not a comment"""</span>\n'
        "</pre></div></div>"
        '<p>正文 <span class="c1"># not in code: prose</span></p>'
    )
    found = english_comments(code)
    print(f"crafted code with 3 English comments: the detector finds {len(found)}")
    assert found == [
        "# in place: y is the tensor exp saved",
        "#!/usr/bin/env python shebang line",
        '"""two English words"""',
    ], found


HAN_NEXT_TO_LATIN = re.compile(f"[{HAN}][A-Za-z0-9(]|[A-Za-z0-9)=_][{HAN}]")
CARD_TITLE = re.compile(r'<div class="sphx-glr-thumbnail-title">(.*?)</div>', re.S)


def titles_as_text(markup: str) -> list[str]:
    """A Chinese page's titles shown as text: the prose of its headings (its
    inline code is boxed: check_catalogs.py's rule), its window title, the
    links to the previous and next pages, and its tutorial cards' titles."""
    article = markup[markup.find("<article") : markup.find("</article>")]
    found = [m[2] for m in re.finditer(r"<(h[1-6])\b[^>]*>(.*?)</\1>", article, re.S)]
    found = [re.sub(r"<code\b.*?</code>", " ", text, flags=re.S) for text in found]
    found += re.findall(r"<title>(.*?)</title>", markup, re.S)
    found += re.findall(r'<p class="prev-next-title">(.*?)</p>', markup, re.S)
    found += CARD_TITLE.findall(markup)
    return [re.sub(r"<[^>]+>", "", text) for text in found]


def test_chinese_titles_space_latin_words(site: Path):
    """In a Chinese title read as text, a Latin word (autograd, backward(),
    PyTorch 2.14) stands one space from the Chinese around it, as the
    catalogs' prose writes it."""
    root = harness.edition_root(site, "zh_CN")
    glued, spaced = [], 0
    for path in harness.discover_pages(root):
        for text in titles_as_text((root / path).read_text(encoding="utf-8")):
            if HAN_NEXT_TO_LATIN.search(text):
                glued.append(f"{path}: {text.strip()}")
            spaced += len(re.findall(f"[{HAN}] [A-Za-z0-9]", text))
    assert spaced > 20, "hardly a Latin word in the Chinese titles: the check is empty"
    assert glued == [], "\n".join(sorted(set(glued)))
