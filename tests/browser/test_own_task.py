"""``in_own_task``: a session method runs under a shallow stack and behaves like a call."""

from __future__ import annotations

import asyncio
import contextvars
import sys

import pytest

from browser_adapters.own_task import in_own_task

ITERATION: contextvars.ContextVar[int] = contextvars.ContextVar("iteration", default=0)


def _frames_above() -> list[str]:
    """Names of the frames above the caller, up to the event loop's callback."""
    names = []
    frame = sys._getframe(2)
    while frame is not None:
        names.append(frame.f_code.co_name)
        if frame.f_code is asyncio.events.Handle._run.__code__:
            break
        frame = frame.f_back
    return names


class Session:
    @in_own_task
    async def wrapped(self) -> list[str]:
        return _frames_above()

    async def plain(self) -> list[str]:
        return _frames_above()

    @in_own_task
    async def failing(self) -> None:
        raise ValueError("the action failed")

    @in_own_task
    async def iteration(self) -> int:
        return ITERATION.get()


async def deep_caller(depth: int, call: str) -> list[str]:
    if depth:
        return await deep_caller(depth - 1, call)
    return await getattr(Session(), call)()


async def test_the_callers_frames_are_not_on_the_stack() -> None:
    plain = await deep_caller(10, "plain")
    wrapped = await deep_caller(10, "wrapped")
    assert plain.count("deep_caller") == 11
    assert "deep_caller" not in wrapped
    assert len(wrapped) < 4


async def test_an_exception_passes_through_unchanged() -> None:
    with pytest.raises(ValueError, match="the action failed"):
        await Session().failing()


async def test_the_callers_context_is_seen() -> None:
    token = ITERATION.set(7)
    try:
        assert await Session().iteration() == 7
    finally:
        ITERATION.reset(token)


async def test_cancelling_the_caller_cancels_the_call() -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    class Slow:
        @in_own_task
        async def wait(self) -> None:
            started.set()
            try:
                await asyncio.Event().wait()
            finally:
                cancelled.set()

    caller = asyncio.ensure_future(Slow().wait())
    await started.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert cancelled.is_set()
