"""Comments in code, found and translated (``autograd_site/comments.py``).

* Comments are found by the tokenizer (a ``#`` in a string is no comment),
  one message per comment, a run of full-line comments one message; pragmas
  and comments without a word are left alone.
* A translation replaces a trailing comment in place and re-wraps a run no
  wider than the code (a Chinese character takes two columns), never inside a
  word or inline code; the code itself does not change.
"""

from __future__ import annotations

import io
import tokenize

import pytest
from autograd_site.cjk import width
from autograd_site.comments import (
    CommentError,
    find_comments,
    translate_comments,
    without_comments,
    wrap,
)


def messages(code: str, syntax: str = "python") -> list[str]:
    return [c.message for c in find_comments(code, syntax)]


def code_tokens(code: str) -> list[tuple[int, str]]:
    """The code as the tokenizer sees it, without comments and blank lines."""
    skip = {tokenize.COMMENT, tokenize.NL}
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    return [(t.type, t.string) for t in tokens if t.type not in skip]


# -- Finding comments --------------------------------------------------------------


def test_a_hash_inside_a_string_is_not_a_comment() -> None:
    code = (
        's = "# not a comment"  # a real one\n'
        't = \'#\' + """\n'
        "# still inside the string\n"
        '"""\n'
        'u = f"{s!r}#{t}"  # after an f-string\n'
    )
    assert messages(code) == ["a real one", "after an f-string"]


def test_each_trailing_comment_is_one_message() -> None:
    code = "x = 1  # the first\ny = 2  # the second\n"
    found = find_comments(code)
    assert [c.message for c in found] == ["the first", "the second"]
    assert all(c.trailing for c in found)
    assert [(c.start, c.column) for c in found] == [(0, 7), (1, 7)]


def test_a_run_of_full_line_comments_is_one_message() -> None:
    code = (
        "# w = w - 0.1 * w.grad would be recorded,\n"
        "#   making w a non-leaf with a grad_fn\n"
        "with torch.no_grad():\n"
        "    # in place and unrecorded:\n"
        "    # w stays the same leaf\n"
        "    w -= 0.1 * w.grad  # a trailing comment is its own message\n"
    )
    found = find_comments(code)
    assert [c.message for c in found] == [
        "w = w - 0.1 * w.grad would be recorded, making w a non-leaf with a grad_fn",
        "in place and unrecorded: w stays the same leaf",
        "a trailing comment is its own message",
    ]
    assert [(c.start, c.end, c.column, c.trailing) for c in found] == [
        (0, 1, 0, False),
        (3, 4, 4, False),
        (5, 5, 23, True),
    ]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        pytest.param("# one\n\n# two", ["one", "two"], id="blank-line"),
        pytest.param("# one\n#\n# two", ["one", "two"], id="bare-hash"),
        pytest.param("# one\nx = 1\n# two", ["one", "two"], id="code"),
        pytest.param(
            "if x:\n    # one\n# two\n    pass", ["one", "two"], id="indentation"
        ),
        pytest.param("x = 1  # one\n# two", ["one", "two"], id="trailing-first"),
        pytest.param("# one\nx = 1  # two", ["one", "two"], id="trailing-next"),
    ],
)
def test_what_ends_a_run(code: str, expected: list[str]) -> None:
    assert messages(code) == expected


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa: E402",
        "# type: ignore[attr-defined]",
        "# sphinx_gallery_start_ignore",
        "# sphinx_gallery_thumbnail_number = 2",
        "# %%",
        "#!/usr/bin/env python",
        "# ----------",
        "# (A)",
        "# 12 * w**2 * v = [12, 0, -108]",
    ],
)
def test_pragmas_and_comments_without_a_word_are_not_messages(comment: str) -> None:
    assert messages(f"x = 1  {comment}\n{comment}\ny = 2\n") == []


def test_a_pragma_splits_a_run() -> None:
    code = "# before\n# sphinx_gallery_start_ignore\n# after\n"
    assert messages(code) == ["before", "after"]


def test_a_console_session_keeps_its_prompts_out_of_the_messages() -> None:
    code = (
        ">>> x = 1  # one\n"
        ">>> # two,\n"
        ">>> # continued\n"
        ">>> for i in range(2):\n"
        "...     print(i)  # three\n"
        "0\n"
        "it's output, # not a comment\n"
    )
    found = find_comments(code)
    assert [c.message for c in found] == ["one", "two, continued", "three"]
    assert [c.trailing for c in found] == [True, False, True]


