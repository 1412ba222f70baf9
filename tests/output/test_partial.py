"""PartialJson: every partial of a streamed JSON answer is prefix-consistent with the final value,
whatever the split; the final value is orjson's; invalid JSON is a PartialJsonError."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reactloop._errors import ErrorCode, PartialJsonError, ReactLoopError
from reactloop._output._partial import (
    MAX_DEPTH,
    UNCHANGED,
    PartialJson,
    iter_partials,
    strip_fences,
)
from tests.helpers.strategies import (
    Cuts,
    cuts,
    damaged_json_texts,
    examples,
    fenced_answers,
    json_documents,
)


def pieces(text: str | bytes, points: Sequence[int]) -> list[str | bytes]:
    """`text` cut at `points` (offsets, any order, repeats allowed)."""
    bounds = [0, *sorted({p for p in points if 0 < p < len(text)}), len(text)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


def dumped(value: object) -> bytes:
    """Exact comparison: 1, 1.0 and True differ, and so does key order."""
    return orjson.dumps(value)


def is_prefix(part: object, whole: object, *, growing: bool) -> bool:
    """`part` may show `whole`: equal, except along the last path being written, where an object
    may lack its later keys, an array its later items, and (growing) a string its end."""
    if isinstance(whole, dict):
        if not isinstance(part, dict) or list(part) != list(whole)[: len(part)]:
            return False
        return _items_are_prefix(list(part.values()), list(whole.values()), growing=growing)
    if isinstance(whole, list):
        if not isinstance(part, list) or len(part) > len(whole):
            return False
        return _items_are_prefix(part, whole, growing=growing)
    if growing and isinstance(whole, str):
        return isinstance(part, str) and whole.startswith(part)
    return dumped(part) == dumped(whole)


def _items_are_prefix(part: list[object], whole: list[object], *, growing: bool) -> bool:
    if not part:
        return True
    done = all(dumped(p) == dumped(w) for p, w in zip(part[:-1], whole, strict=False))
    return done and is_prefix(part[-1], whole[len(part) - 1], growing=growing)


def stream(deltas: Sequence[str | bytes], *, growing: bool = False) -> list[object]:
    """Each partial `feed` returned, then the final value."""
    return list(iter_partials(deltas, growing_strings=growing))


def assert_consistent(partials: list[object], text: str | bytes, *, growing: bool) -> None:
    final = orjson.loads(text)
    assert dumped(partials[-1]) == dumped(final)
    for partial in partials:
        assert is_prefix(partial, final, growing=growing), (partial, final)
    for earlier, later in itertools.pairwise(partials[:-1]):
        assert is_prefix(earlier, later, growing=growing), (earlier, later)
        assert dumped(earlier) != dumped(later), "a partial repeats the one before it"


# --- every split of every document --------------------------------------------------------------


@settings(max_examples=examples(400))
@given(text=json_documents, where=cuts, growing=st.booleans())
@example(
    text='{"a": "\\u00e9\\ud83d\\ude00", "b": [-1.5e-3, true]}', where=Cuts((), 0), growing=True
)
def test_any_split_gives_prefix_consistent_partials_ending_in_the_value(
    text: str, where: Cuts, growing: bool
) -> None:
    partials = stream(pieces(text, where.points(len(text))), growing=growing)
    assert_consistent(partials, text, growing=growing)


@settings(max_examples=examples(300))
@given(text=json_documents, where=cuts, growing=st.booleans())
def test_any_byte_split_even_inside_a_character_gives_the_same(
    text: str, where: Cuts, growing: bool
) -> None:
    data = text.encode()
    partials = stream(pieces(data, where.points(len(data))), growing=growing)
    assert_consistent(partials, data, growing=growing)


@settings(max_examples=examples(150))
@given(text=json_documents, growing=st.booleans())
def test_one_character_deltas_show_the_same_final_value(text: str, growing: bool) -> None:
    partials = stream(list(text), growing=growing)
    assert_consistent(partials, text, growing=growing)


@settings(max_examples=examples(400))
@given(text=damaged_json_texts(), where=cuts)
def test_text_is_refused_exactly_when_orjson_refuses_it(text: str, where: Cuts) -> None:
    try:
        expected = orjson.loads(text)
    except orjson.JSONDecodeError:
        with pytest.raises(PartialJsonError):
            stream(pieces(text, where.points(len(text))))
    else:
        assert dumped(stream(pieces(text, where.points(len(text))))[-1]) == dumped(expected)


ESCAPES = [
    '"\\ud83d\\ude00"',
    '"\\uD83D\\uDE00"',
    '"\\ud800"',
    '"\\udc00"',
    '"\\ud800\\u0041"',
    '"\\ud800\\ud800"',
    '"\\ud83dx"',
    '"\\ud83d\\ude0"',
    '"\\u00e"',
    '"\\u00g0"',
    '"\\x"',
    '"a\\"',
    '"\\"\\\\\\/\\b\\f\\n\\r\\t"',
]


@pytest.mark.parametrize("text", [f"[{s}, 1]" for s in ESCAPES])
def test_escapes_cut_anywhere_read_as_orjson_reads_them(text: str) -> None:
    try:
        expected: object = orjson.loads(text)
    except orjson.JSONDecodeError:
        expected = PartialJsonError
    for n in (1, 2):
        for where in itertools.combinations(range(1, len(text)), n):
            if expected is PartialJsonError:
                with pytest.raises(PartialJsonError):
                    stream(pieces(text, where), growing=True)
            else:
                assert stream(pieces(text, where), growing=True)[-1] == expected


# --- what a partial shows -----------------------------------------------------------------------


def test_a_number_shows_only_once_complete() -> None:
    parser = PartialJson()
    assert parser.feed('{"n": 12') == {}
    assert parser.feed("3") is UNCHANGED
    assert parser.feed(", ") == {"n": 123}


def test_a_bare_number_shows_at_the_end() -> None:
    parser = PartialJson()
    assert parser.feed("-4") is UNCHANGED
    assert parser.finish() == -4


def test_literals_show_only_once_complete() -> None:
    parser = PartialJson()
    assert parser.feed("[tr") == []
    assert parser.feed("ue, nu") == [True]
    assert parser.feed("ll") == [True, None]


def test_a_key_shows_only_with_its_value() -> None:
    parser = PartialJson()
    assert parser.feed('{"na') == {}
    assert parser.feed('me": "Ad') is UNCHANGED
    assert parser.feed('a"') == {"name": "Ada"}


def test_containers_show_as_they_open() -> None:
    assert stream(['{"a": [', '{"b": ', "1}]}"]) == [
        {"a": []},
        {"a": [{}]},
        {"a": [{"b": 1}]},
        {"a": [{"b": 1}]},
    ]


def test_growing_strings_show_their_text_as_it_arrives_but_keys_do_not() -> None:
    parser = PartialJson(growing_strings=True)
    assert parser.feed('{"ti') == {}
    assert parser.feed('tle": "') == {"title": ""}
    assert parser.feed("Hel") == {"title": "Hel"}
    assert parser.feed("lo") == {"title": "Hello"}
    assert parser.feed("\\u00") is UNCHANGED
    assert parser.feed('e9"}') == {"title": "Helloé"}


def test_a_surrogate_pair_cut_between_its_escapes_waits_for_both() -> None:
    parser = PartialJson(growing_strings=True)
    assert parser.feed('"\\ud83d') == ""
    assert parser.feed('\\ude00"') == "😀"


def test_a_character_cut_between_its_bytes_waits_for_the_rest() -> None:
    data = '["é"]'.encode()
    parser = PartialJson(growing_strings=True)
    assert parser.feed(data[:3]) == [""]
    assert parser.feed(data[3:]) == ["é"]
    assert parser.finish() == ["é"]


def test_whitespace_alone_shows_nothing() -> None:
    parser = PartialJson()
    assert parser.feed(" \n\t ") is UNCHANGED
    assert current(parser) is UNCHANGED
    assert parser.feed("[") == []
    assert parser.feed(" \r\n") is UNCHANGED
    assert current(parser) == []


def current(parser: PartialJson) -> object:
    """The parser's value now (a function: mypy would keep `parser.value` narrowed)."""
    return parser.value


