"""Whether the live writer may embed: the document model is loaded and the vector server answers.

:class:`EmbeddingReadiness` is mixed into :class:`~explorer.core.live.writer.LiveIndex`: the model
loads
on a helper thread while the writer goes on with keywords, and a lost Chroma server is probed
while the writer is idle (see :mod:`explorer.core.live.writer`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from explorer.config import Settings
from explorer.core.indexing.indexer import Indexer
from explorer.core.indexing.report import IndexReport
from explorer.core.live.events import (
    ErrorEvent,
    LiveEvent,
    ModelState,
    ModelStateEvent,
    VectorsStateEvent,
    one_line,
)
from explorer.core.store.index import Index
from explorer.core.store.vectors import VectorStoreUnavailable

log = logging.getLogger(__name__)


class EmbeddingReadiness:
    """The model and vector-server methods of :class:`~explorer.core.live.writer.LiveIndex`, a
    mixin:
    the live index sets the state below in its ``__init__`` and provides ``_emit``."""

    settings: Settings
    index: Index
    _cond: threading.Condition
    _model: ModelState
    _loaded: tuple[ModelState, str] | None
    _embed_needed: bool
    _awaiting: set[str]
    _vectors_down: bool
    _reconcile_needed: bool
    _emit: Callable[[LiveEvent], None]

    # -- the vector server --------------------------------------------------------------------
    def _vectors_lost(self, error: Exception) -> None:
        if not self._vectors_down:
            self._vectors_down = True
            self._emit(VectorsStateEvent(False, one_line(error)))

    def _probe_server(self, indexer: Indexer) -> None:
        """Ask the server if it answers; on its return, reconcile if needed and embed again."""
        try:
            self.index.vectors.heartbeat()
            if self._reconcile_needed:
                indexer.reconcile_vectors(IndexReport())
                self._reconcile_needed = False
        except VectorStoreUnavailable as error:
            self._vectors_lost(error)
            return
        except Exception:  # noqa: BLE001 - an odd answer: try again at the next probe
            log.exception("probing the vector server failed")
            return
        if self._vectors_down:
            self._vectors_down = False
            self._embed_needed = self._model != ModelState.FAILED
            self._emit(
                VectorsStateEvent(True, f"vectors available again at {self.index.vector_location}")
            )

    # -- the model ----------------------------------------------------------------------------
    def _model_usable(self) -> bool:
        """True if embedding may run now; starts loading the model on first need."""
        if self._model == ModelState.READY:
            return True
        if self._model == ModelState.UNLOADED:
            counts = self.index.keywords.counts()
            if counts["chunks"] <= counts["embedded"]:
                return True  # nothing to embed: only files to finish, no model needed
            self._model = ModelState.LOADING
            self._emit(ModelStateEvent(ModelState.LOADING, f"loading model {self.settings.model}"))
            threading.Thread(target=self._load_model, name="explorer-model", daemon=True).start()
            return False
        if self._model == ModelState.LOADING and self._load_finished():
            self._model, message = self._loaded or (ModelState.FAILED, "")
            self._emit(ModelStateEvent(self._model, message))
            if self._model == ModelState.READY:
                return True
            self._emit(ErrorEvent(f"semantic search unavailable: {message}"))
        if self._model == ModelState.FAILED:
            self._embed_needed = False
            self._awaiting.clear()
        return False

    def _load_model(self) -> None:
        """On a helper thread: load the model (query path first: searches need it sooner)."""
        try:
            for method in ("load_query_path", "load_document_model"):
                load = getattr(self.index.embedder, method, None)
                if load is not None:
                    load()
            outcome = (ModelState.READY, f"model {self.settings.model} ready")
        except Exception as error:  # noqa: BLE001 - any failure means keyword-only search
            log.exception("loading the model failed")
            outcome = (ModelState.FAILED, one_line(error))
        with self._cond:
            self._loaded = outcome
            self._cond.notify_all()

    def _load_finished(self) -> bool:  # a load ended that the writer has not reported yet
        return self._model == ModelState.LOADING and self._loaded is not None
