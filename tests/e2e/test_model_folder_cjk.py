"""End to end: a sentence-transformers model given as a folder (``--model FOLDER``) indexes and
searches the folder of Chinese, Japanese, Korean and English notes of the unit tests, by keyword,
by meaning and both, through the real CLI.

No multilingual model is installable here (none ships inside a package; a hub download is not
allowed), so the folder is a copy of the bundled English model: what is tested is the path a user
with a multilingual model takes, and that keyword search serves the CJK words whatever the
model.
"""

from __future__ import annotations

import json
import shutil

import pytest

from explorer.core.embed.embedder import resolve_model_dir
from tests.conftest import run_explorer, write_files
from tests.e2e.conftest import build_env
from tests.unit.test_cjk_search import FILES

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    base = tmp_path_factory.mktemp("model-folder")
    model = base / "my-model"
    shutil.copytree(resolve_model_dir("all-MiniLM-L6-v2"), model)
    root = write_files(base / "notes", FILES)
    env = build_env(base)
    done = run_explorer("index", root, "--model", model, "--json", env=env, check=True)
    report = json.loads(done.stdout)
    assert report["added"] == len(FILES) and report["chunks_embedded"] > 0
    return root, model, env


def search(indexed, query: str, mode: str) -> dict:
    root, model, env = indexed
    done = run_explorer(
        "search", query, root, "--model", model, "--mode", mode, "--json", env=env, check=False
    )
    assert done.returncode in (0, 1), done.stderr
    answer: dict = json.loads(done.stdout)
    return answer


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("数据库", "备份.md"),
        ("サンドボックス", "設定.md"),
        ("데이터베이스", "백업.md"),
        ("itgc", "备份.md"),
    ],
)
def test_a_model_folder_serves_hybrid_search_of_cjk_words(indexed, query, path):
    for mode in ("keyword", "hybrid"):
        answer = search(indexed, query, mode)
        assert answer["mode"] == mode, answer.get("notes")
        assert answer["results"][0]["path"] == path


def test_a_model_folder_answers_by_meaning(indexed):
    answer = search(indexed, "growing vegetables in a garden", "semantic")
    assert answer["mode"] == "semantic"
    assert answer["results"][0]["path"] == "other.md"


def test_status_names_the_model_folder(indexed):
    root, model, env = indexed
    done = run_explorer("status", root, "--model", model, "--json", env=env, check=True)
    status = json.loads(done.stdout)
    assert status["model"] == str(model)
    assert status["vectors"] == status["chunks"]
