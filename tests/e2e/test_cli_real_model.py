"""End to end: the real bundled model, real Chroma and real files, through the real CLI.

The index of a copy of sample_docs is built once per store by ``python -m explorer index`` and
every test talks to it the way a script would: ``--json`` and exit codes, indexing and status
as subprocesses. The tests of what searches and ``related`` rank run the same command in this
process (:func:`in_process`): each is about the answer, not the process, and a process of its
own cost some 1.5 s of starting (Chroma's import above all) for each of about 90 answers. The
process itself is checked where it is the point (``test_search_process_never_imports_torch``,
and tests/e2e/test_resident_reader_real.py). Every test runs twice: with the local (embedded)
Chroma store, and with vectors on a real Chroma server (``chroma run`` on 127.0.0.1, started
by the session's ``chroma_server`` fixture).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from explorer.core.embed.embedder import FEW_DOCUMENTS
from explorer.core.embed.export_cache import EXPORT_DIR_NAME, MANIFEST_NAME, copy_export
from explorer.core.settings import DEFAULT_MODEL
from explorer.settings.locations import default_index_dir, query_encoder_cache
from tests.conftest import explorer_imports, invoke_cli, run_explorer

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
SAMPLE_DOCS = REPO / "sample_docs"
EXPECTATIONS = json.loads((REPO / "tests" / "sample_docs_expectations.json").read_text())


def explorer(*args: str, env: dict, check: bool = True) -> subprocess.CompletedProcess:
    return run_explorer(*args, env=env, check=check)


@pytest.fixture(scope="module", params=["local", "server"])
def corpus(request, tmp_path_factory):
    """A copy of sample_docs indexed with the real model; returns (root, env).

    The local store's index is the session's (tests/e2e/conftest.py), copied with its folder.
    On the server, it is that copy moved there, as a team moves an index to its server: its
    vectors are uploaded from the local store, none embedded again."""
    base = tmp_path_factory.mktemp(f"e2e-{request.param}")
    root = base / "docs"
    env = local_env(base)
    built = request.getfixturevalue("built_sample_docs")
    built.index.copy(root, base / "index")
    assert built.report["added"] == sum(1 for p in SAMPLE_DOCS.rglob("*") if p.is_file())
    assert built.report["chunks_embedded"] > 0
    if request.param == "server":
        env["EXPLORER_CHROMA_URL"] = request.getfixturevalue("chroma_server").url
        done = explorer("index", str(root), env=env)
        assert f"moved {built.report['chunks_embedded']} chunk vectors" in done.stdout
        assert "nothing to embed" in done.stdout, done.stdout
    return root, env


def local_env(base: Path) -> dict:
    """The environment of a copy under ``base`` with its index in the local store."""
    env = {
        **os.environ,
        "EXPLORER_INDEX_DIR": str(base / "index"),
        "EXPLORER_DATA_DIR": str(base / "data"),
        "HF_HUB_OFFLINE": "1",
    }
    env.pop("EXPLORER_MODEL", None)
    env.pop("EXPLORER_CHROMA_URL", None)
    return env


def search_json(root: Path, env: dict, query: str, *extra: str) -> dict:
    return json.loads(explorer("search", query, str(root), "--json", *extra, env=env).stdout)


ENVIRONMENT = (
    "EXPLORER_INDEX_DIR",
    "EXPLORER_DATA_DIR",
    "EXPLORER_CHROMA_URL",
    "EXPLORER_MODEL",
    "HF_HUB_OFFLINE",
)
"""What tells a command which index, store and model to use: ``env``'s, in :func:`in_process`."""


def in_process(*args: str, env: dict) -> str:
    """``explorer ARGS`` run in this process with ``env``'s index, store and model (those it
    lacks unset): its stdout; it must succeed, as :func:`explorer` checks."""
    done = invoke_cli(*args, env={name: env.get(name) for name in ENVIRONMENT})
    assert done.exit_code == 0, (args, done.output, done.exception)
    return done.stdout


