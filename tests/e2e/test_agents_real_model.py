"""End to end for agents and scripts: the real model, real Chroma, real files, real processes.

A copy of sample_docs is indexed by ``python -m explorer index``; the official SDK's client
then starts ``python -m explorer mcp`` and searches by meaning, reads, and is refused paths
outside the root; a file added while the server runs is found within seconds, and a default
search answer's structured content is at most half the size the whole answer was before
answers went lean (with its text content, the same answer readable, two thirds). The CLI's
token budget is checked against the model's own tokenizer, and ``status`` counts files changed
on disk until ``index --only`` takes them in.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from tests.conftest import explorer_imports, run_explorer

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
EXPECTATIONS = json.loads((REPO / "tests" / "sample_docs_expectations.json").read_text())


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, built_sample_docs):
    """A copy of the session's sample_docs and its index (tests/e2e/conftest.py), the copy
    for this module alone: its tests edit files and index them."""
    return copy_of(built_sample_docs, tmp_path_factory.mktemp("e2e-mcp"))


def copy_of(built_sample_docs, base: Path) -> tuple[Path, dict]:
    """A copy of the session's sample_docs and its index under ``base``, a file outside it and
    a link to that file made after indexing; returns (root, env)."""
    root, _ = built_sample_docs.index.copy(base / "docs", base / "index")
    outside = base / "outside.md"
    outside.write_text("# Outside\n\nnever to be read\n")
    env = {
        **os.environ,
        "EXPLORER_INDEX_DIR": str(base / "index"),
        "EXPLORER_DATA_DIR": str(base / "data"),
        "HF_HUB_OFFLINE": "1",
    }
    for name in ("EXPLORER_MODEL", "EXPLORER_CHROMA_URL"):
        env.pop(name, None)
    (root / "notes" / "escape.md").symlink_to(outside)  # made after indexing: read must refuse
    return root, env


def mcp_server(root: Path, env: dict) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "explorer", "mcp", str(root)], env=env
    )


def session_answers(root: Path, env: dict, calls: list[tuple[str, dict]]) -> list:
    """Start ``explorer mcp ROOT``; return (is_error, structured result or error text) per call."""
    params = mcp_server(root, env)

    async def run():
        with anyio.fail_after(300):
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tools = await session.list_tools()
                answers = [sorted(tool.name for tool in tools.tools)]
                for name, arguments in calls:
                    result = await session.call_tool(name, arguments)
                    answers.append(
                        (True, result.content[0].text)
                        if result.is_error
                        else (False, result.structured_content)
                    )
                return answers

    return anyio.run(run)


def test_an_agent_searches_by_meaning_reads_and_is_refused_outside_paths(corpus):
    root, env = corpus
    cases = EXPECTATIONS["semantic_queries"]
    calls = [("search", {"query": case["query"], "mode": "semantic", "limit": 3}) for case in cases]
    calls += [
        ("read", {"path": cases[0]["best"], "start_line": 1, "end_line": 5}),
        ("read", {"path": "../../etc/passwd"}),
        ("read", {"path": "/etc/passwd"}),
        ("read", {"path": "notes/escape.md"}),
        ("related", {"path": EXPECTATIONS["related_pairs"][0][0], "limit": 3}),
        ("search", {"query": cases[0]["query"], "content": True, "max_tokens": 200}),
    ]
    tools, *answers = session_answers(root, env, calls)
    assert tools == [
        "index_status",
        "links",
        "read",
        "read_many",
        "related",
        "search",
        "status",
    ]
    for case, (error, data) in zip(cases, answers, strict=False):
        assert not error, data
        assert case["best"] in [hit["path"] for hit in data["results"]], case["query"]
    read, dotdot, absolute, escape, related, budget = answers[len(cases) :]
    error, data = read
    assert not error
    lines = (root / cases[0]["best"]).read_text().splitlines(keepends=True)
    assert data["text"] == "".join(lines[:5])
    for refused, fragment in (
        (dotdot, "'..' is refused"),
        (absolute, "absolute paths are refused"),
        (escape, "leads outside the root"),
    ):
        assert refused[0] is True and fragment in refused[1]
        assert "never to be read" not in refused[1]
    error, data = related
    assert not error
    assert EXPECTATIONS["related_pairs"][0][1] in [item["path"] for item in data["related"]]
    error, data = budget
    assert not error
    assert data["budget"]["used"] <= 200
    assert all("text" in p for hit in data["results"] for p in hit["passages"])


BEFORE_LEAN_BYTES = {
    "how do I restore a backup": 40_143,
    "tern": 42_460,
    "rotate the signing keys": 37_943,
    "high latency": 37_642,
    "configure the cache": 38_050,
}
"""A default search's whole result (text and structured content, as JSON) on sample_docs before
answers went lean (commit 69370d6): the same JSON twice, chunk ids, offsets and the fusion rule
in every answer."""


def test_a_default_search_answer_is_lean_and_its_text_holds_it_once(corpus):
    """The structured content is at most half the old whole result; with the text content,
    which holds the same answer readable (issue 29: many clients hand the model only the
    text), the whole is at most two thirds of the old (it was the JSON twice; 58-64% on
    sample_docs)."""
    root, env = corpus

    async def run():
        with anyio.fail_after(300):
            async with (
                stdio_client(mcp_server(root, env)) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                sizes = {}
                for query in BEFORE_LEAN_BYTES:
                    result = await session.call_tool("search", {"query": query})
                    assert not result.is_error and result.structured_content["results"]
                    structured = json.dumps(result.structured_content, ensure_ascii=False)
                    whole = len(result.model_dump_json(by_alias=True, exclude_none=True))
                    sizes[query] = (len(structured), whole)
                return sizes

    sizes = anyio.run(run)
    for query, before in BEFORE_LEAN_BYTES.items():
        structured, whole = sizes[query]
        assert structured <= before / 2, (query, structured, before)
        assert whole <= 2 * before / 3, (query, whole, before)


def test_a_file_added_while_the_server_runs_is_found_within_five_seconds(corpus):
    root, env = corpus
    added = root / "guides" / "narwhal.md"

    async def run():
        with anyio.fail_after(300):
            async with (
                stdio_client(mcp_server(root, env)) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await session.call_tool("search", {"query": "warm up the model"})
                added.write_text("# Narwhal care\n\nTusks, pods and long dives under the ice.\n")
                start = anyio.current_time()
                while anyio.current_time() - start < 5:
                    result = await session.call_tool(
                        "search", {"query": "narwhal tusks under the ice"}
                    )
                    paths = [hit["path"] for hit in result.structured_content["results"]]
                    if "guides/narwhal.md" in paths:
                        return anyio.current_time() - start
                    await anyio.sleep(0.1)
                return None

    try:
        waited = anyio.run(run)
    finally:
        added.unlink(missing_ok=True)
        run_explorer("index", str(root), "--only", added, env=env, check=True)
    assert waited is not None, "the new file was not found within 5 s"


def test_the_token_budget_counts_with_the_models_tokenizer(corpus):
    from tokenizers import Tokenizer

    from explorer.core.embed.embedder import resolve_model_dir

    root, env = corpus
    done = run_explorer(
        "search",
        "restore a backup",
        str(root),
        "--content",
        "--max-tokens",
        "300",
        "--json",
        env=env,
        check=True,
    )
    data = json.loads(done.stdout)
    tokenizer = Tokenizer.from_file(str(resolve_model_dir("all-MiniLM-L6-v2") / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    used = 0
    for hit in data["results"]:
        used += count(f"{hit['path']} {hit['title']}")
        for passage in hit["passages"]:
            body = (
                f"{passage['heading']}\n{passage['text']}"
                if passage["heading"]
                else passage["text"]
            )
            used += count(body)
    assert used == data["budget"]["used"] <= 300
    assert data["budget"]["passages_cut"] > 0


def test_a_budgeted_search_never_imports_torch(corpus):
    root, env = corpus
    args = ("search", "restore a backup", root, "--content", "--max-tokens", "300")
    done, loaded = explorer_imports(*args, env=env)
    assert loaded == []
    assert "note: token budget 300" in done.stderr  # the note, beside the answer


def test_status_sees_edits_on_disk_until_index_only_takes_them_in(built_sample_docs, tmp_path):
    """On a copy of its own: putting the module's copy back would embed two files again."""
    root, env = copy_of(built_sample_docs, tmp_path)
    edited, created, deleted = (
        root / "guides" / "faq.md",
        root / "guides" / "walrus.md",
        root / "runbooks" / "high-latency.md",
    )
    saved = edited.read_text()
    edited.write_text(saved + "\n## Walruses\n\nDo walruses use tern? Yes.\n")
    created.write_text("# Walrus care\n\nTusks, blubber and long naps on the ice.\n")
    deleted.unlink()
    status = json.loads(run_explorer("status", str(root), "--json", env=env, check=True).stdout)
    assert status["stale"] == {
        "files": 3,
        "edited": 1,
        "new": 1,
        "deleted": 1,
        "paths": ["guides/faq.md", "guides/walrus.md", "runbooks/high-latency.md"],
    }
    assert status["files"]["stale"] == 3
    text = run_explorer("status", str(root), env=env, check=True).stdout
    assert "1 edited, 1 new, 1 deleted: run `explorer index" in text
    done = run_explorer(
        "index", str(root), "--only", edited, created, deleted, "--json", env=env, check=True
    )
    report = json.loads(done.stdout)
    assert (report["added"], report["updated"], report["removed"]) == (1, 1, 1)
    status = json.loads(run_explorer("status", str(root), "--json", env=env, check=True).stdout)
    assert status["files"]["stale"] == 0 and status["chunks"] == status["vectors"]
    found = search_json_cli(root, env, "where do walruses sleep", "--mode", "semantic")
    assert found["results"][0]["path"] == "guides/walrus.md"


def search_json_cli(root: Path, env: dict, query: str, *extra: str) -> dict:
    done = run_explorer("search", query, str(root), "--json", *extra, env=env, check=True)
    return json.loads(done.stdout)
