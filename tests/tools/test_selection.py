"""`RelevanceSelector`: tools ranked by relevance to the conversation, no model needed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given, settings

from reactloop._core._contracts import Tool
from reactloop._core._messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from reactloop._errors import ConfigurationError
from reactloop._loop._loop import ReActLoop
from reactloop._loop._run import Run
from reactloop._tools._selection import RelevanceSelector, terms, tool_terms
from reactloop.testing import FakeTool, ScriptedModel, make_run
from reactloop.tools import ToolSelection
from tests.helpers.strategies import (
    SpecTool,
    examples,
    selector_conversations,
    selector_tools,
)

WEATHER = SpecTool("getWeatherForecast", "Forecast for a place.")
FILES = SpecTool("read_file", "Read a text file from disk.")
SQL = SpecTool("run_sql", "Run a query on the database.")
TOOLS = (FILES, SQL, WEATHER)


def names(tools: tuple[object, ...]) -> list[str]:
    return [tool.name for tool in tools]  # type: ignore[attr-defined]


def ask(text: str) -> list[Message]:
    return [UserMessage(text)]


def test_terms_split_snake_case_camel_case_and_digits() -> None:
    assert terms("getHTTPResponse_v2 read_file2") == [
        "http",
        "response",
        "v",
        "2",
        "read",
        "file",
        "2",
    ]


def test_terms_drop_stop_words_and_fold_plurals() -> None:
    assert terms("What are the files and queries") == ["file", "query"]


def test_terms_keep_words_of_other_scripts_whole() -> None:
    assert terms("Données météo 2024") == ["donnée", "météo", "2024"]


def test_a_tool_whose_name_matches_ranks_first() -> None:
    assert (
        names(RelevanceSelector().rank(TOOLS, ask("weather in Paris?")))[0] == "getWeatherForecast"
    )


def test_a_tool_whose_description_matches_ranks_first() -> None:
    assert names(RelevanceSelector().rank(TOOLS, ask("query the database")))[0] == "run_sql"


def test_parameter_names_descriptions_and_enum_values_count() -> None:
    schema: dict[str, object] = {
        "type": "object",
        "properties": {
            "ticker": {"type": "string", "description": "Stock symbol"},
            "exchange": {"type": "string", "enum": ["nasdaq"]},
        },
    }
    quote = SpecTool("quote", "Latest price.", schema)
    for question in ("ticker", "stock symbol", "on nasdaq"):
        assert names(RelevanceSelector().rank((*TOOLS, quote), ask(question)))[0] == "quote"


def test_the_last_user_message_weighs_more_than_recent_messages() -> None:
    messages: list[Message] = [UserMessage("file"), AssistantMessage("ok"), UserMessage("sql")]
    assert names(RelevanceSelector().rank(TOOLS, messages))[:2] == ["run_sql", "read_file"]


def test_the_last_user_message_counts_even_when_older_than_the_recent_messages() -> None:
    messages: list[Message] = [
        UserMessage("weather"),
        AssistantMessage("one"),
        AssistantMessage("two"),
    ]
    ranked = RelevanceSelector(recent_messages=1).rank(TOOLS, messages)
    assert names(ranked)[0] == "getWeatherForecast"


def test_messages_before_the_recent_ones_do_not_count() -> None:
    messages: list[Message] = [AssistantMessage("sql"), UserMessage("hello"), AssistantMessage("x")]
    assert RelevanceSelector(recent_messages=1).rank(TOOLS, messages) == TOOLS
    assert names(RelevanceSelector(recent_messages=3).rank(TOOLS, messages))[0] == "run_sql"


def test_tool_results_count_unless_turned_off() -> None:
    messages: list[Message] = [UserMessage("hello"), ToolMessage("c1", "x", "the database is down")]
    assert names(RelevanceSelector().rank(TOOLS, messages))[0] == "run_sql"
    assert RelevanceSelector(tool_results=False).rank(TOOLS, messages) == TOOLS


def test_called_tool_names_count_as_recent_terms() -> None:
    messages: list[Message] = [UserMessage("hi"), AssistantMessage("", (ToolCall("run_sql"),))]
    assert names(RelevanceSelector().rank(TOOLS, messages))[0] == "run_sql"


def test_tools_with_no_relevance_come_last_in_their_order() -> None:
    ranked = RelevanceSelector().rank(TOOLS, ask("forecast"))
    assert names(ranked) == ["getWeatherForecast", "read_file", "run_sql"]


def test_nothing_relevant_keeps_the_original_order() -> None:
    assert RelevanceSelector().rank(TOOLS, ask("bonjour")) == TOOLS
    assert RelevanceSelector().rank(TOOLS, []) == TOOLS


def test_always_tools_come_first_in_list_order_and_unknown_names_are_ignored() -> None:
    selector = RelevanceSelector(always=["run_sql", "read_file", "not_here"])
    ranked = selector.rank(TOOLS, ask("weather forecast"))
    assert names(ranked) == ["read_file", "run_sql", "getWeatherForecast"]


def test_an_empty_tool_list_gives_an_empty_ranking() -> None:
    assert RelevanceSelector().rank((), ask("weather")) == ()


READS: Counter[str] = Counter()


class CountingTool(SpecTool):
    """Counts how often its spec is read (the index reads it once per build)."""

    @property
    def spec(self) -> ToolSpec:
        READS[self.name] += 1
        return ToolSpec(self.name, self.description, self.parameters)


def test_the_index_is_built_once_per_tool_list() -> None:
    READS.clear()
    tools = (CountingTool("weather"), CountingTool("file"))
    selector = RelevanceSelector()
    selector.rank(tools, ask("weather"))
    selector.rank(tools, ask("file"))
    assert READS == {"weather": 1, "file": 1}
    selector.rank(list(tools), ask("file"))  # another list: indexed anew
    assert READS == {"weather": 2, "file": 2}


def test_a_selector_call_ranks_the_runs_conversation() -> None:
    run = make_run(messages=[UserMessage("what is in the file?")])
    assert names(RelevanceSelector()(run, TOOLS))[0] == "read_file"


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"always": "run_sql"}, "RelevanceSelector.always"),
        ({"always": ["run_sql", "run_sql"]}, "RelevanceSelector.always"),
        ({"always": [""]}, "RelevanceSelector.always[0]"),
        ({"always": [3]}, "RelevanceSelector.always[0]"),
        ({"recent_messages": -1}, "RelevanceSelector.recent_messages"),
        ({"recent_messages": True}, "RelevanceSelector.recent_messages"),
        ({"tool_results": "yes"}, "RelevanceSelector.tool_results"),
    ],
)
def test_bad_options_are_configuration_errors_naming_them(
    options: dict[str, object], option: str
) -> None:
    with pytest.raises(ConfigurationError) as caught:
        RelevanceSelector(**options)  # type: ignore[arg-type]
    assert caught.value.option == option
    assert option in caught.value.message


def test_an_unknown_option_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="recent_message"):
        RelevanceSelector(recent_message=2)  # type: ignore[call-arg]


@settings(max_examples=examples(200))
@given(selector_tools(), selector_conversations)
def test_the_ranking_is_a_permutation_of_the_tools(
    tools: tuple[SpecTool, ...], messages: list[Message]
) -> None:
    ranked = RelevanceSelector().rank(tools, messages)
    assert sorted(names(ranked)) == sorted(names(tools))


@settings(max_examples=examples(200))
@given(selector_tools(), selector_conversations)
def test_always_tools_come_first(tools: tuple[SpecTool, ...], messages: list[Message]) -> None:
    always = names(tools)[1::2]
    ranked = RelevanceSelector(always=always).rank(tools, messages)
    assert names(ranked)[: len(always)] == always


@settings(max_examples=examples(200))
@given(selector_tools(), selector_conversations)
def test_equally_relevant_tools_keep_their_order(
    tools: tuple[SpecTool, ...], messages: list[Message]
) -> None:
    ranked = names(RelevanceSelector().rank(tools, messages))

    def twin(tool: SpecTool) -> tuple[str, str]:  # same words: same score
        return tool.name.split("_")[0], tool.description

    for i, first in enumerate(tools):
        for second in tools[i + 1 :]:
            if twin(first) == twin(second):
                assert ranked.index(first.name) < ranked.index(second.name)


@settings(max_examples=examples(200))
@given(selector_tools(), selector_conversations)
def test_tools_sharing_no_term_with_the_conversation_come_last_in_order(
    tools: tuple[SpecTool, ...], messages: list[Message]
) -> None:
    selector = RelevanceSelector()
    asked = set(selector.query(messages))
    unrelated = [tool.name for tool in tools if not asked & set(tool_terms(tool))]
    ranked = names(selector.rank(tools, messages))
    assert ranked[len(ranked) - len(unrelated) :] == unrelated


@settings(max_examples=examples(100))
@given(selector_tools(), selector_conversations)
def test_the_ranking_is_deterministic(tools: tuple[SpecTool, ...], messages: list[Message]) -> None:
    assert RelevanceSelector().rank(tools, messages) == RelevanceSelector().rank(tools, messages)


@pytest.mark.anyio
async def test_a_loop_offers_the_most_relevant_tools_first_up_to_its_cap() -> None:
    model = ScriptedModel(["sunny"])
    tools = [FakeTool("read_file"), FakeTool("run_sql"), FakeTool("get_weather")]
    loop = ReActLoop(
        model, tools=tools, tool_selection=ToolSelection(selector=RelevanceSelector(), max_tools=2)
    )
    await loop.run("What is the weather like?")
    assert [spec.name for spec in model.requests[0].tools] == ["get_weather", "read_file"]


def by_team(run: Run, tools: Sequence[Tool]) -> list[Tool]:
    """The README's custom selector: only the tools tagged for the caller's team, most relevant
    first."""
    team = run.context.deps["team"]
    ranked = RELEVANCE(run, tools)
    return [tool for tool in ranked if team in TAGS.get(tool.name, ())]


RELEVANCE = RelevanceSelector(always=["search_docs"])
TAGS = {"search_docs": ("sales", "support"), "refund": ("support",), "quote": ("sales",)}


@pytest.mark.anyio
async def test_a_custom_selector_can_keep_tools_by_a_tag_in_the_runs_deps() -> None:
    model = ScriptedModel(["ok"])
    tools = [FakeTool("quote"), FakeTool("refund"), FakeTool("search_docs")]
    loop = ReActLoop(model, tools=tools, tool_selection=ToolSelection(selector=by_team))
    await loop.run("refund my order", deps={"team": "support"})
    assert [spec.name for spec in model.requests[0].tools] == ["search_docs", "refund"]