def ranked(root: Path, env: dict, query: str, *extra: str) -> dict:
    """``explorer search QUERY ROOT --json EXTRA``'s answer, run in this process."""
    return json.loads(in_process("search", query, str(root), "--json", *extra, env=env))


def test_second_index_run_embeds_nothing_and_says_so(corpus):
    root, env = corpus
    done = explorer("index", str(root), env=env)
    assert "nothing to embed" in done.stdout
    assert "0 added, 0 updated, 0 removed" in done.stdout


def test_a_second_machine_reuses_the_servers_vectors(corpus, tmp_path):
    root, env = corpus
    if "EXPLORER_CHROMA_URL" not in env:
        pytest.skip("vectors are shared through a server only")
    checkout = tmp_path / "other-machine"
    shutil.copytree(root, checkout)
    other = {**env, "EXPLORER_INDEX_DIR": str(tmp_path / "other-index")}
    report = json.loads(explorer("index", str(checkout), "--json", env=other).stdout)
    assert report["chunks_embedded"] == 0 and report["chunks_reused"] > 0
    said = explorer("index", str(checkout), env=other).stdout
    assert "nothing to embed" in said
    case = EXPECTATIONS["semantic_queries"][0]
    found = search_json(checkout, other, case["query"], "--mode", "semantic", "--limit", "3")
    assert case["best"] in [hit["path"] for hit in found["results"]]


@pytest.mark.parametrize("case", EXPECTATIONS["semantic_queries"], ids=lambda c: c["query"])
def test_search_by_meaning_finds_a_document_without_the_query_words(corpus, case):
    root, env = corpus
    best = (root / case["best"]).read_text(encoding="utf-8").lower()
    for word in case["absent_words"]:
        assert word.lower() not in best, f"{word!r} is in {case['best']}"
    semantic = ranked(root, env, case["query"], "--mode", "semantic", "--limit", "3")
    assert case["best"] in [hit["path"] for hit in semantic["results"]]
    # The default (hybrid) search ranks it 1st or 2nd too: the keyword leg, which matches only
    # incidental words of such a question, weighs little when its best passages cover little
    # of the query.
    hybrid = ranked(root, env, case["query"], "--limit", "10")
    assert case["best"] in [hit["path"] for hit in hybrid["results"][:2]]


@pytest.mark.parametrize("case", EXPECTATIONS["keyword_queries"], ids=lambda c: c["query"])
def test_rare_terms_find_exactly_their_files(corpus, case):
    root, env = corpus
    found = ranked(root, env, case["query"], "--mode", "keyword", "--offsets")
    assert sorted(hit["path"] for hit in found["results"]) == sorted(case["files"])
    # The default (hybrid) search keeps the files that hold the term on top (1st and 2nd).
    hybrid = ranked(root, env, case["query"], "--limit", "10")
    assert sorted(hit["path"] for hit in hybrid["results"][: len(case["files"])]) == sorted(
        case["files"]
    )
    passage = found["results"][0]["passages"][0]
    assert passage["start_line"] >= 1 and passage["end_line"] >= passage["start_line"]
    marked = [passage["snippet"][s:e].lower() for s, e in passage["highlights"]]
    assert marked, "the snippet marks the matched term"


@pytest.mark.parametrize("pair", EXPECTATIONS["related_pairs"], ids=lambda p: " ~ ".join(p))
def test_related_files_put_the_partner_near_the_top(corpus, pair):
    root, env = corpus
    first, second = pair
    done = in_process("related", str(root / first), "--json", "--limit", "3", env=env)
    related = json.loads(done)["related"]
    paths = [item["path"] for item in related]
    assert first not in paths
    assert second in paths
    for item in related:
        assert 0.0 <= item["score"] <= 1.0
        assert item["source_passage"]["start_line"] >= 1
        assert item["related_passage"]["excerpt"]


