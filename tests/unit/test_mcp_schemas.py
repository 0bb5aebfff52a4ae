"""Schemas an agent can rely on, lean answers, one vocabulary: ``explorer mcp`` seen through the
SDK's client, every answer checked against the schema its tool declares (jsonschema).
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from jsonschema import Draft202012Validator

from explorer import __version__
from tests.conftest import write_files
from tests.mcp_client import call, index_with_fake_model, server_params, with_session

FILES = {
    "guides/telescope.md": "---\ndescription: Choosing lenses and mirrors\ntags: [optics]\n"
    "---\n# Telescope\n\nTelescope lenses and telescope mirrors.\n",
    "notes/stars.md": "# Stars\n\nStars seen through a telescope at night.\n\nLine five.\n",
    "notes/sky.md": "# Sky\n\nSee [the stars](stars.md) and [a comet](comet.md) through a "
    "telescope.\n",
    **{
        f"notes/n{i}.md": f"# Note {i}\n\nA telescope note, {i}.\n\n## More\n\nTelescope {i}.\n"
        for i in range(12)
    },
}

CALLS = [
    ("search", {"query": "telescope"}),
    ("search", {"query": "telescope mirrors", "content": True, "limit": 2}),
    ("search", {"query": "telescope", "metadata_only": True, "max_tokens": 20}),
    ("search", {"query": "telescope", "offsets": True, "explain": True, "per_file": 1}),
    ("search", {"query": "telescope", "mode": "keyword", "exclude": ["notes/"]}),
    ("search", {"query": "nothing matches zzzq", "mode": "keyword"}),
    ("read", {"path": "notes/stars.md", "start_line": 2}),
    ("read_many", {"glob": "notes/*.md", "max_bytes": 200}),
    ("related", {"path": "notes/stars.md", "limit": 3}),
    ("links", {"path": "notes/sky.md"}),
    ("index_status", {"path": "notes/", "limit": 2}),
    ("status", {}),
]
"""One or more real calls of every tool, with their options."""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    base = tmp_path_factory.mktemp("mcp-schemas")
    root, index_dir = write_files(base / "root", FILES), base / "index"
    index_with_fake_model(root, index_dir)
    return root, index_dir


@pytest.fixture(scope="module")
def session_answers(corpus):
    """The tools as listed, the server's info, and every call of CALLS with its whole result."""

    async def body(session):
        listed = await session.list_tools()
        results = [await session.call_tool(name, arguments) for name, arguments in CALLS]
        return {tool.name: tool for tool in listed.tools}, results

    return with_session(server_params(*corpus), body)


def test_every_answer_matches_its_tools_declared_output_schema(session_answers):
    tools, results = session_answers
    assert {name for name, _ in CALLS} == set(tools)  # every tool is called
    for (name, arguments), result in zip(CALLS, results, strict=True):
        assert not result.is_error, (name, result.content[0].text)
        schema = tools[name].output_schema
        assert schema and schema["type"] == "object" and schema["properties"], name
        Draft202012Validator.check_schema(schema)
        errors = list(Draft202012Validator(schema).iter_errors(result.structured_content))
        assert not errors, (name, arguments, [e.message for e in errors])
        # what an agent sends is valid against the input schema it was shown
        assert Draft202012Validator(tools[name].input_schema).is_valid(arguments), name


def test_input_schemas_bound_every_argument_and_refuse_others(session_answers):
    tools, _ = session_answers
    for tool in tools.values():
        schema = tool.input_schema
        Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False, tool.name
        assert "$ref" not in json.dumps(schema) and "title" not in schema, tool.name
        for name, field in schema["properties"].items():
            assert field.get("description"), (tool.name, name)
    search = tools["search"].input_schema["properties"]
    assert search["query"]["maxLength"] == 1000 and search["query"]["minLength"] == 1
    limit = search["limit"]["anyOf"][0]
    assert (limit["minimum"], limit["maximum"]) == (1, 200)
    assert search["per_file"]["maximum"] == 50
    assert search["max_tokens"]["anyOf"][0]["maximum"] == 200_000
    assert search["paths"]["maxItems"] == 20 and search["paths"]["items"]["maxLength"] == 500
    assert search["mode"]["enum"] == ["hybrid", "semantic", "keyword"]
    read = tools["read"].input_schema["properties"]
    assert read["start_char"]["minimum"] == 0
    assert tools["related"].input_schema["properties"]["limit"]["maximum"] == 200


def test_the_related_description_says_what_related_does(session_answers):
    tools, _ = session_answers
    description = tools["related"].description
    assert "whole-file vector" not in description
    assert "passage" in description and "boilerplate" in description
    assert "unlinked" in description and "why" in description


def test_the_server_says_its_version(corpus):
    async def body(session):
        return (await session.initialize()).server_info

    info = with_session(server_params(*corpus), body)
    assert info.name == "explorer" and info.version == __version__


