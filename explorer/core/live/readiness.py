"""Whether the live writer may embed: the document model is loaded and the vector server answers.

A :class:`~explorer.core.live.writer.LiveIndex` holds one :class:`EmbeddingReadiness`: the model
loads on a helper thread while the writer goes on with keywords, and a lost Chroma server is
probed while the writer is idle (see :mod:`explorer.core.live.writer`). Each change is sent as an
event through the writer's ``emit``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from explorer.core.indexing.report import IndexReport
from explorer.core.indexing.vector_phase import VectorPhase
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
    """The document model's state and the vector server's reachability, for one live index."""

    def __init__(
        self,
        index: Index,
        model_name: str,
        emit: Callable[[LiveEvent], None],
        wake: threading.Condition,
    ) -> None:
        """``emit`` sends events; ``wake`` is the writer's condition, notified (and guarding
        the result) when the model has loaded, so an idle writer goes on at once."""
        self.index = index
        self.model_name = model_name
        self._emit = emit
        self._wake = wake
        self.model = ModelState.UNLOADED
        """unloaded -> loading -> ready | failed, as the writer has seen it."""
        self._loaded: tuple[ModelState, str] | None = None  # left by the loading thread
        self.vectors_down = False
        """True while the Chroma server does not answer."""
        self.reconcile_needed = False
        """The initial sync could not reach the vector store: reconcile when it is back."""

    # -- the vector server --------------------------------------------------------------------
    def vectors_lost(self, error: Exception) -> None:
        """The vector store stopped answering (said once, until it is back)."""
        if not self.vectors_down:
            self.vectors_down = True
            self._emit(VectorsStateEvent(False, one_line(error)))

    def probe_server(self, vector_phase: VectorPhase) -> bool:
        """Ask the server if it answers; on its return, reconcile if needed. True when it came
        back just now (the writer then embeds again)."""
        try:
            self.index.vectors.heartbeat()
            if self.reconcile_needed:
                vector_phase.reconcile_vectors(IndexReport())
                self.reconcile_needed = False
        except VectorStoreUnavailable as error:
            self.vectors_lost(error)
            return False
        # Chroma's client may answer a half-started server with nearly any error: asked
        # again at the next probe, so none of them may reach the writer.
        except Exception:
            log.exception("probing the vector server failed")
            return False
        if not self.vectors_down:
            return False
        self.vectors_down = False
        self._emit(
            VectorsStateEvent(True, f"vectors available again at {self.index.vector_location}")
        )
        return True

    # -- the model ----------------------------------------------------------------------------
    def model_usable(self) -> bool:
        """True if embedding may run now; starts loading the model on first need."""
        if self.model == ModelState.READY:
            return True
        if self.model == ModelState.UNLOADED:
            counts = self.index.keywords.counts()
            if counts["chunks"] <= counts["embedded"]:
                return True  # nothing to embed: only files to finish, no model needed
            self.model = ModelState.LOADING
            self._emit(ModelStateEvent(ModelState.LOADING, f"loading model {self.model_name}"))
            waiting = counts["chunks"] - counts["embedded"]
            threading.Thread(
                target=self._load_model, args=(waiting,), name="explorer-model", daemon=True
            ).start()
            return False
        if self.model == ModelState.LOADING and self.load_finished():
            self.model, message = self._loaded or (ModelState.FAILED, "")
            self._emit(ModelStateEvent(self.model, message))
            if self.model == ModelState.READY:
                return True
            self._emit(ErrorEvent(f"semantic search unavailable: {message}"))
        return False

    def load_finished(self) -> bool:
        """A load ended that the writer has not taken up yet."""
        return self.model == ModelState.LOADING and self._loaded is not None

    def _load_model(self, waiting: int) -> None:
        """On a helper thread: load the model (query path first: searches need it sooner).
        ``waiting`` chunks are to be embedded: few enough, and the model's export embeds them
        (the full model, and torch, are not loaded; see ``load_document_model``)."""
        embedder = self.index.embedder
        try:
            load_query_path = getattr(embedder, "load_query_path", None)
            if load_query_path is not None:
                load_query_path()
            load_document_model = getattr(embedder, "load_document_model", None)
            if load_document_model is not None:
                load_document_model(waiting)
            outcome = (ModelState.READY, f"model {self.model_name} ready")
        # The boundary of the loading thread: whatever a model library raises (missing files,
        # bad weights, out of memory) means keyword-only search, said in one line.
        except Exception as error:
            log.exception("loading the model failed")
            outcome = (ModelState.FAILED, one_line(error))
        with self._wake:
            self._loaded = outcome
            self._wake.notify_all()
