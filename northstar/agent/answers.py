"""What each agent call answers: plain, frozen data with a ``text`` for a model's context.

Every answer of ``observe``, ``act`` and ``check`` carries ``signal``, the session's
standing ``LoopSignal`` when the BehaviorMonitor has one (counts and guidance, never typed
input or sensitive control names). It is advice: it blocked nothing and decides nothing.
``text`` is the whole answer in words, the signal included, ready for a model's context;
the other fields say the same as data.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from northstar.agent.dry_replay import DryReplay
from northstar.monitor.behavior import LoopSignal

__all__ = [
    "ActAnswer",
    "CheckAnswer",
    "ObserveAnswer",
    "RecipeSaved",
    "SessionClosed",
    "SessionOpened",
    "TabsAnswer",
]


class _Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SessionOpened(_Answer):
    """A new session: present ``credential`` with every later call (it is shown only here)."""

    session_id: str
    credential: str
    tabs: dict[str, str]  # role -> the URL its tab opened at

    @property
    def text(self) -> str:
        roles = ", ".join(f"{role} ({url})" for role, url in self.tabs.items())
        return f"session {self.session_id} opened with tabs: {roles}"


class SessionClosed(_Answer):
    """A closed session; ``status`` is what the journal recorded for it."""

    session_id: str
    status: str  # "stopped", or "blocked" when a submission's outcome is unknown

    @property
    def text(self) -> str:
        return f"session {self.session_id} closed ({self.status})"


class ObserveAnswer(_Answer):
    """One tab's page: the whole of it (``full``), or what changed since the last look.

    References (``[ref=…]``) in ``text`` act on elements until the next observation of the
    tab; one the answer does not repeat stays valid while its element is unchanged.
    """

    tab: str
    url: str
    title: str
    full: bool
    text: str
    signal: LoopSignal | None = None
    # The change's lines alone ("" when nothing changed) when the tab stayed at the URL and
    # title of its last look: an act answer shows only these, the agent has the rest.
    brief: str | None = None

    def fields(self) -> dict[str, Any]:
        """The structured content: the URL and whether the text is the whole page. The text
        travels once, as the content; its header names the tab and the title."""
        return self.model_dump(mode="json", include={"url", "full", "signal"}, exclude_none=True)


class ActAnswer(_Answer):
    """An action's outcome and the tab's page after it (as ``observe`` would answer).

    ``dispatched`` is false when a submission's key was already recorded as done in this
    session: nothing was sent again and ``page`` is the answer recorded the first time.

    What an agent reads costs its context, so the answer says each thing once: an action
    that changed nothing is one line; one that changed the tab where it stands shows only
    the changed lines (no tab header: the agent knows where it is); a new URL or title
    shows the observation once. ``fields`` (the structured content) holds only what the
    text does not say as data: whether it changed anything, a submission's key and
    whether it was sent, tabs opened or closed, and the page's place when it moved.
    """

    tab: str
    action: str
    did: str  # e.g. 'click button "Send"'; typed values are never repeated here
    dispatched: bool
    submission_key: str | None = None
    page: ObserveAnswer
    signal: LoopSignal | None = None
    # Popups the action opened (each now a tab role of the session, guarded by its
    # opener's origins), and tabs that closed; when ``tab`` closed, ``page`` is its opener's.
    tabs_opened: list[str] = []
    tabs_closed: list[str] = []

    @property
    def text(self) -> str:
        """One short line when the action changed nothing; the change's lines under it when
        the tab stayed where it was; the observation (once) when the page moved on."""
        head = self.did if self.dispatched else f"{self.did}: already done, not sent again"
        tabs = self._tab_lines()
        if self.page.brief is None:  # a new URL or title: the observation, once
            body = _without_signal(self.page.text)
        else:
            body = self.page.brief or ("no change" if tabs else "")
        lines = [head, *tabs, body] if body else [f"{head}: no change"]
        return "\n".join([*lines, *_signal_lines(self.signal)])

    @property
    def _stayed(self) -> bool:
        """Whether the acted-on tab is still at the URL and title of its last look."""
        return self.page.tab == self.tab and self.page.brief is not None

    def fields(self) -> dict[str, Any]:
        """The structured content: only what the action changed or what is not the usual
        (``page`` only when the page changed; its URL and title only when they did)."""
        data: dict[str, Any] = {}  # ``did`` is the text's head
        if self.submission_key is not None:  # only a submission can be answered unsent
            data["dispatched"] = self.dispatched
        for name in ("submission_key", "signal", "tabs_opened", "tabs_closed"):
            value = getattr(self, name)
            if value:
                data[name] = value.model_dump(mode="json") if name == "signal" else value
        data["changed"] = not self._stayed or bool(self.page.brief)
        if not self._stayed:  # another URL, title or tab: where the agent is now
            page = {k: v for k, v in self.page.fields().items() if k != "signal"}
            data["page"] = page if self.page.tab == self.tab else {"tab": self.page.tab, **page}
        return data

    def _tab_lines(self) -> list[str]:
        lines = [
            f"opened tab {role!r} (a popup; act on it with tab={role!r})"
            for role in self.tabs_opened
        ]
        lines += [f"tab {role!r} closed itself" for role in self.tabs_closed]
        if self.page.tab != self.tab:
            lines.append(f"tab {self.page.tab!r}, which opened it, after the action:")
        return lines


class TabsAnswer(_Answer):
    """The session's open tabs: role, the URL it showed last, and the role that opened it."""

    tabs: list[dict[str, str | None]]

    @property
    def text(self) -> str:
        lines = []
        for tab in self.tabs:
            opener = f" (popup of {tab['opened_by']!r})" if tab["opened_by"] else ""
            lines.append(f"{tab['role']}{opener}: {tab['url'] or 'not observed yet'}")
        return "\n".join(lines) or "no open tabs"