def test_path_glob_limits_both_legs_before_ranking(corpus):
    root, env = corpus
    example = EXPECTATIONS["glob_examples"][0]
    found = ranked(
        root,
        env,
        "release notes and decisions",
        "--path",
        example["glob"],
        "--limit",
        "50",
        "--explain",
    )
    paths = [hit["path"] for hit in found["results"]]
    assert paths and len(paths) <= example["count"]
    assert all(path.startswith("notes/2026/0") and path.endswith(".md") for path in paths)
    assert all(not path.startswith("notes/2026/04") for path in paths)
    assert str(example["count"]) in found["explain"]["filters"]["keyword"]
    assert str(example["count"]) in found["explain"]["filters"]["vector"]
    # Every file's stored vector is reached (locally and on the server) and weighs in.
    passages = [passage["explain"] for hit in found["results"] for passage in hit["passages"]]
    assert all(-1.0 <= passage["file_similarity"] <= 1.0 for passage in passages)
    assert "file cosine" in found["explain"]["fusion"]
    # So is each file's BM25 as a whole: a passage that matched the words sits in a file that
    # matches them, and the filter holds for the whole-file leg too.
    worded = [passage for passage in passages if passage.get("keyword_rank")]
    assert worded and all(passage["file_keyword_score"] > 0 for passage in worded)
    assert "z(file BM25)" in found["explain"]["fusion"]


def test_status_reports_counts_model_and_store(corpus):
    root, env = corpus
    status = json.loads(explorer("status", str(root), "--json", env=env).stdout)
    assert status["files"]["stale"] == 0 and status["files"]["failed"] == 0
    assert status["files"]["indexed"] > 40
    assert status["chunks"] == status["vectors"] > 0
    assert status["model"] == "all-MiniLM-L6-v2" and status["dimension"] == 384
    assert status["needs_rebuild"] is False
    store = status["vector_store"]
    assert store["available"] is True
    if "EXPLORER_CHROMA_URL" in env:
        assert store == {
            "kind": "server",
            "location": env["EXPLORER_CHROMA_URL"],
            "available": True,
        }
    else:
        assert store["kind"] == "local" and store["location"].startswith(env["EXPLORER_INDEX_DIR"])
        assert "problem" not in store


def test_rename_and_delete_leave_no_chunk_behind(request, corpus, tmp_path):
    root, env = corpus
    local = "EXPLORER_CHROMA_URL" not in env
    if local:  # a copy of its own: putting the module's copy back would embed the file again
        root, env = tmp_path / "docs", local_env(tmp_path)
        request.getfixturevalue("built_sample_docs").index.copy(root, tmp_path / "index")
    moved = root / "guides" / "backups-moved.md"
    (root / "guides" / "backups.md").rename(moved)
    try:
        explorer("index", str(root), env=env)
        found = search_json(root, env, "nightly snapshot retention", "--limit", "20")
        paths = {hit["path"] for hit in found["results"]}
        assert "guides/backups-moved.md" in paths
        assert "guides/backups.md" not in paths
        status = json.loads(explorer("status", str(root), "--json", env=env).stdout)
        assert status["chunks"] == status["vectors"]
    finally:
        if not local:  # the module's own copy, its vectors on the server: put the file back
            moved.rename(root / "guides" / "backups.md")
            explorer("index", str(root), env=env)


def test_search_process_never_imports_torch(corpus):
    root, env = corpus
    _done, loaded = explorer_imports("search", "restore a backup", root, env=env)
    assert loaded == []


def test_a_new_folder_is_embedded_on_the_query_encoder_another_index_kept(
    built_sample_docs, tmp_path
):
    """A user's second folder: its first ``explorer index`` takes the query encoder that an
    earlier index exported (kept in the user's cache) and embeds its few chunks on it, without
    loading torch and the model (7-9 s) to export it once more."""
    copy_export(
        built_sample_docs.index.index_dir / EXPORT_DIR_NAME, query_encoder_cache(DEFAULT_MODEL)
    )
    root = tmp_path / "garden"
    root.mkdir()
    (root / "bees.md").write_text(
        "# Bees\n\nIn winter the colony clusters in the hive and lives on its stored honey;"
        " feed them sugar when it runs low.\n"
    )
    (root / "roses.md").write_text("# Roses\n\nPrune roses in early spring, above a bud.\n")
    env = local_env(tmp_path)
    done, loaded = explorer_imports("index", root, "--json", env=env)
    report = json.loads(done.stdout)
    assert report["added"] == 2 and report["chunks_embedded"] >= 2
    assert loaded == []
    found = ranked(root, env, "insects getting through the cold months", "--mode", "semantic")
    assert found["results"][0]["path"] == "bees.md"


