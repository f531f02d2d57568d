"""Filling missing vectors while `recallbench serve` runs, so hook-imported chunks become searchable.

Hooks store text and FTS rows only (they must stay quick and never load the model); the server, which
has the model loaded, embeds what is missing and refreshes the vector index in a background thread.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from recallbench.home_trust import describe_error, make_private_dir, open_private

if TYPE_CHECKING:
    from engine.memory import Memory

log = logging.getLogger("recallbench.serve")


class BackgroundEmbedder:
    """Fills missing vectors and refreshes the vector index while the server runs.

    Every `interval_s` it checks (cheaply) whether the stored vectors changed since the index was built;
    only then does it embed what is missing and rebuild. A file lock makes one server at a time do it
    when several run (Claude Code starts one per session).
    """

    def __init__(
        self,
        memory_factory: Callable[[], Memory],
        lock_path: Path,
        *,
        interval_s: float = 2.0,
        warm_up: bool = True,
    ) -> None:
        self._memory_factory = memory_factory
        self._lock_path = lock_path
        self._interval_s = interval_s
        self._warm_up = warm_up
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.passes = 0
        self.embedded = 0

    def start(self) -> BackgroundEmbedder:
        self._thread = threading.Thread(target=self._run, name="recallbench-embed-bg", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def run_once(self, memory: Memory) -> int:
        """Embed pending chunks and rebuild the index if the stored vectors changed; returns vectors added."""
        make_private_dir(self._lock_path.parent)
        fd = open_private(self._lock_path, os.O_RDWR)  # never through a planted symlink
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return 0  # another server is on it
            try:
                if memory.index_state() == "current":
                    return 0
                added = memory.embed_pending()
                memory.ensure_index()
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
        self.passes += 1
        self.embedded += added
        if added:
            log.info("embedded %d pending chunk(s)", added)
        return added

    def _run(self) -> None:
        try:
            memory = self._memory_factory()
            if self._warm_up and memory.embedder is not None:
                # Load the model now, so the first hook query is answered within its short timeout.
                memory.embedder.embed(["recallbench warm-up"])
        except Exception as exc:
            log.warning("background embedding disabled: %s", describe_error(exc))
            return
        try:
            while not self._stop.is_set():
                try:
                    self.run_once(memory)
                except Exception as exc:  # a failed pass is retried on the next tick
                    log.warning("background embedding pass failed: %s", describe_error(exc))
                self._stop.wait(self._interval_s)
        finally:
            memory.close()
