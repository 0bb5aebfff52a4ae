"""Opening a Markdown page in the preview: Textual's widget against the preview's own.

Takes the Markdown pages of each folder that the preview renders as a document (not the long
ones it draws line for line), a random sample of them (seed 62), and shows each in a window of
the given size with Textual's ``Markdown`` and with the preview's ``PreviewMarkdown``, one window
at a time: each round shows every page in one, then in the other, the order alternating round
by round, the preview's own parser in both; a page's time is the median of its rounds. It runs
from the update to the end of the refresh after it (the blocks mounted, styled, laid out and
painted once); each window is warmed on a page first. Prints p50 / p90 / max per folder and
widget, their ratio, and the widgets each mounted::

    python benchmarks/markdown_open.py ../shared/corpora/nginx-docs \\
        ../shared/corpora/vaultofknowledge sample_docs
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import statistics
import time
from pathlib import Path

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from explorer.tui.widgets.markdown_blocks import PreviewMarkdown
from explorer.tui.widgets.markdown_parser import preview_parser
from explorer.tui.widgets.preview_loading import MARKDOWN_SUFFIXES, load_file

WIDGETS: dict[str, type[Markdown]] = {"textual": Markdown, "preview": PreviewMarkdown}
WARM = "# Warm\n\n- a\n- b\n\n1. one\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quote\n"


def rendered_pages(root: Path, count: int) -> list[tuple[str, str]]:
    """``count`` pages of ``root`` (at random, seed 62) that the preview renders as Markdown."""
    files = sorted(p for p in root.rglob("*") if p.suffix.lower() in MARKDOWN_SUFFIXES)
    random.Random(62).shuffle(files)
    pages = []
    for path in files:
        name = str(path.relative_to(root))
        loaded = load_file(name, path)
        if loaded.kind == "markdown" and loaded.text.strip():
            pages.append((name, loaded.text))
            if len(pages) == count:
                break
    return pages


class Pane(App[None]):
    """A scrolling pane holding one of the two widgets."""

    def __init__(self, widget: type[Markdown]) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield self.widget(open_links=False, parser_factory=preview_parser)


async def time_widget(
    widget: type[Markdown], pages: list[tuple[str, str]], size: tuple[int, int]
) -> list[tuple[float, int]]:
    """(milliseconds, widgets mounted) per page, shown one after another in one window."""
    app = Pane(widget)
    times = []
    async with app.run_test(size=size) as pilot:
        markdown = app.query_one(Markdown)
        await markdown.update(WARM)
        await pilot.pause()
        for _name, text in pages:
            gc.collect()  # the last page's garbage is not this page's cost
            started = time.perf_counter()
            await markdown.update(text)
            await pilot.pause()
            times.append(((time.perf_counter() - started) * 1000, len(markdown.query("*"))))
    return times


def time_pages(
    pages: list[tuple[str, str]], size: tuple[int, int], rounds: int
) -> dict[str, list[tuple[float, int]]]:
    """Each widget's median (milliseconds, widgets mounted) per page over ``rounds`` rounds,
    one window at a time, the widgets' order alternating round by round."""
    runs: dict[str, list[list[tuple[float, int]]]] = {name: [] for name in WIDGETS}
    for number in range(rounds):
        order = list(WIDGETS) if number % 2 == 0 else list(reversed(WIDGETS))
        for name in order:
            runs[name].append(asyncio.run(time_widget(WIDGETS[name], pages, size)))
    medians: dict[str, list[tuple[float, int]]] = {}
    for name, page_runs in runs.items():
        medians[name] = [
            (statistics.median(run[page][0] for run in page_runs), page_runs[0][page][1])
            for page in range(len(pages))
        ]
    return medians


def quantile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("roots", nargs="+", type=Path)
    parser.add_argument("--pages", type=int, default=120)
    parser.add_argument("--size", default="120x40", help="the window, columns x rows")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    columns, rows = (int(part) for part in args.size.split("x"))
    print(f"window {columns}x{rows}, up to {args.pages} pages a folder")
    print("| folder | pages | widget | p50 ms | p90 ms | max ms | widgets (median) |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for root in args.roots:
        pages = rendered_pages(root, args.pages)
        times = time_pages(pages, (columns, rows), args.rounds)
        p50s = {}
        for name, values in times.items():
            ms = [elapsed for elapsed, _widgets in values]
            widgets = statistics.median(count for _ms, count in values)
            p50s[name] = statistics.median(ms)
            print(
                f"| {root.name} | {len(pages)} | {name} | {p50s[name]:.1f} | "
                f"{quantile(ms, 0.9):.1f} | {max(ms):.1f} | {widgets:.0f} |"
            )
        ratios = [p / t for (p, _), (t, _) in zip(times["preview"], times["textual"], strict=True)]
        print(
            f"| {root.name} | | preview / textual, per page | median "
            f"{statistics.median(ratios):.2f} | p90 {quantile(ratios, 0.9):.2f} | | |"
        )


if __name__ == "__main__":
    main()