MODEL_LOADS = """
import json, sys
import sentence_transformers
loads = []
load = sentence_transformers.SentenceTransformer.__init__
def counted(self, *args, **kwargs):
    loads.append(args[:1])
    load(self, *args, **kwargs)
sentence_transformers.SentenceTransformer.__init__ = counted
from explorer.cli import main
sys.argv = ["explorer", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit as end:
    assert not end.code, end.code
print("\\nMODEL LOADS " + json.dumps(len(loads)))
"""
"""``explorer ARGS`` (argv[1], a JSON list) counting the times the model's weights are loaded."""


def test_two_new_folders_load_the_model_once_and_take_the_kept_query_encoder(
    built_sample_docs, tmp_path
):
    """``explorer index A B``, each with too many chunks for the export to embed: the model
    is loaded once for both (it was once per folder), and the query encoder an earlier index
    kept in the user's cache is linked in, not exported again (it was: 4-9 s, 250 MB)."""
    kept = query_encoder_cache(DEFAULT_MODEL)
    copy_export(built_sample_docs.index.index_dir / EXPORT_DIR_NAME, kept)
    kept_manifest = (kept / MANIFEST_NAME).stat().st_ino
    folders = [tmp_path / "runbooks", tmp_path / "api"]
    for folder in folders:
        shutil.copytree(built_sample_docs.index.root / folder.name, folder)
    env = local_env(tmp_path)
    env.pop("EXPLORER_INDEX_DIR")  # each folder's index in its own default place
    args = json.dumps(["index", *map(str, folders), "--json"])
    done = subprocess.run(
        [sys.executable, "-c", MODEL_LOADS, args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    answer, _, loads = done.stdout.rpartition("\nMODEL LOADS ")
    embedded = [c["chunks_embedded"] for c in json.loads(answer)["collections"]]
    assert min(embedded) > FEW_DOCUMENTS, "each folder needs the model, not the export alone"
    assert json.loads(loads) == 1
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXPLORER_DATA_DIR", env["EXPLORER_DATA_DIR"])
        first = default_index_dir(folders[0]) / EXPORT_DIR_NAME / MANIFEST_NAME
    assert first.stat().st_ino == kept_manifest, "the query encoder was exported again"
    for folder, query, path in (
        (folders[0], "bring the data back after losing the disk", "restore-from-backup.md"),
        (folders[1], "notify my service when something happens", "webhooks.md"),
    ):
        found = ranked(folder, env, query, "--mode", "semantic")
        assert found["results"][0]["path"] == path


def test_a_few_edited_files_are_embedded_without_loading_torch(built_sample_docs, tmp_path):
    """After an edit of a note or two, ``explorer index`` embeds their chunks on the model's
    ONNX export (made by the first index) instead of loading torch and the model (7-9 s)."""
    root, _index_dir = built_sample_docs.index.copy(tmp_path / "docs", tmp_path / "index")
    env = local_env(tmp_path)
    (root / "notes" / "sourdough.md").write_text(
        "# Sourdough\n\nFeed the starter flour and water each morning; bake when it doubles.\n"
    )
    done, loaded = explorer_imports("index", root, "--json", env=env)
    report = json.loads(done.stdout)
    assert report["added"] == 1 and 1 <= report["chunks_embedded"] <= 3
    assert loaded == []
    found = ranked(root, env, "baking bread with a fermented culture", "--mode", "semantic")
    assert found["results"][0]["path"] == "notes/sourdough.md"
