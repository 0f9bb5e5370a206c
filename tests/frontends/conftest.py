"""Every front end, driven the way its users drive it, behind one small interface.

A case is written once, as a ``Flow`` (a tab that opens on a fixture-site page and the
acts done there), and run through the ``front_end`` fixture, which is parametrized over:

- ``cli``: the flow as a recipe, run by ``northstar run`` in a child process;
- ``program``: the flow as a Python program, run by ``northstar run program.py``;
- ``mcp``: the flow as an agent's calls on ``northstar mcp`` over stdio, through the
  ``mcp`` SDK's own client;
- ``worker``: the flow as a recipe queued with ``run --queue`` and served by a
  ``northstar worker`` process on a throwaway Postgres.

``await front_end.run_flow(flow)`` returns ``Said``: everything the front end answered or
printed (``text``, for checks that something is refused or never shown) and the run's
status in its journal. A guard case for every front end is one parametrized test:

    async def test_x(front_end: FrontEnd, site: FixtureSite) -> None:
        said = await front_end.run_flow(Flow("/form", (Act("goto", value="file:///etc/passwd"),)))
        assert "ORIGIN_BLOCKED" in said.text and "root:" not in said.text

``submit_twice(flow)`` asks the flow's submission a second time, the way the front end
can be asked again: in one agent session or program iteration, the tab goes back to the
start and the same acts (the same submission, under the same key) are done again; for a
recipe run and a queued run, again after its worker was killed right after the
submission left the browser (a resume of the run, or the queue redelivering the
iteration to a restarted worker), then the run is reconciled.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from fixtures.site_server import FixtureSite
from fixtures.worker_processes import Worker
from northstar import readers
from tests.cli.test_stopping import Worker as CliProcess

ENTRY = "from northstar.__main__ import main; main()"
RUN_ID = re.compile(r"\b(r-[0-9a-f]{12})\b")
TIMEOUT_S = 180  # a child process that hangs fails its test instead of hanging it
FRONT_ENDS = ("cli", "program", "mcp", "worker")


@dataclass(frozen=True)
class Act:
    """One act on the flow's tab: ``goto`` (``value`` a URL), ``fill``, ``click``, ``press``
    (``value`` a key), ``upload``, or ``verify`` (``value`` a URL glob the tab must reach).

    ``submit`` makes it a submission (at most once); ``expect`` are its own checks and
    ``reconcile`` the read-only probe a recipe or program declares for it. ``options`` are
    the recipe step's extra fields (``button: middle``), for the front ends that read
    recipes. A ``value`` may hold ``{{ secret }}``: the flow's secret, however the front
    end is given one.
    """

    action: str
    target: Mapping[str, Any] | None = None
    value: str | None = None
    submit: bool = False
    expect: tuple[Mapping[str, Any], ...] = ()
    reconcile: tuple[Mapping[str, Any], ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Flow:
    """A tab role ``site`` opened at ``start`` (a path on the fixture site), and its acts.

    ``secret``: the value of the flow's secret parameter ``secret`` (``-p`` for a recipe or
    a program); an agent has none, it learns the value by typing it into a password field.
    """

    start: str
    acts: tuple[Act, ...]
    secret: str | None = None


SECRET_SLOT = "{{ secret }}"
VERIFY_TIMEOUT_MS = 400  # a check that is meant to fail: short, so its failure is quick


@dataclass
class Said:
    """What a front end answered: every line it printed or answer it gave, and the run's end."""

    text: str
    status: str | None = None  # the run's status in the journal (an agent session's too)
    exit_codes: list[int] = field(default_factory=list)


def post_flow(title: str) -> Flow:
    """The fixture site's post form, filled and published once: a submission with a probe."""
    return Flow(
        "/posts/new",
        (
            Act("fill", target={"label": "Title"}, value=title),
            Act(
                "click",
                target={"role": "button", "name": "Publish"},
                submit=True,
                expect=({"url": "**/posts?created=*"},),
                reconcile=(
                    {"goto": f"/posts?q={title}"},
                    {"check": {"visible": {"role": "link", "name": title, "exact": True}}},
                ),
            ),
        ),
    )


