"""The program's process and its one way to the host: a private Unix socket.

The socket lives in a fresh temporary folder only this user can enter (0700), and is
itself 0600; the child learns its path, the run's execution id and credential and the
iteration from its environment. Each request line is answered by ``IterationCalls`` in
the order it came.

How the program's process ends decides what happens to a call the host is still doing:

- the host asked it to stop (Ctrl-C, SIGTERM): the call finishes and is journaled;
- it died on its own (killed, crashed) while a call was being done: the host abandons
  the call at once; a submission among them stays in flight or dispatched in the
  journal, so its iteration ends ``unknown`` and is never sent again by this host;
- it made no call for the time limit (``timeout_s``; no call is being done then): the
  host ends it, SIGTERM then SIGKILL after ``TERMINATE_GRACE_S``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import structlog

from northstar.programs.calls import IterationCalls
from northstar.programs.declaration import DEFAULT_TIME_LIMIT_S
from northstar.redaction import redact
from northstar.sdk._wire import (
    CREDENTIAL_ENV,
    EXECUTION_ENV,
    ITERATION_ENV,
    MAX_LINE,
    SOCKET_ENV,
    decode,
    encode,
)

__all__ = ["TERMINATE_GRACE_S", "ChildRun", "ProgramExit", "run_program_process"]

log = structlog.get_logger("northstar.programs")

TERMINATE_GRACE_S = 5.0  # between SIGTERM and SIGKILL for a program past its time limit


@dataclass(frozen=True, slots=True)
class ProgramExit:
    """How the program's process ended: its status (``None``: a signal) and whether the
    host ended it for making no call within its time limit."""

    code: int | None
    timed_out: bool = False


class ChildRun:
    """The program's connections: each answered line by line; see the module docstring."""

    def __init__(self, calls: IterationCalls) -> None:
        self.calls = calls
        self.tasks: set[asyncio.Task[None]] = set()
        self.busy = 0  # calls being done now: the program is waiting, not silent
        self.activity = asyncio.Event()  # set at each call received and each answer sent

    def _active(self, change: int) -> None:
        self.busy += change
        self.activity.set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self.tasks.add(task)
        try:
            while line := await reader.readline():
                self._active(+1)
                try:
                    answer = await self._answer(line)
                finally:
                    self._active(-1)
                if writer.is_closing():
                    break
                writer.write(encode(answer))
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass  # the program went away; what it had asked for was done and journaled
        finally:
            writer.close()

    async def _answer(self, line: bytes) -> dict[str, object]:
        try:
            request = decode(line)
        except ValueError:
            request = {"op": None}
        return await self.calls.answer(request)

    async def silent_for(self, limit_s: float) -> None:
        """Return once the program made no call for ``limit_s`` and none is being done."""
        while True:
            self.activity.clear()
            try:
                await asyncio.wait_for(self.activity.wait(), timeout=limit_s)
            except TimeoutError:
                if not self.busy:
                    return

    async def abandon(self) -> None:
        """Cancel every call still being done (the program that asked for it is gone)."""
        current = asyncio.current_task()
        pending = [t for t in self.tasks if t is not current and not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)

    async def settle(self) -> None:
        """Let every call already received finish (the program was stopped on request)."""
        current = asyncio.current_task()
        pending = [t for t in self.tasks if t is not current and not t.done()]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)


def _environment(socket: str, run_id: str, credential: str, iteration: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            SOCKET_ENV: socket,
            EXECUTION_ENV: run_id,
            CREDENTIAL_ENV: credential,
            ITERATION_ENV: str(iteration),
        }
    )
    return env


async def _first(*awaitables: Awaitable[object]) -> int:
    """The index of the first of ``awaitables`` to finish; the others are cancelled."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in tasks:
        if task not in done:
            task.cancel()
    return next(i for i, task in enumerate(tasks) if task in done)


async def _end(process: asyncio.subprocess.Process, grace_s: float) -> int:
    """SIGTERM, then SIGKILL if the program is still there after ``grace_s``."""
    with suppress(ProcessLookupError):  # it may have ended by itself meanwhile
        process.terminate()
    try:
        return await asyncio.wait_for(process.wait(), timeout=grace_s)
    except TimeoutError:
        with suppress(ProcessLookupError):
            process.kill()
        return await process.wait()


async def _wait(
    process: asyncio.subprocess.Process,
    child: ChildRun,
    stop: asyncio.Event | None,
    limit_s: float,
) -> ProgramExit:
    """The process's end: by itself (calls still being done are abandoned), on a stop
    request (they finish), or ended by the host past its time limit."""
    stopping = (stop or asyncio.Event()).wait()
    first = await _first(process.wait(), stopping, child.silent_for(limit_s))
    if first == 0:
        await child.abandon()
        return ProgramExit(_status(await process.wait()))
    if first == 1:
        code = await _end(process, TERMINATE_GRACE_S)
        await child.settle()
        return ProgramExit(_status(code))
    log.warning("program_time_limit", pid=process.pid, limit_s=limit_s)
    return ProgramExit(_status(await _end(process, TERMINATE_GRACE_S)), timed_out=True)


def _status(code: int) -> int | None:
    return None if code < 0 else code


async def run_program_process(
    program: Path,
    calls: IterationCalls,
    *,
    run_id: str,
    credential: str,
    iteration: int,
    log_file: Path,
    secrets: frozenset[str] = frozenset(),
    stop: asyncio.Event | None = None,
    extra_env: Mapping[str, str] | None = None,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    on_started: Callable[[int], None] = lambda pid: None,
) -> ProgramExit:
    """Run the program's ``main`` once in a child; how it ended."""
    folder = tempfile.mkdtemp(prefix="northstar-program-")  # mode 0700
    socket = os.path.join(folder, "host.sock")
    child = ChildRun(calls)
    server = await asyncio.start_unix_server(child.serve, path=socket, limit=MAX_LINE)
    os.chmod(socket, 0o600)
    env = {**_environment(socket, run_id, credential, iteration), **(extra_env or {})}
    log_file.parent.mkdir(parents=True, exist_ok=True)
    try:
        with log_file.open("ab") as output:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "northstar.sdk.child", str(program),
                env=env, stdin=asyncio.subprocess.DEVNULL, stdout=output, stderr=output,
            )  # fmt: skip
            log.info("program_started", run_id=run_id, iteration=iteration, pid=process.pid)
            on_started(process.pid)
            ended = await _wait(process, child, stop, time_limit_s)
    finally:
        server.close()
        await server.wait_closed()
        shutil.rmtree(folder, ignore_errors=True)
        _redact_log(log_file, secrets)
    return ended


def _redact_log(log_file: Path, secrets: frozenset[str]) -> None:
    """What the program printed, kept for a person, with the run's secrets taken out."""
    if secrets and log_file.is_file():
        text = log_file.read_text(encoding="utf-8", errors="replace")
        log_file.write_text(redact(text, secrets), encoding="utf-8")