def test_arguments_a_tool_does_not_take_or_outside_its_bounds_are_refused_in_words(corpus):
    bad = [
        ({"query": "telescope", "limt": 5}, "unknown argument 'limt'; the arguments are: query"),
        ({"query": "telescope", "per_file": 10**9}, "per_file must be at most 50"),
        ({"query": "telescope", "limit": 10**9}, "limit must be at most 200"),
        ({"query": "x" * 100_000}, "query is too long (it has 100000): at most 1000 characters"),
        ({"query": ""}, "query must not be empty"),
        ({}, "query is required"),
        ({"query": "telescope", "mode": "fuzzy"}, "mode must be one of hybrid, semantic or"),
        ({"query": "telescope", "limit": "many"}, "limit must be a whole number"),
        ({"query": "telescope", "paths": ["a"] * 21}, "paths takes at most 20 values"),
        ({"query": "telescope", "content": "perhaps"}, "content must be true or false"),
    ]

    async def body(session):
        listed = await session.list_tools()
        schema = next(t for t in listed.tools if t.name == "search").input_schema
        answers = [await call(session, "search", **arguments) for arguments, _ in bad]
        return schema, answers, await call(session, "read", path="notes/stars.md", bogus=True)

    schema, answers, read = with_session(server_params(*corpus), body)
    for (arguments, expected), (error, text) in zip(bad, answers, strict=True):
        assert error, (arguments, text)
        assert expected in text, (arguments, text)
        for raw in ("pydantic", "Arguments", "http", "Input should", "validation error"):
            assert raw not in text, (arguments, text)
        assert len(text) < 400  # the rejected value is never echoed
        # the schema the agent was shown refuses the same call
        assert not Draft202012Validator(schema).is_valid(arguments), arguments
    error, text = read
    assert error and "unknown argument 'bogus'" in text


def test_a_default_search_is_lean_and_sent_once(corpus):
    async def body(session):
        return (
            await session.call_tool("search", {"query": "telescope"}),
            await session.call_tool("search", {"query": "telescope", "offsets": True}),
            await session.call_tool("search", {"query": "telescope", "explain": True}),
        )

    lean, offsets, explained = with_session(server_params(*corpus), body)
    data = lean.structured_content
    passages = [p for hit in data["results"] for p in hit["passages"]]
    assert passages
    for passage in passages:
        assert set(passage) <= {"heading", "start_line", "end_line", "page", "score", "snippet"}
    assert "fusion" not in json.dumps(data) and "query" not in data
    # the text content is the same answer rendered readable, not the JSON a second time
    (text,) = [block.text for block in lean.content]
    assert len(text) < 1.1 * len(json.dumps(data, separators=(",", ":"), ensure_ascii=False))
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    assert data["results"][0]["path"] in text
    for passage in (p for hit in offsets.structured_content["results"] for p in hit["passages"]):
        assert {"chunk_id", "start_char", "end_char", "highlights"} <= set(passage)
    explain = explained.structured_content["explain"]
    assert explain["query"] == "telescope" and explain["fusion"].startswith("logistic(")
    first = explained.structured_content["results"][0]["passages"][0]
    assert "keyword_rank" in first["explain"]


def test_one_vocabulary_path_for_files_text_for_whole_text_iso_times(corpus, session_answers):
    root, _ = corpus
    _, results = session_answers
    answers = {
        (name, json.dumps(arguments)): result.structured_content
        for (name, arguments), result in zip(CALLS, results, strict=True)
    }

    def keys(node):
        if isinstance(node, dict):
            for key, value in node.items():
                yield key
                yield from keys(value)
        elif isinstance(node, list):
            for item in node:
                yield from keys(item)

    every_key = {key for answer in answers.values() for key in keys(answer)}
    assert not every_key & {"file", "source", "target"}, every_key
    content = answers[("search", json.dumps(CALLS[1][1]))]
    for hit in content["results"]:  # in search, text is the passage's whole text
        for passage in hit["passages"]:
            assert passage["text"] in (root / hit["path"]).read_text()
    related = answers[("related", json.dumps(CALLS[8][1]))]
    for neighbour in related["related"]:  # in related, a cut passage is an excerpt
        assert "excerpt" in neighbour["related_passage"]
        assert "text" not in neighbour["related_passage"]
    status = answers[("status", "{}")]
    stamp = datetime.fromisoformat(status["last_update"])
    assert stamp.tzinfo is not None and abs(stamp.timestamp() - _now()) < 3600
    states = answers[("index_status", json.dumps(CALLS[10][1]))]
    assert all(datetime.fromisoformat(f["indexed_at"]).tzinfo for f in states["files"])


def test_every_answers_text_holds_every_value_of_its_structured_content(session_answers):
    """Many clients hand the model only a tool result's text: it holds the whole answer (every
    passage's path, lines, heading, score and snippet or text, every line read), rendered once
    for every tool. It used to hold paths and line ranges only ("notes/stars.md lines 2-5")."""
    _, results = session_answers
    for (name, arguments), result in zip(CALLS, results, strict=True):
        (text,) = [block.text for block in result.content]
        for value in _values(result.structured_content):
            if isinstance(value, str):
                for line in value.splitlines():
                    assert line in text, (name, arguments, line, text)
            else:
                assert json.dumps(value) in text, (name, arguments, value, text)
    search = results[0]
    (text,) = [block.text for block in search.content]
    for hit in search.structured_content["results"]:
        for passage in hit["passages"]:
            assert f"start_line: {passage['start_line']}" in text
            assert f"score: {passage['score']}" in text
            assert passage["snippet"] in text
    read = results[CALLS.index(("read", {"path": "notes/stars.md", "start_line": 2}))]
    (text,) = [block.text for block in read.content]
    lines = read.structured_content["text"].splitlines()
    assert lines == ["", "Stars seen through a telescope at night.", "", "Line five."]
    assert "\n".join(f"  {line}" if line else "" for line in lines) in text


def _values(node):
    """Every plain value of a JSON answer (the keys' values, not the keys)."""
    if isinstance(node, dict):
        for value in node.values():
            yield from _values(value)
    elif isinstance(node, list):
        for item in node:
            yield from _values(item)
    else:
        yield node


def _now() -> float:
    import time

    return time.time()
