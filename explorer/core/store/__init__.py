"""Store: the manifest and keyword index (SQLite), the vector store (Chroma), and the index that
holds both."""
