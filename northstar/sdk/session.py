"""``Session`` and ``Tab``: a program's calls, each carried out by the host.

Nothing here touches a browser or the journal: every call is one JSON line to the host
over the Unix socket named in the environment, presenting the run's execution id and
credential. A submission's key is ``key=`` when given, otherwise the call site (file and
line) and how many times that call site has submitted in this iteration, so a loop over
rows makes one submission per row and the same call made again is recognised.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from northstar.errors import ExpectationFailed, NorthstarError, error_class_for_code
from northstar.sdk._wire import (
    CREDENTIAL_ENV,
    EXECUTION_ENV,
    ITERATION_ENV,
    MAX_LINE,
    SOCKET_ENV,
    decode,
    encode,
)

__all__ = ["Session", "Tab", "connect"]

Target = Mapping[str, Any]
_SDK_DIR = str(Path(__file__).resolve().parent)


def _host_error(error: Mapping[str, Any]) -> NorthstarError:
    cls = error_class_for_code(str(error.get("code", "")))
    try:
        raised = cls(str(error.get("message", "")), fix=error.get("fix"))
    except TypeError:
        raised = NorthstarError(str(error.get("message", "")), fix=error.get("fix"))
    return raised


def _call_site() -> str:
    """``file.line`` of the program's call (the first frame outside the SDK)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and str(Path(frame.f_code.co_filename).parent) == _SDK_DIR:
        frame = frame.f_back
    return f"{Path(frame.f_code.co_filename).stem}.L{frame.f_lineno}"


class Session:
    """One iteration's connection to the host; get it with ``await connect()``."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        execution_id: str,
        credential: str,
        iteration: int,
    ) -> None:
        self._reader, self._writer = reader, writer
        self.execution_id, self._credential, self.iteration = execution_id, credential, iteration
        self.params: dict[str, Any] = {}
        self._sites: Counter[str] = Counter()
        self._next_id = 0
        self._lock = asyncio.Lock()

    async def call(self, op: str, **args: Any) -> Any:
        """One request to the host, its answer or its error (a ``NorthstarError``)."""
        async with self._lock:  # one line out, one line back
            self._next_id += 1
            request = {"id": self._next_id, "op": op, "args": args}
            request.update(execution_id=self.execution_id, credential=self._credential)
            self._writer.write(encode(request))
            await self._writer.drain()
            line = await self._reader.readline()
        if not line:
            raise NorthstarError("the host closed the connection", fix="See the run's journal.")
        answer = decode(line)
        if not answer.get("ok"):
            raise _host_error(answer.get("error") or {})
        return answer.get("result")

    def tab(self, role: str) -> Tab:
        """The tab role ``role`` of the declaration; every call on it is checked by the host."""
        return Tab(self, role)

    def submission_key(self, key: str | None) -> str:
        if key is not None:
            return key
        site = _call_site()
        self._sites[site] += 1
        return f"{site}.{self._sites[site]}"

    async def check(self, role: str, check: Mapping[str, Any]) -> bool:
        """Whether a recipe check holds on the tab (waited for up to the timeout)."""
        return bool((await self.call("check", tab=role, check=dict(check)))["held"])

    async def read(
        self, role: str, source: str, target: Target | None = None, attribute: str | None = None
    ) -> str:
        """A value from the tab: ``url``, ``title``, or a target's ``text``/``value``/attribute."""
        args = {"tab": role, "source": source, "target": target, "attribute": attribute}
        return str(await self.call("read", **args))

    async def observe(self, role: str) -> dict[str, Any]:
        """The tab's page as data: ``url``, ``title``, ``text`` and ``tables`` (rows of cells)."""
        observed: dict[str, Any] = await self.call("observe", tab=role)
        return observed

    async def output(self, name: str, value: object) -> None:
        """Record a declared output of this iteration (saved in the journal by the host)."""
        await self.call("output", name=name, value=str(value))

    async def report_model_calls(self, count: int, tokens: int | None = None) -> None:
        """How many model calls this iteration made; unreported stays unknown, never 0."""
        await self.call("model_calls", count=count, tokens=tokens)

    async def complete(self, result: Mapping[str, Any] | None = None) -> None:
        """The program's own word that the iteration is done; the host still verifies it."""
        await self.call("complete", result=dict(result) if result else None)

    async def close(self) -> None:
        self._writer.close()
        await self._writer.wait_closed()


class Tab:
    """A tab role: actions by semantic target, each done by the host on that role's page."""

    def __init__(self, session: Session, role: str) -> None:
        self.session, self.role = session, role

    async def _act(self, action: str, *, submit: bool = False, **args: Any) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if submit:
            extra["key"] = self.session.submission_key(args.pop("key", None))
            extra["expect"] = list(args.pop("expect", None) or [])
        else:
            args.pop("key", None), args.pop("expect", None)
        answer: dict[str, Any] = await self.session.call(
            "act", tab=self.role, action=action, submit=submit, **args, **extra
        )
        return answer

    async def goto(self, url: str) -> dict[str, Any]:
        return await self._act("goto", value=url)

    async def click(self, target: Target, **options: Any) -> dict[str, Any]:
        """``submit=True`` (with ``expect=[checks]``, ``key=``) for a click that creates."""
        return await self._act("click", target=dict(target), **options)

    async def fill(self, target: Target, value: str, **options: Any) -> dict[str, Any]:
        return await self._act("fill", target=dict(target), value=value, **options)

    async def select(self, target: Target, value: str, **options: Any) -> dict[str, Any]:
        return await self._act("select", target=dict(target), value=value, **options)

    async def check(self, target: Target, **options: Any) -> dict[str, Any]:
        """Tick a checkbox (``Session.check`` is the verification)."""
        return await self._act("check", target=dict(target), **options)

    async def press(self, key: str, target: Target | None = None, **options: Any) -> dict[str, Any]:
        chosen = None if target is None else dict(target)
        return await self._act("press", target=chosen, value=key, **options)

    async def upload(self, target: Target, files: Sequence[str], **options: Any) -> dict[str, Any]:
        return await self._act("upload", target=dict(target), value=list(files), **options)

    async def verify(self, check: Mapping[str, Any], *, raise_on_failure: bool = True) -> bool:
        """Whether a recipe check holds on this tab (waited for up to the timeout).

        A check that does not hold fails the iteration: the host records it (so catching
        the ``EXPECTATION_FAILED`` raised here cannot verify the iteration anyway).
        ``raise_on_failure=False`` only reads the answer: ``False``, and nothing recorded.
        """
        answer = await self.session.call(
            "check", tab=self.role, check=dict(check), required=raise_on_failure
        )
        if raise_on_failure and not answer["held"]:
            raise ExpectationFailed(f"verify {dict(check)} did not hold: {answer['found']}")
        return bool(answer["held"])

    async def read(self, source: str, target: Target | None = None) -> str:
        return await self.session.read(self.role, source, target)

    async def observe(self) -> dict[str, Any]:
        return await self.session.observe(self.role)


async def connect() -> Session:
    """The session the host started this process for (from its environment)."""
    try:
        path, run = os.environ[SOCKET_ENV], os.environ[EXECUTION_ENV]
        credential, iteration = os.environ[CREDENTIAL_ENV], int(os.environ[ITERATION_ENV])
    except (KeyError, ValueError):
        raise NorthstarError(
            "no Northstar host in the environment",
            fix="Run the program with `northstar run PROGRAM.py`, not with python directly.",
        ) from None
    reader, writer = await asyncio.open_unix_connection(path, limit=MAX_LINE)
    session = Session(reader, writer, run, credential, iteration)
    session.params = dict(await session.call("params"))
    return session