class CheckAnswer(_Answer):
    """Whether a recipe check held on the tab (a check is passive: it changes nothing)."""

    tab: str
    check: str  # the check in words
    held: bool
    found: str = ""  # what the page showed, or why the check did not hold
    signal: LoopSignal | None = None

    @property
    def text(self) -> str:
        verdict = "held" if self.held else "did not hold"
        found = f": {self.found}" if self.found else ""
        return "\n".join([f"check {verdict}: {self.check}{found}", *_signal_lines(self.signal)])


class RecipeSaved(_Answer):
    """A session saved as a recipe: where, its definition hash and its text.

    ``params`` maps each parameter to ``"secret"`` or ``"default"``; no value is repeated
    here (a default is in ``yaml``; a secret's value is nowhere).
    """

    session_id: str
    name: str
    path: str
    definition_hash: str
    params: dict[str, str]
    yaml: str
    param_reasons: dict[str, str] = {}  # why each parameter is one
    proof: DryReplay | None = None  # validated, linted and replayed dry up to a submission
    # Steps whose target could not be made unique, with where the elements alike are.
    not_unique: dict[str, list[str]] = {}

    @property
    def text(self) -> str:
        listed = (
            ", ".join(
                f"{name} ({kind}: {self.param_reasons.get(name, 'typed')})"
                for name, kind in self.params.items()
            )
            or "none"
        )
        proof = f"\n{self.proof.text}" if self.proof is not None else ""
        for step, alike in self.not_unique.items():
            where = "; ".join(alike) or "unknown"
            proof += f"\nstep {step!r}: its target matches several elements ({where}): narrow it"
        return (
            f"recipe {self.name!r} saved to {self.path} (definition hash "
            f"{self.definition_hash}); parameters: {listed}{proof}\n{self.yaml}"
        )


SIGNAL_PREFIX = "loop signal (advice only, nothing was blocked): "


def _signal_lines(signal: LoopSignal | None) -> list[str]:
    return [] if signal is None else [SIGNAL_PREFIX + signal.guidance]


def _without_signal(text: str) -> str:
    """A page's text without its signal line: an act answer states the signal once."""
    return "\n".join(line for line in text.split("\n") if not line.startswith(SIGNAL_PREFIX))


def with_signal(text: str, signal: LoopSignal | None) -> str:
    """``text`` followed by the signal's guidance line, when there is a signal."""
    return "\n".join([text, *_signal_lines(signal)])
