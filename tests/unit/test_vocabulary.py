"""The core's enums stand in for the strings they replaced: same text, same JSON, same rows."""

from __future__ import annotations

import json

import pytest

from explorer.core.live.events import EventKind, ModelStateEvent, ProgressEvent
from explorer.core.models import FileState, SearchMode, SyncPhase
from explorer.core.store.manifest_records import FileRecord


def test_a_mode_prints_and_serialises_as_its_word():
    assert f"{SearchMode.SEMANTIC}" == "semantic"
    assert json.dumps({"mode": SearchMode.KEYWORD}) == '{"mode": "keyword"}'
    assert SearchMode("hybrid") is SearchMode.HYBRID


def test_modes_cycle_in_the_order_the_toggle_shows():
    assert [SearchMode.HYBRID.next(), SearchMode.SEMANTIC.next(), SearchMode.KEYWORD.next()] == [
        SearchMode.SEMANTIC,
        SearchMode.KEYWORD,
        SearchMode.HYBRID,
    ]


def test_a_manifest_row_reads_back_as_a_typed_state():
    record = FileRecord.from_row(("a.md", 1, 2, "h", "pending", "", "A", 3, 0.5))
    assert record.state is FileState.PENDING
    with pytest.raises(ValueError):
        FileRecord.from_row(("a.md", 1, 2, "h", "stale", "", "A", 3, 0.5))


def test_events_carry_their_kind_and_typed_fields():
    event = ProgressEvent(SyncPhase.KEYWORDS, files_done=1, files_total=2)
    assert event.kind is EventKind.PROGRESS and event.phase == "keywords"
    assert ModelStateEvent.kind == "model_state"
