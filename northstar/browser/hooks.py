"""Extension points around one iteration: pauses, traces, page snapshots, replay checks.

The runner calls an ``IterationHooks`` at four places: around the iteration (inside its
browser session, so a trace can start before the first page and stop before the context
closes), before each step (once its tab is open), after each passing step, and at a
failure (after the failure screenshots). Hooks never decide a verdict: a hook that raises
a ``NorthstarError`` fails the iteration like any browser error would.

The core only defines the shape. The Playwright adapter implements the hooks that need a
page (``browser_adapters.debugging``, ``browser_adapters.dom_snapshots``); a host that
can build hooks for a run says so by implementing ``HooksProvider``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Protocol, runtime_checkable

from northstar.browser.protocol import BrowserSession
from northstar.plan.model import BoundStep, Plan
from northstar.results import StepResult

__all__ = ["HookChain", "HooksProvider", "IterationHooks", "NoHooks", "chain_hooks", "hooks_for"]


class IterationHooks(Protocol):
    """What the runner calls around an iteration; see the module docstring for when."""

    def around(self, session: BrowserSession, plan: Plan) -> AbstractAsyncContextManager[None]:
        """Wraps the iteration's steps; an exception leaving it means "not verified"."""
        ...

    async def before_step(self, session: BrowserSession, plan: Plan, step: BoundStep) -> None:
        """Before a step's first attempt; the step's tab is open."""
        ...

    async def after_step(
        self, session: BrowserSession, plan: Plan, step: BoundStep, result: StepResult
    ) -> None:
        """After a step passed."""
        ...

    async def at_failure(self, session: BrowserSession, plan: Plan, failed: StepResult) -> None:
        """After a step (or ``done_when``, or an output) failed; the pages are still open."""
        ...


class NoHooks:
    """Does nothing at every point; subclasses override only the points they need."""

    @asynccontextmanager
    async def around(self, session: BrowserSession, plan: Plan) -> AsyncIterator[None]:
        yield

    async def before_step(self, session: BrowserSession, plan: Plan, step: BoundStep) -> None:
        return None

    async def after_step(
        self, session: BrowserSession, plan: Plan, step: BoundStep, result: StepResult
    ) -> None:
        return None

    async def at_failure(self, session: BrowserSession, plan: Plan, failed: StepResult) -> None:
        return None


class HookChain(NoHooks):
    """Several hooks in order; ``around`` nests them, the first one outermost."""

    def __init__(self, hooks: Sequence[IterationHooks]) -> None:
        self.hooks = tuple(hooks)

    @asynccontextmanager
    async def around(self, session: BrowserSession, plan: Plan) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for hook in self.hooks:
                await stack.enter_async_context(hook.around(session, plan))
            yield

    async def before_step(self, session: BrowserSession, plan: Plan, step: BoundStep) -> None:
        for hook in self.hooks:
            await hook.before_step(session, plan, step)

    async def after_step(
        self, session: BrowserSession, plan: Plan, step: BoundStep, result: StepResult
    ) -> None:
        for hook in self.hooks:
            await hook.after_step(session, plan, step, result)

    async def at_failure(self, session: BrowserSession, plan: Plan, failed: StepResult) -> None:
        for hook in self.hooks:
            await hook.at_failure(session, plan, failed)


@runtime_checkable
class HooksProvider(Protocol):
    """A host that builds the hooks its settings ask for (pauses, traces) for one run."""

    def iteration_hooks(self, artifacts: Path) -> IterationHooks | None:
        """Hooks writing their files under ``artifacts``; ``None`` when nothing is asked."""
        ...


def hooks_for(host: object, artifacts: Path) -> IterationHooks | None:
    """The host's hooks for a run whose files go to ``artifacts``, if it offers any."""
    return host.iteration_hooks(artifacts) if isinstance(host, HooksProvider) else None


def chain_hooks(*hooks: IterationHooks | None) -> IterationHooks | None:
    """The given hooks in order, as one; ``None`` when none is given."""
    present = [hook for hook in hooks if hook is not None]
    if len(present) <= 1:
        return present[0] if present else None
    return HookChain(present)
