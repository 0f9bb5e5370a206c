"""Answer size and call time per action: Northstar's MCP server and Microsoft's playwright-mcp.

Both servers are driven by the MCP SDK's own client over stdio, with the same steps on
the fixture site's flows (started here on 127.0.0.1): the contact form (fill, choose,
send) and the admin-like post form with its related-object popup (open the popup, save a
category in it, save the post). Every step is one tool call that acts and answers what
the page shows after it: Northstar's ``act`` (its ``observe`` for the first look and for
the popup); playwright-mcp's ``browser_*`` tools, whose answers link their snapshot as a
file, plus one ``browser_snapshot`` per page change (a new document or tab). Characters
are those of every content block plus the structured content's JSON, as a client
receives them; each server's first step includes launching its browser.

Install playwright-mcp from the npm registry (``npm install @playwright/mcp``) and pass
its entry point; it runs with the system Chromium, headless:

    .venv/bin/python scripts/mcp_size_comparison.py \\
        --playwright-mcp /path/to/node_modules/.bin/playwright-mcp
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fixtures.site_server import FixtureSite

_REF = re.compile(r"\[ref=([^\]]+)\]")


@dataclass
class Measured:
    """Characters and seconds per step of one flow on one server."""

    steps: list[tuple[str, int, float]] = field(default_factory=list)

    def total(self) -> tuple[int, float]:
        return sum(c for _, c, _ in self.steps), sum(t for _, _, t in self.steps)


def size(result: CallToolResult) -> int:
    """What the client received: every text block, plus the structured content as JSON."""
    chars = sum(len(getattr(block, "text", "") or "") for block in result.content)
    if result.structured_content is not None:
        compact = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
        chars += len(compact)  # as the SDK sends it: compact JSON
    return chars


def text_of(result: CallToolResult) -> str:
    if result.is_error:
        raise RuntimeError(f"tool error: {result.content}")
    return "\n".join(getattr(block, "text", "") or "" for block in result.content)


def ref_of(text: str, label: str) -> str:
    for line in text.splitlines():
        found = _REF.search(line)
        if label in line and found:
            return found.group(1)
    raise RuntimeError(f"no reference for {label!r} in:\n{text[:2000]}")


class Timed:
    """Calls on one client, each measured as one step of the flow."""

    def __init__(self, client: Client, measured: Measured) -> None:
        self.client, self.measured = client, measured

    async def call(
        self, step: str, tool: str, arguments: dict[str, Any], *, snapshot: bool = False
    ) -> str:
        """One step; ``snapshot``: the page changed, and playwright-mcp's action answers
        link their snapshot as a file, so the step includes its ``browser_snapshot``."""
        started = time.perf_counter()
        result = await self.client.call_tool(tool, arguments)
        chars, text = size(result), text_of(result)
        if snapshot:
            shown = await self.client.call_tool("browser_snapshot", {})
            chars, text = chars + size(shown), text_of(shown)
        elapsed = time.perf_counter() - started
        self.measured.steps.append((step, chars, elapsed))
        return text


# Northstar's steps


async def northstar_open(timed: Timed, start: str) -> tuple[dict[str, str], str]:
    """``open_session`` then the first ``observe``, measured as one step."""
    began = time.perf_counter()
    opened = await timed.client.call_tool("open_session", {"tabs": {"main": {"start": start}}})
    assert opened.structured_content is not None
    session = {k: opened.structured_content[k] for k in ("session_id", "credential")}
    page = await timed.call("open+look", "observe", {**session, "tab": "main"})
    step, chars, seconds = timed.measured.steps[-1]
    seconds = time.perf_counter() - began
    timed.measured.steps[-1] = (step, chars + size(opened), seconds)
    return session, page


async def northstar_form(timed: Timed, base: str) -> None:
    s, page = await northstar_open(timed, f"{base}/form")
    act = {**s, "tab": "main"}
    await timed.call(
        "fill name",
        "act",
        {**act, "action": "fill", "ref": ref_of(page, 'textbox "Name"'), "value": "Ada"},
    )
    await timed.call(
        "fill email",
        "act",
        {
            **act,
            "action": "fill",
            "ref": ref_of(page, 'textbox "Email"'),
            "value": "ada@example.com",
        },
    )
    await timed.call(
        "choose topic",
        "act",
        {**act, "action": "select", "ref": ref_of(page, 'combobox "Topic"'), "value": "sales"},
    )
    await timed.call(
        "send",
        "act",
        {**act, "action": "click", "ref": ref_of(page, 'button "Send"'), "submit": True},
    )
    await timed.client.call_tool("close_session", s)


async def northstar_admin(timed: Timed, base: str) -> None:
    s, page = await northstar_open(timed, f"{base}/admin/posts/add")
    main = {**s, "tab": "main"}
    popup = {**s, "tab": "popup-1"}
    await timed.call(
        "fill title",
        "act",
        {**main, "action": "fill", "ref": ref_of(page, 'textbox "Title"'), "value": "Spring"},
    )
    await timed.call(
        "open popup",
        "act",
        {**main, "action": "click", "ref": ref_of(page, 'link "Add another category"')},
    )
    shown = await timed.call("look at popup", "observe", popup)
    await timed.call(
        "fill name",
        "act",
        {**popup, "action": "fill", "ref": ref_of(shown, 'textbox "Name"'), "value": "Garden"},
    )
    await timed.call(
        "save popup",
        "act",
        {**popup, "action": "click", "ref": ref_of(shown, 'button "Save"'), "submit": True},
    )
    await timed.call(
        "save post",
        "act",
        {**main, "action": "click", "ref": ref_of(page, 'button "Save"'), "submit": True},
    )
    await timed.client.call_tool("close_session", s)


# playwright-mcp's steps


async def playwright_form(timed: Timed, base: str) -> None:
    page = await timed.call("open+look", "browser_navigate", {"url": f"{base}/form"}, snapshot=True)

    def on(label: str) -> dict[str, str]:
        return {"element": label, "target": ref_of(page, label)}

    await timed.call("fill name", "browser_type", {**on('textbox "Name"'), "text": "Ada"})
    await timed.call(
        "fill email", "browser_type", {**on('textbox "Email"'), "text": "ada@example.com"}
    )
    await timed.call(
        "choose topic", "browser_select_option", {**on('combobox "Topic"'), "values": ["sales"]}
    )
    await timed.call("send", "browser_click", on('button "Send"'), snapshot=True)


async def playwright_admin(timed: Timed, base: str) -> None:
    page = await timed.call(
        "open+look", "browser_navigate", {"url": f"{base}/admin/posts/add"}, snapshot=True
    )

    def on(text: str, label: str) -> dict[str, str]:
        return {"element": label, "target": ref_of(text, label)}

    await timed.call(
        "fill title", "browser_type", {**on(page, 'textbox "Title"'), "text": "Spring"}
    )
    await timed.call("open popup", "browser_click", on(page, 'link "Add another category"'))
    shown = await timed.call(
        "look at popup", "browser_tabs", {"action": "select", "index": 1}, snapshot=True
    )
    await timed.call("fill name", "browser_type", {**on(shown, 'textbox "Name"'), "text": "Garden"})
    await timed.call("save popup", "browser_click", on(shown, 'button "Save"'))
    page = await timed.call(
        "back to the form", "browser_tabs", {"action": "select", "index": 0}, snapshot=True
    )
    await timed.call("save post", "browser_click", on(page, 'button "Save"'), snapshot=True)


Flow = Callable[[Timed, str], Awaitable[None]]
FLOWS: dict[str, tuple[Flow, Flow]] = {
    "contact form": (northstar_form, playwright_form),
    "admin popup": (northstar_admin, playwright_admin),
}


def northstar_server(work: Path) -> StdioServerParameters:
    entry = "from northstar.__main__ import main; main()"
    args = ["-c", entry, "mcp", "--recipes", str(work / "recipes"), "--journal", str(work / "j.db")]
    (work / "recipes").mkdir(exist_ok=True)
    return StdioServerParameters(command=sys.executable, args=args, cwd=str(work))


def playwright_server(entry: str, work: Path) -> StdioServerParameters:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    # --no-sandbox: Chromium refuses its sandbox to root (as in containers); Northstar
    # launches it the same way there.
    args = ["--executable-path", chromium, "--headless", "--isolated", "--no-sandbox"]
    return StdioServerParameters(command=entry, args=args, cwd=str(work))


async def measure(server: StdioServerParameters, flow: Flow, base: str) -> Measured:
    measured = Measured()
    async with Client(server) as client:
        await flow(Timed(client, measured), base)
    return measured


def table(results: dict[str, tuple[Measured, Measured]]) -> str:
    lines = [
        "| flow | step | Northstar chars | playwright-mcp chars | Northstar s | playwright-mcp s |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for flow, (ours, theirs) in results.items():
        steps = dict((s, (c, t)) for s, c, t in theirs.steps)
        for step, chars, seconds in ours.steps:
            c2, t2 = steps.get(step, (0, 0.0))
            lines.append(f"| {flow} | {step} | {chars} | {c2} | {seconds:.2f} | {t2:.2f} |")
        for step, c2, t2 in theirs.steps:
            if step not in {s for s, _, _ in ours.steps}:
                lines.append(f"| {flow} | {step} | - | {c2} | - | {t2:.2f} |")
        (oc, ot), (tc, tt) = ours.total(), theirs.total()
        lines.append(
            f"| {flow} | **total** | {oc} | {tc} (ratio {oc / tc:.2f}x) | {ot:.2f} | "
            f"{tt:.2f} (ratio {ot / tt:.2f}x) |"
        )
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--playwright-mcp", required=True, help="playwright-mcp's entry point")
    args = parser.parse_args()
    results: dict[str, tuple[Measured, Measured]] = {}
    with FixtureSite() as site, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, (ours, theirs) in FLOWS.items():
            site.reset()
            mine = await measure(northstar_server(work), ours, site.base_url)
            site.reset()
            other = await measure(
                playwright_server(args.playwright_mcp, work), theirs, site.base_url
            )
            results[name] = (mine, other)
    print(table(results))


if __name__ == "__main__":
    asyncio.run(main())
