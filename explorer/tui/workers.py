"""Worker failures, handled in one place.

Each widget owns its thread workers (the search, the manifest read, the related and links
lookups, the preview's loading) and catches only the failures it expects and can word itself
(an :class:`~explorer.core.errors.ExplorerError`, a missing vector). Anything else ends the worker
in Textual's ``ERROR`` state; Textual reports that with ``Worker.StateChanged`` to the widget
alone (the message does not bubble), so each worker-owning widget hands it on with
``on_worker_state_changed = report_worker_failure``, and the screen's one handler of
:class:`WorkerFailed` shows it: the widget says it in its own place (:class:`ShowsFailure`) and a
notification names it. No widget repeats the ``except Exception`` boilerplate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from textual.dom import DOMNode
from textual.message import Message
from textual.worker import Worker, WorkerState


@runtime_checkable
class ShowsFailure(Protocol):
    """A widget that can say, in its own place, that its worker failed."""

    def show_failure(self, worker: Worker[Any], text: str) -> None:
        """Show ``text`` (one line) for the failed ``worker`` (it may be a stale one)."""


@dataclass
class WorkerFailed(Message):
    """A widget's worker raised an error nobody expected."""

    node: DOMNode
    worker: Worker[Any]
    error: BaseException

    @property
    def text(self) -> str:
        """The failure in one line: the exception's type and message."""
        message = " ".join(str(self.error).split())
        name = type(self.error).__name__
        return f"{name}: {message}" if message else name


def report_worker_failure(node: DOMNode, event: Worker.StateChanged) -> None:
    """``on_worker_state_changed`` of a worker-owning widget: post a failure up to the screen."""
    worker = event.worker
    if event.state is WorkerState.ERROR and worker.error is not None:
        node.post_message(WorkerFailed(node, worker, worker.error))
