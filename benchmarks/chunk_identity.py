"""Check that a change to the chunker leaves the chunks of text formats exactly as they were.

Chunks every file the scanner takes under each folder (with the index's default chunk size,
the bundled model's tokenizer, no embedding) and writes, per file, its chunks (a hash of the
text, the heading path, lines and character offsets), its metadata and its references. Run it
once on the code before the change (``--save``) and once after (``--compare``)::

    flock /tmp/explorer-cpu.lock python benchmarks/chunk_identity.py --save before.json \\
        sample_docs /work/shared/corpora/nginx-docs /work/shared/corpora/vaultofknowledge
    flock /tmp/explorer-cpu.lock python benchmarks/chunk_identity.py --compare before.json \\
        sample_docs /work/shared/corpora/nginx-docs /work/shared/corpora/vaultofknowledge

The comparison covers the files both runs chunked; it prints how many files and chunks are
identical and lists the first differences.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from explorer.core.embed.embedder import SentenceTransformerEmbedder
from explorer.core.ingest.chunker import chunk_file
from explorer.core.ingest.scanner import ScanRules, load_text, scan
from explorer.core.settings import IndexSettings


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def chunk_folder(folder: Path, token_spans: Any) -> dict[str, Any]:
    """Every scanned file's chunks, metadata and references, by path."""
    defaults = IndexSettings(root=folder, index_dir=folder)
    result = scan(folder, ScanRules(folder), defaults.max_file_bytes)
    files: dict[str, Any] = {}
    for scanned in result.files:
        loaded = load_text(scanned.abs_path, defaults.max_file_bytes)
        if isinstance(loaded, tuple):
            continue
        chunked = chunk_file(
            scanned.rel_path,
            loaded,
            token_spans,
            max_tokens=defaults.chunk_tokens,
            overlap_tokens=defaults.chunk_overlap,
        )
        files[scanned.rel_path] = {
            "chunks": [
                [
                    _digest(chunk.text),
                    chunk.heading_path,
                    chunk.start_line,
                    chunk.end_line,
                    chunk.start_char,
                    chunk.end_char,
                ]
                for chunk in chunked.chunks
            ],
            "metadata": dict(chunked.metadata),
            "notes": list(chunked.notes),
            "references": [
                [ref.line, str(ref.kind), ref.raw, ref.target, ref.alternative]
                for ref in chunked.references
            ],
        }
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", type=Path, nargs="+")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--save", type=Path)
    action.add_argument("--compare", type=Path)
    args = parser.parse_args()
    token_spans = SentenceTransformerEmbedder("all-MiniLM-L6-v2").token_spans
    started = time.perf_counter()
    now = {str(folder): chunk_folder(folder.resolve(), token_spans) for folder in args.folders}
    seconds = time.perf_counter() - started
    if args.save:
        args.save.write_text(json.dumps(now), encoding="utf-8")
        total = sum(len(files) for files in now.values())
        print(f"saved {total} files in {seconds:.1f} s to {args.save}")
        return
    before = json.loads(args.compare.read_text(encoding="utf-8"))
    differences: list[str] = []
    for folder, files in now.items():
        old = before.get(folder, {})
        common = sorted(set(files) & set(old))
        same_files = same_chunks = chunks = 0
        for path in common:
            chunks += len(old[path]["chunks"])
            if files[path] == old[path]:
                same_files += 1
                same_chunks += len(old[path]["chunks"])
            else:
                for key in ("chunks", "metadata", "notes", "references"):
                    if files[path][key] != old[path][key]:
                        differences.append(f"{folder}/{path}: {key} differ")
        print(
            f"{folder}: {same_files}/{len(common)} files identical "
            f"({same_chunks}/{chunks} chunks); "
            f"{len(set(files) - set(old))} new files, {len(set(old) - set(files))} gone"
        )
    for line in differences[:40]:
        print(line)
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
