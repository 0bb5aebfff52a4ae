"""The core: files, chunks, vectors, keywords and ranking. It never imports Textual."""