def _environ(journal: str | Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NORTHSTAR_")}
    return env | {"NORTHSTAR_JOURNAL": str(journal), **(extra or {})}


async def northstar(*args: str, cwd: Path, journal: str | Path) -> subprocess.CompletedProcess[str]:
    """The real CLI in a child process, off the event loop."""
    return await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", ENTRY, *args],
        cwd=cwd,
        env=_environ(journal),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


def _status(journal: str | Path, text: str) -> str | None:
    found = RUN_ID.search(text)
    return readers.get_run(journal, found[1]).summary.status if found else None


class FrontEnd:
    """A way in to the host; see the module docstring."""

    name = ""

    def __init__(self, site: FixtureSite, folder: Path) -> None:
        self.site, self.folder = site, folder

    async def run_flow(self, flow: Flow) -> Said:
        raise NotImplementedError

    async def submit_twice(self, flow: Flow) -> Said:
        raise NotImplementedError


def recipe_text(flow: Flow) -> str:
    """The flow as a recipe: one step per act, a submission with its expectations and probe."""
    steps = []
    for number, act in enumerate(flow.acts, start=1):
        step: dict[str, Any] = {"id": f"s{number}", "tab": "site"}
        if act.action == "goto":
            step["goto"] = act.value
        elif act.action == "verify":
            step |= {"timeout": VERIFY_TIMEOUT_MS, "verify_outcome": {"url": act.value}}
        else:
            body: dict[str, Any] = {"target": dict(act.target or {}), **act.options}
            if act.action == "fill":
                body["value"] = act.value
            if act.action == "upload":
                body["files"] = [act.value]
            step[act.action] = body
        if act.submit:
            step |= {"effect": "submit", "settle": 0}
            step |= {"expect": list(act.expect), "reconcile": list(act.reconcile)}
        steps.append(step)
    recipe: dict[str, Any] = {"name": "front-end-case"}
    if flow.secret is not None:
        recipe["params"] = {"secret": {"type": "string", "secret": True, "required": True}}
    recipe |= {"tabs": {"site": {"start": "{{ base_url }}" + flow.start}}, "steps": steps}
    return yaml.safe_dump(recipe, sort_keys=False)


def secret_args(flow: Flow) -> tuple[str, ...]:
    """The flow's secret as the CLI is given a parameter."""
    return () if flow.secret is None else ("-p", f"secret={flow.secret}")


class RecipeCli(FrontEnd):
    """``northstar run recipe.yaml`` in a child process; a kill, ``resume`` and ``reconcile``."""

    name = "cli"

    @property
    def journal(self) -> Path:
        return self.folder / "journal.db"

    def _recipe(self, flow: Flow) -> Path:
        path = self.folder / "case.yaml"
        path.write_text(recipe_text(flow), encoding="utf-8")
        return path

    async def _cli(self, said: Said, *args: str) -> None:
        done = await northstar(*args, cwd=self.folder, journal=self.journal)
        said.text += done.stdout + done.stderr
        said.exit_codes.append(done.returncode)

    async def run_flow(self, flow: Flow) -> Said:
        said = Said("")
        run = ("run", str(self._recipe(flow)), "--base-url", self.site.base_url)
        await self._cli(said, *run, *secret_args(flow))
        said.status = _status(self.journal, said.text)
        return said

    async def submit_twice(self, flow: Flow) -> Said:
        run = ["run", str(self._recipe(flow)), "--base-url", self.site.base_url]
        said = Said(await asyncio.to_thread(self._killed_after_dispatch, run))
        run_id = RUN_ID.search(said.text)
        assert run_id is not None, said.text
        await self._cli(said, "resume", run_id[1])  # asked again: refused, it is blocked
        await self._cli(said, "reconcile", run_id[1])  # the probe finds it: verified
        said.status = readers.get_run(self.journal, run_id[1]).summary.status
        return said

    def _killed_after_dispatch(self, args: list[str]) -> str:
        """Run until the submission left the browser, then SIGKILL the run's process group."""
        armed = {"NORTHSTAR_FAILPOINT": "after_dispatch@1"}
        run = CliProcess.start(args, self.folder, env=armed)  # journal.db in the folder
        try:
            run.wait_for("failpoint after_dispatch 1")
        finally:
            os.killpg(run.proc.pid, signal.SIGKILL)
            run.finish()
        return "".join(run.seen)


def again(flow: Flow, start: str) -> Flow:
    """The flow, then its tab back at ``start`` and every act again: the same submission."""
    return replace(flow, acts=(*flow.acts, Act("goto", value=start), *flow.acts))


def program_text(flow: Flow) -> str:
    """The flow as a program: one SDK call per act; a submission under one key."""
    declared: dict[str, Any] = {"name": "front-end-case"}
    if flow.secret is not None:
        declared["params"] = {"secret": {"type": "string", "secret": True, "required": True}}
    declared["tabs"] = {"site": {"start": "{{ base_url }}" + flow.start}}
    lines = [
        "from northstar.sdk import Session",
        "",
        "PROGRAM = " + repr(declared),
        "",
        "",
        "async def main(nx: Session) -> None:",
        '    site = nx.tab("site")',
    ]
    for act in flow.acts:
        lines.append(f"    answer = await site.{_sdk_call(act)}")
        lines.append('    print("answer", answer, flush=True)')
    lines.append("    await nx.complete()")
    return "\n".join(lines) + "\n"


def _sdk_value(value: str | None) -> str:
    """A Python expression for ``value``: the secret comes from the program's parameters."""
    if value is None or SECRET_SLOT not in value:
        return repr(value)
    before, _, after = value.partition(SECRET_SLOT)
    return f"{before!r} + nx.params['secret'] + {after!r}"


def _sdk_call(act: Act) -> str:
    target = dict(act.target or {})
    value = _sdk_value(act.value)
    options = ""
    if act.submit:  # one key: the second call is the same submission
        options = f", submit=True, key='case', expect={list(act.expect)!r}"
        options += f", reconcile={list(act.reconcile)!r}"
    if act.action == "goto":
        return f"goto({value})"
    if act.action == "verify":
        return f"verify({{'url': {value}}})"
    if act.action == "fill":
        return f"fill({target!r}, {value}{options})"
    if act.action == "press":
        return f"press({value}, {target!r}{options})"
    if act.action == "upload":
        return f"upload({target!r}, [{value}]{options})"
    return f"{act.action}({target!r}{options})"


class ProgramRun(FrontEnd):
    """``northstar run program.py``: the flow as a program the broker runs in a child process."""

    name = "program"

    async def _run(self, text: str) -> Said:
        path = self.folder / "case_program.py"
        path.write_text(text, encoding="utf-8")
        journal = self.folder / "journal.db"
        args = ("run", str(path), "--base-url", self.site.base_url, *self.extra_args)
        done = await northstar(*args, cwd=self.folder, journal=journal)
        said = Said(done.stdout + done.stderr, exit_codes=[done.returncode])
        said.status = _status(journal, said.text)
        logs = sorted((self.folder / "runs").glob("*/program-*.log"))
        said.text += "".join(log.read_text(errors="replace") for log in logs)
        return said

    extra_args: tuple[str, ...] = ()

    async def run_flow(self, flow: Flow) -> Said:
        self.extra_args = secret_args(flow)
        return await self._run(program_text(flow))

    async def submit_twice(self, flow: Flow) -> Said:
        return await self._run(program_text(again(flow, self.site.base_url + flow.start)))


class AgentOverMcp(FrontEnd):
    """An agent's session on ``northstar mcp`` over stdio, through the SDK's own client."""

    name = "mcp"

    def _server(self) -> StdioServerParameters:
        recipes = self.folder / "recipes"
        recipes.mkdir(exist_ok=True)
        args = ["-c", ENTRY, "mcp", "--recipes", str(recipes)]
        args += ["--journal", str(self.folder / "journal.db"), "--files", str(self.folder)]
        keep = ("NORTHSTAR_BROWSER", "PLAYWRIGHT_BROWSERS_PATH")
        env = {name: os.environ[name] for name in keep if os.environ.get(name)}
        return StdioServerParameters(
            command=sys.executable, args=args, env=env, cwd=str(self.folder)
        )

    async def run_flow(self, flow: Flow) -> Said:
        said = Said("")
        async with self._session(flow, said) as act:
            for each in flow.acts:
                await act(each)
        return said

    async def submit_twice(self, flow: Flow) -> Said:
        return await self.run_flow(again(flow, self.site.base_url + flow.start))

    def _session(self, flow: Flow, said: Said) -> Any:
        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def opened() -> AsyncIterator[Any]:
            async with Client(self._server()) as client:
                tabs = {"site": {"start": self.site.base_url + flow.start}}
                opening = await client.call_tool("open_session", {"tabs": tabs})
                said.text += _answer_text(opening)
                assert not opening.is_error, said.text
                ids = opening.structured_content or {}
                session = {"session_id": ids["session_id"], "credential": ids["credential"]}

                async def act(each: Act) -> None:
                    value = each.value
                    if value is not None and flow.secret is not None:  # the model typed it
                        value = value.replace(SECRET_SLOT, flow.secret)
                    if each.action == "verify":
                        check = {**session, "tab": "site", "check": {"url": value}}
                        check |= {"timeout_ms": VERIFY_TIMEOUT_MS}
                        said.text += _answer_text(await client.call_tool("check", check))
                        return
                    arguments = {**session, "tab": "site", "action": each.action}
                    arguments |= {"target": each.target} if each.target else {}
                    arguments |= {"value": value} if value is not None else {}
                    arguments |= {"submit": True} if each.submit else {}
                    said.text += _answer_text(await client.call_tool("act", arguments))

                yield act
                closed = await client.call_tool("close_session", session)
                said.text += _answer_text(closed)
                said.status = (closed.structured_content or {}).get("status")

        return opened()


def _answer_text(result: Any) -> str:
    texts = [getattr(item, "text", "") for item in result.content]
    structured = json.dumps(result.structured_content or {}, default=str)
    return "\n".join([*texts, structured]) + "\n"


class QueuedWorker(FrontEnd):
    """``run --queue`` served by a ``northstar worker`` on a throwaway Postgres."""

    name = "worker"

    def __init__(self, site: FixtureSite, folder: Path, journal_url: str) -> None:
        super().__init__(site, folder)
        self.journal = journal_url
        self.workers: list[Worker] = []

    def _worker(self, **env: str) -> Worker:
        worker = Worker(self.journal, "cases", "w1", cwd=self.folder, lanes=1, env=env)
        self.workers.append(worker)
        return worker.ready()

    def _run_args(self, flow: Flow) -> list[str]:
        path = self.folder / "case.yaml"
        path.write_text(recipe_text(flow), encoding="utf-8")
        run = ["run", str(path), "--base-url", self.site.base_url, "--journal", self.journal]
        return run + list(secret_args(flow))

    async def _cli(self, said: Said, *args: str) -> None:
        done = await northstar(*args, cwd=self.folder, journal=self.journal)
        said.text += done.stdout + done.stderr
        said.exit_codes.append(done.returncode)

    async def run_flow(self, flow: Flow) -> Said:
        # A secret never goes through the queue: the worker is given it in its environment.
        env = {} if flow.secret is None else {"NORTHSTAR_SECRET_SECRET": flow.secret}
        await asyncio.to_thread(self._worker, **env)
        said = Said("")
        await self._cli(said, *self._run_args(flow), "--queue", "cases")
        said.text += "\n".join(line for w in self.workers for line in w.lines)
        said.status = _status(self.journal, said.text)
        return said

    async def submit_twice(self, flow: Flow) -> Said:
        armed = await asyncio.to_thread(self._worker, NORTHSTAR_FAILPOINT="after_dispatch@1")
        said = Said("")
        await self._cli(said, *self._run_args(flow), "--queue", "cases", "--detach")
        run_id = RUN_ID.search(said.text)
        assert run_id is not None, said.text
        assert await asyncio.to_thread(armed.wait_for, "failpoint after_dispatch 1")
        armed.kill()  # the submission left the browser; its outcome is not recorded
        await asyncio.to_thread(self._worker)  # the queue hands the iteration over again
        await self._cli(said, "watch", run_id[1], "--journal", self.journal, "--every", "0.2")
        await self._cli(said, "reconcile", run_id[1], "--journal", self.journal)
        said.text += "\n".join(line for w in self.workers for line in w.lines)
        said.status = readers.get_run(self.journal, run_id[1]).summary.status
        return said

    def stop(self) -> None:
        for worker in self.workers:
            worker.kill()


@pytest.fixture(params=FRONT_ENDS)
def front_end(
    request: pytest.FixtureRequest, site: FixtureSite, tmp_path: Path
) -> Iterator[FrontEnd]:
    """Each front end in turn, on the fixture site, with a folder and journal of its own."""
    name = request.param
    if name == "cli":
        yield RecipeCli(site, tmp_path)
    elif name == "program":
        yield ProgramRun(site, tmp_path)
    elif name == "mcp":
        yield AgentOverMcp(site, tmp_path)
    else:
        postgres = request.getfixturevalue("postgres")
        database = f"cases_{abs(hash(request.node.nodeid)) % 10**8}"
        worker = QueuedWorker(site, tmp_path, postgres.create_database(database))
        try:
            yield worker
        finally:
            worker.stop()
