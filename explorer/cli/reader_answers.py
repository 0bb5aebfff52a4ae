"""The resident reader's answers: a checked request, answered through the core and printed by
the very functions a command run in its own process uses, into text instead of stdout and
stderr, with the exit status the command would give.

Only reads of the reader's own index: :func:`answer` refuses a request for another index or
root, and anything whose answer would write (``related`` on a file still waiting for its
vectors, a query encoder not yet exported into the index) or whose error message the client
says better (it names FILE as typed): the client then runs the command itself.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from explorer.api.requests import SearchOptions
from explorer.cli.commands import (
    ReadOnlyProcess,
    SearchOutput,
    links_answer,
    print_links,
    print_related,
    print_search,
    print_status,
    related_answer,
    search_answer,
    status_answer,
)
from explorer.cli.reader_protocol import (
    Answer,
    LinksCall,
    ReaderRequest,
    Refusal,
    RelatedCall,
    RequestRefused,
    SearchCall,
)
from explorer.cli.targets import stored_root
from explorer.core.models import SearchMode
from explorer.settings.config import Settings


def answer(request: ReaderRequest, own_index_dir: Path) -> Answer:
    """What the command of ``request`` prints on stdout and stderr, and its exit status;
    raises :class:`RequestRefused` for a request this reader does not answer (an error of the
    core's: ``FAILED``)."""
    settings = request.settings
    _check_own_index(settings, own_index_dir)
    out, err = io.StringIO(), io.StringIO()
    call = request.call
    status = 0
    try:
        if isinstance(call, SearchCall):
            status = _answer_search(settings, call, out, err)
        elif isinstance(call, RelatedCall):
            neighbours = related_answer(
                settings, call.path, call.limit, may_write=False, unlinked=call.unlinked
            )
            print_related(call.path, neighbours, call.as_json, out, call.unlinked)
        elif isinstance(call, LinksCall):
            found = links_answer(settings, call.path)
            if not found.exists and not found.backlinks:
                raise RequestRefused(Refusal.NOT_SERVED, f"no such file: {call.path}")
            print_links(found, call.as_json, out, err)
        else:
            print_status(status_answer(settings), call.as_json, out)
    except ReadOnlyProcess as error:
        raise RequestRefused(Refusal.NOT_SERVED, str(error)) from None
    return Answer(out.getvalue(), err.getvalue(), status)


def _answer_search(settings: Settings, call: SearchCall, out: io.StringIO, err: io.StringIO) -> int:
    from explorer.core.retrieval.agent_context import ContextOptions

    if call.mode is not SearchMode.KEYWORD and not _query_encoder_kept(settings):
        raise RequestRefused(
            Refusal.NOT_SERVED, "the query encoder is not exported into the index yet"
        )
    options = SearchOptions(
        mode=call.mode,
        paths=call.paths,
        exclude=call.exclude,
        tags=call.tags,
        versions=call.versions,
        limit=call.limit,
        offset=call.offset,
        per_file=call.per_file,
        min_score=call.min_score,
    )
    context = ContextOptions(
        content=call.content, max_tokens=call.max_tokens, metadata_only=call.metadata_only
    )
    found = search_answer(settings, call.query, options, context)
    output = SearchOutput(call.output, call.explain, call.offsets)
    return print_search(found, output, out, err)


def _check_own_index(settings: Settings, own_index_dir: Path) -> None:
    """Refuse settings for another index directory, or for a root other than the one the
    index records (an index that records none is taken: its next writer records it)."""
    try:
        same_dir = os.path.samefile(settings.index_dir, own_index_dir)
    except OSError:
        same_dir = False
    if not same_dir:
        raise RequestRefused(Refusal.ANOTHER_INDEX, f"this reader serves {own_index_dir}")
    stored = stored_root(own_index_dir)  # None: built before every writer recorded it
    if stored is not None and stored != settings.root:
        raise RequestRefused(Refusal.ANOTHER_INDEX, f"the index is not that of {settings.root}")


def _query_encoder_kept(settings: Settings) -> bool:
    """True when the index holds the query encoder's export (or the note that the model cannot
    be exported): a semantic query then writes nothing."""
    from explorer.core.embed.export_cache import EXPORT_DIR_NAME, read_manifest

    return read_manifest(settings.index_dir / EXPORT_DIR_NAME) is not None
