"""The program's process and its one way to the host: a private Unix socket.

The socket lives in a fresh temporary folder only this user can enter (0700), and is
itself 0600; the child learns its path, the run's execution id and credential and the
iteration from its environment. Each request line is answered by ``IterationCalls`` in
the order it came. When the child ends, calls it had already sent are finished (a
submission being sent completes and is journaled) before the iteration is judged.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import structlog

from northstar.programs.calls import IterationCalls
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

__all__ = ["ChildRun", "run_program_process"]

log = structlog.get_logger("northstar.programs")


class ChildRun:
    """The program's connections: each answered line by line, all awaited at the end."""

    def __init__(self, calls: IterationCalls) -> None:
        self.calls = calls
        self.tasks: set[asyncio.Task[None]] = set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self.tasks.add(task)
        try:
            while line := await reader.readline():
                try:
                    request = decode(line)
                except ValueError:
                    request = {"op": None}
                answer = await self.calls.answer(request)
                if writer.is_closing():
                    break
                writer.write(encode(answer))
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass  # the program went away; what it had asked for was done and journaled
        finally:
            writer.close()

    async def settle(self) -> None:
        """Let every call already received finish (the host's half of a killed program)."""
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


async def _wait(process: asyncio.subprocess.Process, stop: asyncio.Event | None) -> int:
    if stop is None:
        return await process.wait()
    waiting = asyncio.ensure_future(process.wait())
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({waiting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    if not waiting.done():
        process.terminate()  # a stop request: the program ends, its sent calls still finish
    return await waiting


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
) -> int | None:
    """Run the program's ``main`` once in a child; its exit status, ``None`` if signalled."""
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
            code = await _wait(process, stop)
        await child.settle()
    finally:
        server.close()
        await server.wait_closed()
        shutil.rmtree(folder, ignore_errors=True)
        _redact_log(log_file, secrets)
    return None if code < 0 else code


def _redact_log(log_file: Path, secrets: frozenset[str]) -> None:
    """What the program printed, kept for a person, with the run's secrets taken out."""
    if secrets and log_file.is_file():
        text = log_file.read_text(encoding="utf-8", errors="replace")
        log_file.write_text(redact(text, secrets), encoding="utf-8")