def test_leading_and_trailing_whitespace_are_allowed() -> None:
    assert stream(["\n  [1]", " \n\t"])[-1] == [1]


def test_a_later_duplicate_key_wins_as_in_orjson() -> None:
    assert stream(['{"a": 1, "a": 2}'])[-1] == orjson.loads('{"a": 1, "a": 2}') == {"a": 2}


def test_partials_are_snapshots_later_deltas_do_not_change() -> None:
    parser = PartialJson()
    first = parser.feed('{"a": [1, ')
    parser.feed('2], "b": 3}')
    assert first == {"a": [1]}


# --- errors -------------------------------------------------------------------------------------


def test_invalid_json_raises_a_typed_error_naming_the_place() -> None:
    parser = PartialJson()
    parser.feed('{"a": 1')
    with pytest.raises(PartialJsonError) as caught:
        parser.feed(" 2}")
    error = caught.value
    assert isinstance(error, ReactLoopError)
    assert error.code is ErrorCode.INVALID_RESPONSE
    assert (error.offset, error.got) == (8, "2}")
    assert "character 8" in str(error) and "comma" in error.rule


@pytest.mark.parametrize("text", ["[tx", "[nul ", "fa1", "[1, -x", '{"a": tr}', "```"])
def test_an_error_is_raised_by_the_delta_that_shows_it(text: str) -> None:
    with pytest.raises(PartialJsonError):
        PartialJson().feed(text)


def test_a_failed_parser_keeps_raising_the_same_error() -> None:
    parser = PartialJson()
    with pytest.raises(PartialJsonError) as caught:
        parser.feed("[1 x")
    with pytest.raises(PartialJsonError) as again:
        parser.feed("]")
    assert again.value is caught.value
    with pytest.raises(PartialJsonError):
        parser.finish()


