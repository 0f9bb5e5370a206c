"""PlaywrightHost: owns the browser for a run and hands out one context per iteration.

One browser process serves every iteration of a run (launching is the expensive part);
with ``--cdp-url`` / ``--ws-endpoint`` it is someone else's browser, connected to instead
(``browser_adapters.remote``), and closing the host only disconnects from it.
each iteration gets a fresh ``BrowserContext`` so cookies and storage do not leak from
one iteration into the next unless a profile (storage state) is given. With
``context_reset`` a context is reused instead and reset between iterations
(``context_reset.py`` says what that clears); a profile or a HAR to record or replay
belongs to a context's creation, so with one of those every iteration gets a new context.
A run's signed-in state that holds only cookies is the exception: the reset context gets
them back with ``add_cookies`` (one round trip), as a new context made from it would.
The host's calls on the browser run through its ``BrowserWatch``: a browser that was
killed ends them with ``BROWSER_CLOSED`` (see ``browser_watch``), and closing what is
already gone is skipped.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from playwright.async_api import Browser, BrowserContext, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

if TYPE_CHECKING:
    from playwright._impl._api_structures import SetCookieParam

from browser_adapters.acted_on import register_facts_engine
from browser_adapters.browser_watch import BrowserWatch, watch_of, watched
from browser_adapters.context_reset import ReusableContext, state_cookies
from browser_adapters.discovery import find_browser
from browser_adapters.early_driver import take_early
from browser_adapters.har_replay import har_recording_options, replay_from_har
from browser_adapters.origin_gate import OriginGate
from browser_adapters.read_only import guard_read_only
from browser_adapters.remote import connect_remote
from browser_adapters.run_hooks import run_hooks
from browser_adapters.session import PlaywrightSession
from northstar.browser.hooks import IterationHooks
from northstar.browser.settings import BrowserSettings
from northstar.errors import BrowserNotFound, DisplayMissing, NorthstarError
from northstar.plan.model import Plan

__all__ = ["PlaywrightHost", "launch_arguments"]

# Chromium's own background traffic is refused on closed networks and only costs time.
_QUIET_ARGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
)


class PlaywrightHost:
    """Implements ``northstar.browser.BrowserHost``; use as ``async with``."""

    def __init__(self, settings: BrowserSettings | None = None) -> None:
        self.options = settings or BrowserSettings()
        self._stack = AsyncExitStack()
        self._browser: Browser | None = None
        self._gate: OriginGate | None = None
        # Contexts being reset (the task says whether it worked) for a lane's next iteration.
        self._idle: list[tuple[ReusableContext, asyncio.Task[bool]]] = []
        self._shares_browser = False

    async def __aenter__(self) -> PlaywrightHost:
        try:
            playwright = await take_early()  # started while the CLI checked its input
            if playwright is None:
                playwright = await self._stack.enter_async_context(async_playwright())
            else:
                self._stack.push_async_callback(playwright.stop)
            await register_facts_engine(playwright)  # for every context it makes
            self._browser = await self._launch(playwright)
            watch_of(self._browser)  # listen for its going away from the start
            self._gate = await OriginGate.open(self._browser)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._resets_settled()
        if self._browser is not None and not self.watch.gone:
            # Gone meanwhile (crashed or killed) means nothing is left to close. A connected
            # browser's close() closes the contexts we made and disconnects; it stays up.
            with suppress(PlaywrightError, NorthstarError):
                await self.watch.call(self._browser.close(), what="close the browser")
        self._idle.clear()  # closed with the browser: a later session must not get one
        await self._stack.aclose()

    async def _launch(self, playwright: Playwright) -> Browser:
        if self.options.remote:
            return await connect_remote(playwright, self.options)
        given = self.options.launch_options
        executable = given.get("executable_path")
        if not executable and not given.get("channel"):  # a channel names its own browser
            executable = find_browser(
                self.options.executable,
                headless=self.options.headless,
                playwright_build=playwright.chromium.executable_path,
            )
        try:
            return await playwright.chromium.launch(**launch_arguments(self.options, executable))
        except PlaywrightError as exc:
            if not self.options.headless and _needs_display(str(exc)):
                raise DisplayMissing(
                    "a headed browser needs a display, and there is none (no X server or $DISPLAY)"
                ) from exc
            channel = given.get("channel")
            where = executable or (f"channel {channel!r}" if channel else "the Playwright build")
            raise BrowserNotFound(
                f"Chromium at {where} did not start: {str(exc).splitlines()[0][:200]}"
            ) from exc

    @property
    def browser(self) -> Browser:
        if self._browser is None:
            raise RuntimeError("PlaywrightHost is used outside `async with`")
        return self._browser

    @property
    def gate(self) -> OriginGate:
        """The browser's origin gate: every tab role's page is watched by it."""
        if self._gate is None:
            raise RuntimeError("PlaywrightHost is used outside `async with`")
        return self._gate

    @property
    def watch(self) -> BrowserWatch:
        """Whether the browser is still there; every call on it races its going away."""
        return watch_of(self.browser)

    @asynccontextmanager
    async def session(
        self, plan: Plan, *, storage_state: str | None = None
    ) -> AsyncIterator[PlaywrightSession]:
        """A fresh context for one iteration, closed on every path (or one reset after it).

        ``storage_state`` (the run's signed-in state) wins over the host's profile; a
        context made from one is never reused, since a reset would clear what it holds.
        """
        cookies = state_cookies(storage_state) if storage_state is not None else ()
        if cookies is not None and self._reuses_contexts():
            async with self._reused_session(plan, cookies) as session:
                yield session
            return
        context = await self._new_context(storage_state or self.options.storage_state)
        try:
            yield await self._start_session(context, plan)
        finally:
            await _close(context, self.watch)

    @watched
    async def _new_context(self, storage_state: str | None) -> BrowserContext:
        return await self.browser.new_context(
            storage_state=storage_state,
            **har_recording_options(self.options.record_har),
        )

    def _reuses_contexts(self) -> bool:
        """Whether iterations reuse a reset context (options that shape a new one say no)."""
        given = self.options
        shaped = given.storage_state or given.record_har or given.replay_har
        return given.context_reset and not shaped and not self._shares_browser

    @asynccontextmanager
    async def _reused_session(
        self, plan: Plan, cookies: Sequence[SetCookieParam] = ()
    ) -> AsyncIterator[PlaywrightSession]:
        """An idle reset context (or a new one); reset and put back after the iteration.

        ``cookies``: a signed-in state's, put back after the reset cleared the last ones.
        """
        reusable = await self._reset_reusable() or await self._new_reusable()
        if cookies:
            await self.watch.call(reusable.context.add_cookies(list(cookies)), what="sign in")
        reusable.declared.update(o for tab in plan.tabs.values() for o in tab.origins)
        session = PlaywrightSession(
            reusable.context, plan, gate=self.gate, spare=reusable.take_kept()
        )
        try:
            yield session
        finally:
            session.release()
            self._put_back(reusable)

    @watched
    async def _new_reusable(self) -> ReusableContext:
        return await ReusableContext.open(self.browser, {})

    def _put_back(self, reusable: ReusableContext) -> None:
        """Start the context's reset; the next iteration that takes it waits for the end.

        The reset runs while the runner journals the iteration that just ended, so its
        round trips to the browser do not add to the lane's time; nothing uses the context
        before its reset is over.
        """
        resetting = asyncio.ensure_future(self._reset_or_close(reusable))
        self._idle.append((reusable, resetting))

    async def _reset_or_close(self, reusable: ReusableContext) -> bool:
        """Reset the context for the next iteration; one that cannot be reset is closed."""
        try:
            await self.watch.call(reusable.reset(), what="reset the context")
        except (PlaywrightError, NorthstarError):
            await _close(reusable.context, self.watch)
            return False
        return True

    async def _reset_reusable(self) -> ReusableContext | None:
        """An idle context once its reset is over, or ``None`` when none could be reset."""
        while self._idle:
            reusable, resetting = self._idle.pop()
            if await resetting:
                return reusable
        return None

    async def _resets_settled(self) -> None:
        """Let resets still running end before the browser closes under them."""
        for _, resetting in self._idle:
            with suppress(Exception):
                await resetting

    @watched
    async def _start_session(self, context: BrowserContext, plan: Plan) -> PlaywrightSession:
        replay = self.options.replay_har
        # Routed first: a replay's routes (added after) answer first and send nothing.
        if self.options.read_only:
            await guard_read_only(context)
        unrecorded = await replay_from_har(context, replay) if replay else None
        return PlaywrightSession(context, plan, gate=self.gate, unrecorded=unrecorded)

    def iteration_hooks(self, artifacts: Path) -> IterationHooks | None:
        """Hooks for the debugging and replay options, writing their files to ``artifacts``."""
        return run_hooks(
            self.options.debug,
            artifacts,
            replaying=self.options.replay_har is not None,
            pause=self.options.pause,
        )

    def read_only(self, storage_state: str | None) -> PlaywrightHost:
        """A host on this browser for probes: new contexts from ``storage_state``, reads only.

        Nothing a probe loads is recorded into the run's HAR; a replay still answers it.
        """
        options = replace(
            self.options, storage_state=storage_state, read_only=True, record_har=None
        )
        return self.sharing_browser(options)

    def sharing_browser(self, options: BrowserSettings) -> PlaywrightHost:
        """A host with other per-context options (a replay, hooks) on this host's browser.

        Use it without ``async with``: the browser stays this host's to close. Launch
        options (headless, slow motion, executable) are this host's.
        """
        return PlaywrightHost.borrowing(self.browser, self.gate, options)

    @classmethod
    def borrowing(
        cls, browser: Browser, gate: OriginGate, options: BrowserSettings
    ) -> PlaywrightHost:
        """A host on someone else's browser and gate, used without ``async with``."""
        view = cls(options)
        view._browser = browser
        view._gate = gate
        view._shares_browser = True  # nothing would close the contexts it kept
        return view


def launch_arguments(options: BrowserSettings, executable: str | None) -> dict[str, Any]:
    """Keyword arguments for ``chromium.launch``: Northstar's, then ``launch_options`` winning.

    ``executable`` is the discovered one (``None`` when a ``channel`` names the browser).
    """
    given = dict(options.launch_options)
    arguments: dict[str, Any] = {
        "executable_path": executable,
        "headless": options.headless,
        "slow_mo": options.slow_mo_ms or None,
    }
    args = [*_QUIET_ARGS, *options.extra_args, *given.pop("args", ())]
    return {**arguments, **given, "args": args}


def _needs_display(launch_error: str) -> bool:
    """Whether a launch failed for want of a display (Playwright's and Chromium's words)."""
    return "XServer" in launch_error or "Missing X server" in launch_error


async def _close(context: BrowserContext, watch: BrowserWatch) -> None:
    # If the browser went away first, the context went with it.
    with suppress(PlaywrightError, NorthstarError):
        await watch.call(context.close(), what="close the context")
