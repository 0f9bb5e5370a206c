"""The iteration hooks a host's options ask for, in their order, for one run.

Order matters for ``around`` (the first hook is outermost): the trace wraps the replay
check, so an iteration failed by a request the recording lacked keeps its trace under
``retain-on-failure``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from browser_adapters.debugging import Pause, PauseHooks, TraceHooks, inspector_pause
from browser_adapters.session import PlaywrightSession
from northstar.browser import BrowserSession
from northstar.browser.hooks import HookChain, IterationHooks, NoHooks
from northstar.browser.settings import DebugSettings
from northstar.plan.model import Plan

__all__ = ["ReplayCheck", "run_hooks"]


class ReplayCheck(NoHooks):
    """At the end of a replayed iteration, requests the recording lacked fail it."""

    @asynccontextmanager
    async def around(self, session: BrowserSession, plan: Plan) -> AsyncIterator[None]:
        yield
        if isinstance(session, PlaywrightSession) and session.unrecorded is not None:
            session.unrecorded.raise_new(tab="", secrets=plan.secrets)


def run_hooks(
    debug: DebugSettings,
    artifacts: Path,
    *,
    replaying: bool = False,
    pause: Pause | None = None,
) -> IterationHooks | None:
    """Hooks for ``--trace``, the pauses (``--step``, ``--break-at``, ``--pause-on-failure``)
    and replay; ``None`` if none."""
    hooks: list[IterationHooks] = []
    if debug.trace != "off":
        hooks.append(TraceHooks(debug.trace, artifacts))
    if replaying:
        hooks.append(ReplayCheck())
    if debug.pauses:
        hooks.append(
            PauseHooks(
                step=debug.step,
                on_failure=debug.pause_on_failure,
                break_at=debug.break_at,
                pause=pause or inspector_pause,
            )
        )
    return HookChain(hooks) if hooks else None