@pytest.mark.parametrize("text", ["", "   ", "[1, 2", '{"a": "b', '{"a"', "tru", '"\\', "[{}"])
def test_an_answer_ending_early_is_an_error_at_the_end(text: str) -> None:
    parser = PartialJson()
    parser.feed(text)
    with pytest.raises(PartialJsonError, match="at its end: the answer ended early"):
        parser.finish()


@pytest.mark.parametrize("text", ["-", "[1.", "2e", "[-"])
def test_a_number_cut_by_the_end_is_not_a_number(text: str) -> None:
    parser = PartialJson()
    assert parser.feed(text) in (UNCHANGED, [])
    with pytest.raises(PartialJsonError, match="not a JSON number"):
        parser.finish()


def test_nesting_deeper_than_orjson_allows_is_refused() -> None:
    deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(deep)
    with pytest.raises(PartialJsonError, match="nest at most"):
        stream([deep])
    value = stream(["[" * MAX_DEPTH + "]" * MAX_DEPTH])[-1]
    for _ in range(MAX_DEPTH - 1):
        assert isinstance(value, list) and len(value) == 1
        value = value[0]
    assert value == []


def test_bytes_that_are_not_utf8_are_refused() -> None:
    with pytest.raises(PartialJsonError, match="UTF-8"):
        stream([b'["\xff"]'])


def test_a_cut_multibyte_character_at_the_end_is_refused() -> None:
    parser = PartialJson()
    parser.feed('"é'.encode()[:-1])
    with pytest.raises(PartialJsonError, match="UTF-8"):
        parser.finish()


# --- code fences --------------------------------------------------------------------------------


@settings(max_examples=examples(200))
@given(text=json_documents, where=cuts, language=st.sampled_from(["json", "JSON", "", " json"]))
def test_a_fenced_answer_streams_like_the_bare_one(text: str, where: Cuts, language: str) -> None:
    fenced = f"```{language}\n{text}\n```\n"
    deltas = pieces(fenced, where.points(len(fenced)))
    assert_consistent(list(iter_partials(deltas, fences=True)), text, growing=False)


def test_a_fence_is_refused_unless_asked_for() -> None:
    with pytest.raises(PartialJsonError, match="a value starts with"):
        stream(["```json\n[1]\n```"])


def test_a_missing_closing_fence_is_accepted() -> None:
    assert list(iter_partials(["```json\n[1]"], fences=True))[-1] == [1]


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("```json\n[1]\n```x", "a closing ``` ends its line"),
        ("```json\n[1]\n`x", "only a closing ``` follows"),
        ("```json\n[1]\n``", "ended early"),
        ("`[1]`", "ended early"),
        ("Here it is: [1]", "ended early"),
        ("[1]\n```", "nothing but whitespace follows the JSON value"),
    ],
)
def test_a_broken_fence_is_refused(text: str, rule: str) -> None:
    with pytest.raises(PartialJsonError, match=rule):
        list(iter_partials([text], fences=True))
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(strip_fences(text))


@settings(max_examples=examples(300))
@given(answer=fenced_answers(), where=cuts)
def test_fences_read_an_answer_as_strip_fences_does(answer: tuple[str, str], where: Cuts) -> None:
    text, document = answer
    partials = list(iter_partials(pieces(text, where.points(len(text))), fences=True))
    assert_consistent(partials, document, growing=False)
    assert dumped(orjson.loads(strip_fences(text))) == dumped(partials[-1])


def test_prose_that_starts_like_a_literal_is_prose() -> None:
    parser = PartialJson(fences=True)
    assert parser.feed("nu") is UNCHANGED
    assert parser.feed("mbers:\n```json\n[1]\n```\nThat is all.") == [1]
    assert parser.finish() == [1]


@pytest.mark.parametrize(
    ("text", "inside"),
    [
        ('```json\n{"a": 1}\n```', '{"a": 1}'),
        ('Here it is:\n\n```json\n{"a": 1}\n```\nAnything else?', '{"a": 1}'),
        ("```\n[1]\n```", "[1]"),
        ("```json\n[1]```", "[1]"),
        ("```json\n[1, 2", "[1, 2"),
        ('  {"code": "```json\\nx\\n```"}\n', '{"code": "```json\\nx\\n```"}'),
        ("\n[1]\n", "[1]"),
    ],
)
def test_strip_fences_takes_the_fenced_json_or_the_whole_answer(text: str, inside: str) -> None:
    assert strip_fences(text) == inside


@settings(max_examples=examples(200))
@given(text=json_documents)
def test_strip_fences_leaves_any_bare_document_as_it_is(text: str) -> None:
    assert strip_fences(text) == text.strip()
    assert dumped(orjson.loads(strip_fences(f"```json\n{text}\n```"))) == dumped(orjson.loads(text))