def test_shell_comments() -> None:
    code = (
        "pip install nox     # the build's one tool\n"
        "echo '# quoted' \"#too\" a#b  # a real one\n"
        "# full line\n"
        "# and its sequel\n"
    )
    assert messages(code, "shell") == [
        "the build's one tool",
        "a real one",
        "full line and its sequel",
    ]


def test_code_that_does_not_tokenize_raises() -> None:
    with pytest.raises(CommentError, match="tokenize"):
        find_comments('s = """never closed\n# in the string\n')


# -- Writing translations -------------------------------------------------------


def test_cjk_characters_take_two_columns() -> None:
    assert width("grad") == 4
    assert width("梯度") == 4
    assert width("w 的梯度，") == 10  # full-width punctuation too
    assert width("（）") == 4


def test_wrap_breaks_between_chinese_characters_and_at_spaces() -> None:
    text = (
        "调用 ``loss.backward()`` 之后，叶子张量 w_long_name 的梯度"
        "累加到 ``w.grad`` 中。"
    ) * 3
    for room in range(12, 60):
        lines = wrap(text, room)
        # A piece longer than the room sticks out; nothing else does.
        assert all(
            width(line) <= max(room, width("``loss.backward()``")) for line in lines
        ), (room, lines)
        # Nothing is lost but the spaces a line break replaced...
        assert "".join(lines).replace(" ", "") == text.replace(" ", "")
        # ...and no word or inline code is split.
        for line in lines:
            assert line.count("``") % 2 == 0, lines
            assert not line.startswith(("，", "。", "name", "_name")), lines
        assert "w_long_name" in " ".join(lines)


def test_a_trailing_comment_is_replaced_in_place() -> None:
    code = "x = torch.ones(2)  # a leaf\ny = x * 2  # not a leaf\n"
    lookup = {"a leaf": "叶子张量", "not a leaf": "非叶子张量：由运算得到"}.get
    assert translate_comments(code, lookup) == (
        "x = torch.ones(2)  # 叶子张量\ny = x * 2  # 非叶子张量：由运算得到\n"
    )


def test_a_run_is_rewrapped_with_its_indentation_no_wider_than_the_code() -> None:
    code = (
        "with torch.no_grad():\n"
        "    # w = w - 0.1 * w.grad would be recorded, making w a\n"
        "    # non-leaf with a grad_fn; in place, nothing is recorded\n"
        "    w -= 0.1 * w.grad\n"
        's = "# no comment"  # kept: no translation\n'
    )
    chinese = (
        "``w = w - 0.1 * w.grad`` 会被记录下来，使 w 成为一个带 ``grad_fn`` 的"
        "非叶子张量；原地更新则什么都不记录，w 仍是同一个叶子张量。"
    )
    english = find_comments(code)[0].message
    result = translate_comments(code, {english: chinese}.get)
    lines = result.split("\n")
    comment = [line for line in lines if line.startswith("    # ")]
    assert len(comment) > 2  # the Chinese needs more lines than the English
    assert all(width(line) <= max(map(width, code.split("\n"))) for line in lines)
    assert "".join(line[6:] for line in comment).replace(" ", "") == chinese.replace(
        " ", ""
    )
    assert all(line.count("``") % 2 == 0 for line in comment)
    # The code is the same code.
    assert code_tokens(result) == code_tokens(code)
    assert without_comments(result) == without_comments(code)
    assert 's = "# no comment"  # kept: no translation' in lines


def test_a_short_comment_in_narrow_code_still_gets_room() -> None:
    code = "x = 1\n# why\ny = x\n"
    result = translate_comments(code, {"why": "因为下一行要用到它，所以先算出来"}.get)
    assert result == "x = 1\n# 因为下一行要用到它，\n# 所以先算出来\ny = x\n"


def test_without_a_translation_nothing_changes() -> None:
    code = "x = 1  # one\n# two\n# three\n"
    assert translate_comments(code, {}.get) == code
    assert translate_comments(code, {"one": ""}.get) == code


def test_a_console_session_keeps_its_prompts() -> None:
    code = ">>> x = 1  # one\n>>> # two\n>>> y = x\n"
    lookup = {"one": "一", "two": "二"}.get
    assert translate_comments(code, lookup) == ">>> x = 1  # 一\n>>> # 二\n>>> y = x\n"


def test_shell_comments_are_translated() -> None:
    code = "nox -s docs   # both editions\nnox -s tests  # the tests\n"
    lookup = {"both editions": "两个版本", "the tests": "测试"}.get
    assert translate_comments(code, lookup, "shell") == (
        "nox -s docs   # 两个版本\nnox -s tests  # 测试\n"
    )
