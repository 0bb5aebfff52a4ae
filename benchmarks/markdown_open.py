"""Opening a Markdown page in the preview: Textual's widget against the preview's own.

Takes the Markdown pages of each folder that the preview renders as a document (not the long
ones it draws line for line), a random sample of them (seed 62), and shows each in a window of
the given size with Textual's ``Markdown`` and with the preview's ``PreviewMarkdown``, one window
at a time: each round shows every page in one, then in the other, the order alternating round
by round, the preview's own parser in both; a page's time is the median of its rounds. It runs
from the update to the end of the refresh after it (the blocks mounted, styled, laid out and
painted once); then the window is narrowed to two thirds of its width (the time to lay the
page out again, as a zoom does to the pane) and widened back; each window is warmed on a page
first. Prints p50 / p90 / max per folder, widget and measure, their ratio, and the widgets
each mounted::

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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class PageTime:
    """One page in one widget: milliseconds to open it, to lay it out again at another
    width (what a zoom does to the pane), and the widgets it mounted."""

    open_ms: float
    resize_ms: float
    widgets: int


async def time_widget(
    widget: type[Markdown], pages: list[tuple[str, str]], size: tuple[int, int]
) -> list[PageTime]:
    """Each page's times, the pages shown one after another in one window."""
    app = Pane(widget)
    columns, rows = size
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
            opened = time.perf_counter()
            await pilot.resize_terminal(columns * 2 // 3, rows)
            await pilot.pause()
            resized = time.perf_counter()
            await pilot.resize_terminal(columns, rows)
            await pilot.pause()
            times.append(
                PageTime(
                    (opened - started) * 1000,
                    (resized - opened) * 1000,
                    len(markdown.query("*")),
                )
            )
    return times


def time_pages(
    pages: list[tuple[str, str]], size: tuple[int, int], rounds: int
) -> dict[str, list[PageTime]]:
    """Each widget's median times per page over ``rounds`` rounds, one window at a time, the
    widgets' order alternating round by round."""
    runs: dict[str, list[list[PageTime]]] = {name: [] for name in WIDGETS}
    for number in range(rounds):
        order = list(WIDGETS) if number % 2 == 0 else list(reversed(WIDGETS))
        for name in order:
            runs[name].append(asyncio.run(time_widget(WIDGETS[name], pages, size)))
    medians: dict[str, list[PageTime]] = {}
    for name, page_runs in runs.items():
        medians[name] = [
            PageTime(
                statistics.median(run[page].open_ms for run in page_runs),
                statistics.median(run[page].resize_ms for run in page_runs),
                page_runs[0][page].widgets,
            )
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
    print("| folder | pages | widget | measure | p50 ms | p90 ms | max ms | widgets (median) |")
    print("|---|---:|---|---|---:|---:|---:|---:|")
    for root in args.roots:
        pages = rendered_pages(root, args.pages)
        times = time_pages(pages, (columns, rows), args.rounds)
        for measure in ("open", "resize"):
            for name, values in times.items():
                ms = [getattr(value, f"{measure}_ms") for value in values]
                widgets = statistics.median(value.widgets for value in values)
                print(
                    f"| {root.name} | {len(pages)} | {name} | {measure} | "
                    f"{statistics.median(ms):.1f} | {quantile(ms, 0.9):.1f} | {max(ms):.1f} | "
                    f"{widgets:.0f} |"
                )
            ratios = [
                getattr(ours, f"{measure}_ms") / getattr(theirs, f"{measure}_ms")
                for ours, theirs in zip(times["preview"], times["textual"], strict=True)
            ]
            print(
                f"| {root.name} | | preview / textual, per page | {measure} | median "
                f"{statistics.median(ratios):.2f} | p90 {quantile(ratios, 0.9):.2f} | | |"
            )


if __name__ == "__main__":
    main()
