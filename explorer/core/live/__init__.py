"""Live: the watcher and the one writer thread that keep an index in step with its folder."""
