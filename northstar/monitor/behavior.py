"""The BehaviorMonitor: an advisory hint when actions repeat or the page stops changing.

The monitor is pure bookkeeping over fingerprints (see ``northstar.monitor.fingerprints``); it does
no I/O besides two log events, and it never fails or completes anything. Its output is a
``LoopSignal`` returned from ``record_action`` / ``record_observation`` at the moment a loop
is recognised, and kept in ``current_signal`` until progress resumes.

Rules (thresholds are ``MonitorSettings``; defaults in brackets):

- **Repetition.** The action history ends in a run of repeated actions: the same action
  (period 1) or a repeating sequence such as open/close/open/close (period 2 up to
  ``max_cycle_period``). It signals when the run is ``repeated_actions`` [5] long, the
  observations taken during it returned to one and the same state ``state_revisits`` [3]
  times (the state before the run counts as the first visit), and the latest observation is
  such a return. Only what an action led to counts: the observations between two actions
  (an agent re-reading the page, waiting, checking) are one visit, of the state the last of
  them showed, so observing a page three times after one action is not "coming back" to it.
  States are compared by the coarse state key, so a menu rebuilt with a fresh DOM on every
  toggle still counts as the same state; and when the controls changed with the last action
  and came back to an earlier look, by the cycle key, which leaves out the numbers in the
  page's other text: a menu whose page counts its openings still closes into the state it
  started from. A page whose controls stay the same while its content advances (the next
  month, more of a feed, rows that differ only in their numbers) shows new states: progress.
- **Blind repetition.** With no observation during the run (or only observations of states
  already seen), the run alone decides, at a higher bar: ``unobserved_repeats`` [8].
- **Stagnation.** ``stagnant_observations`` [5] observations in a row of the same tab with the
  same exact fingerprint. An observation that follows a passive step (a wait or a check)
  neither extends nor breaks the run: waiting on a page that has not changed yet is normal.

Passive steps never enter the action history; actions that were not executed are ignored.
Observing a different tab breaks a stagnant run, so moving between tabs is not stagnation.

A signal is raised once per loop. While it stands, further events of the same loop only
update its counts. It clears on progress: an observation showing a state not seen during
the loop, or (for repetition) an action that is not part of the repeating run.

Changing course never raises a signal: an action that breaks a streak of repeated actions
(it is none of them) clears any standing signal, raises nothing, and restarts the count of
stagnant observations, so the look of the page just after the change is not held against it.

Signals hold counts, step kinds, roles and guidance only; never element names, typed text,
URLs or secret values, so they can go into a model's context and the logs as they are.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from dataclasses import dataclass, replace
from itertools import islice
from typing import Literal, Self

import structlog
from pydantic import BaseModel, ConfigDict, Field, model_validator

from northstar.monitor.fingerprints import (
    ActionRecord,
    ObservationDigest,
    digest_observation,
    fingerprint_action,
)
from northstar.monitor.observation import Observation

__all__ = ["BehaviorMonitor", "LoopSignal", "MonitorSettings", "SignalKind"]

SignalKind = Literal[
    "repeated_actions", "action_cycle", "stagnant_observations", "repeated_actions_unobserved"
]

_log = structlog.get_logger("northstar.monitor.behavior")


class MonitorSettings(BaseModel):
    """Thresholds and history sizes of the monitor, validated within bounds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action_history: int = Field(64, ge=8, le=10_000)
    observation_history: int = Field(64, ge=8, le=10_000)
    repeated_actions: int = Field(5, ge=2, le=1_000)
    state_revisits: int = Field(3, ge=1, le=1_000)
    stagnant_observations: int = Field(5, ge=2, le=1_000)
    unobserved_repeats: int = Field(8, ge=2, le=1_000)
    max_cycle_period: int = Field(4, ge=1, le=16)

    @model_validator(mode="after")
    def _histories_hold_their_rules(self) -> Self:
        needed = max(self.repeated_actions, self.unobserved_repeats, 2 * self.max_cycle_period)
        if self.action_history < needed:
            raise ValueError(
                f"action_history={self.action_history} cannot hold a run of {needed} actions; "
                f"set action_history to at least {needed} or lower the action thresholds"
            )
        needed = max(self.stagnant_observations, self.state_revisits + 1)
        if self.observation_history < needed:
            raise ValueError(
                f"observation_history={self.observation_history} cannot hold {needed} "
                f"observations; set it to at least {needed} or lower the observation thresholds"
            )
        return self


class LoopSignal(BaseModel):
    """An advisory hint that the run repeats itself; counts and guidance, nothing sensitive."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: SignalKind
    tab: str
    action_kinds: tuple[str, ...] = ()
    target_roles: tuple[str, ...] = ()
    repeated_actions: int = 0
    cycle_period: int = 0
    observations: int = 0
    state_revisits: int = 0
    stagnant_observations: int = 0
    guidance: str


@dataclass(frozen=True, slots=True)
class _ActionEntry:
    seq: int
    fingerprint: str
    tab: str
    kind: str
    target_role: str | None


@dataclass(frozen=True, slots=True)
class _ObservationEntry:
    seq: int
    tab: str
    fingerprint: str
    state_key: str
    cycle_key: str
    controls_key: str
    state: str  # the state as the loop rules compare them: see ``BehaviorMonitor._state_of``


@dataclass(frozen=True, slots=True)
class _Run:
    """The repeating run at the end of the action history."""

    length: int
    period: int
    entries: tuple[_ActionEntry, ...]


@dataclass(frozen=True, slots=True)
class _Window:
    """The observations taken during a run, compared with the one just before it."""

    observations: int  # the actions of the run that were followed by an observation
    revisits: int  # returns to the single most visited state
    new_states: int
    latest_is_revisit: bool
    states: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Finding:
    """A loop that a rule recognises now; ``actions=None`` means actions are not progress."""

    kind: SignalKind
    tab: str
    counts: tuple[int, int, int, int, int]
    action_kinds: tuple[str, ...]
    target_roles: tuple[str, ...]
    actions: frozenset[str] | None
    states: frozenset[str]

    def signal(self) -> LoopSignal:
        repeated, period, observations, revisits, stagnant = self.counts
        return LoopSignal(
            kind=self.kind,
            tab=self.tab,
            action_kinds=self.action_kinds,
            target_roles=self.target_roles,
            repeated_actions=repeated,
            cycle_period=period,
            observations=observations,
            state_revisits=revisits,
            stagnant_observations=stagnant,
            guidance=_guidance(self.kind, self.counts, self.action_kinds),
        )


def _guidance(
    kind: SignalKind, counts: tuple[int, int, int, int, int], kinds: tuple[str, ...]
) -> str:
    repeated, period, _, revisits, stagnant = counts
    what = "/".join(kinds) or "action"
    if kind == "repeated_actions":
        return (
            f"The same {what} was done {repeated} times and the tab came back to a state it had "
            f"shown before {revisits} times. Doing it again is unlikely to help: check whether "
            "the step's goal is already met, then choose a different action or stop for review."
        )
    if kind == "action_cycle":
        return (
            f"The last {repeated} actions repeat a cycle of {period} ({what}), like opening and "
            f"closing the same menu, and the tab returned to earlier states {revisits} times. "
            "Break the cycle: decide what the step needs from the page, act once towards it, "
            "or stop for review."
        )
    if kind == "repeated_actions_unobserved":
        return (
            f"The same {what} was done {repeated} times without the tab showing anything new. "
            "Observe the tab to see whether the action has any effect before repeating it, "
            "or stop for review."
        )
    return (
        f"The tab looked the same in {stagnant} observations in a row. If the page is still "
        "working, use a wait step with an expectation; otherwise try a different action or "
        "stop for review."
    )


@dataclass(slots=True)
class _Active:
    finding: _Finding
    signal: LoopSignal | None = None

    def current(self) -> LoopSignal:
        """The signal with the latest counts, built only when someone asks for it."""
        if self.signal is None:
            self.signal = self.finding.signal()
        return self.signal


class BehaviorMonitor:
    """Watches one run's actions and observations; see the module docstring for the rules."""

    def __init__(self, settings: MonitorSettings | None = None) -> None:
        self.settings = settings or MonitorSettings()
        self._clear()

    def _clear(self) -> None:
        self._actions: deque[_ActionEntry] = deque(maxlen=self.settings.action_history)
        self._observations: deque[_ObservationEntry] = deque(
            maxlen=self.settings.observation_history
        )
        # _runs[p]: how many trailing actions equal the action p places before them.
        self._runs = [0] * (self.settings.max_cycle_period + 1)
        self._stagnant = 0
        self._passive_since_observation = False
        self._seq = 0
        self._active: _Active | None = None

    @property
    def current_signal(self) -> LoopSignal | None:
        """The standing signal, with up-to-date counts, or ``None`` after progress."""
        return None if self._active is None else self._active.current()

    def reset(self) -> None:
        """Forget everything, e.g. when a new iteration starts from a fresh context."""
        self._clear()

    def record_action(self, action: ActionRecord) -> LoopSignal | None:
        """Record an action; returns a signal only when this action completes a new loop."""
        if not action.executed:
            return None  # Planned but never dispatched: nothing happened on the page.
        if action.is_passive:
            self._passive_since_observation = True
            return None
        fingerprint = fingerprint_action(action)
        changes_course = self._changes_course(fingerprint)
        entry = self._append_action(action, fingerprint)
        if changes_course:
            self._stagnant = 0  # a fresh start: the page before the change is not held against it
            self._clear_signal()
            return None
        active = self._active
        progressed = (
            active is not None
            and active.finding.actions is not None
            and entry.fingerprint not in active.finding.actions
        )
        return self._settle(progressed)

    def record_observation(self, observation: Observation | ObservationDigest) -> LoopSignal | None:
        """Record an observation (or its precomputed digest); returns a newly raised signal."""
        digest = (
            observation
            if isinstance(observation, ObservationDigest)
            else digest_observation(observation)
        )
        entry = self._append_observation(digest)
        active = self._active
        progressed = active is not None and entry.state not in active.finding.states
        return self._settle(progressed)

    # Histories

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _append_action(self, action: ActionRecord, fingerprint: str) -> _ActionEntry:
        target_role = None if action.target is None else action.target.role
        entry = _ActionEntry(self._next_seq(), fingerprint, action.tab, action.kind, target_role)
        history = self._actions
        for period in range(1, len(self._runs)):
            repeats = len(history) >= period and history[-period].fingerprint == entry.fingerprint
            self._runs[period] = self._runs[period] + 1 if repeats else 0
        history.append(entry)
        self._passive_since_observation = False
        return entry

    def _append_observation(self, digest: ObservationDigest) -> _ObservationEntry:
        entry = _ObservationEntry(
            self._next_seq(),
            digest.tab,
            digest.fingerprint,
            digest.state_key,
            digest.cycle_key,
            digest.controls_key,
            self._state_of(digest),
        )
        previous = self._observations[-1] if self._observations else None
        unchanged = (
            previous is not None
            and previous.tab == entry.tab
            and previous.fingerprint == entry.fingerprint
        )
        if not unchanged:
            self._stagnant = 1
        elif not self._passive_since_observation:
            self._stagnant += 1
        self._passive_since_observation = False
        self._observations.append(entry)
        return entry

    def _state_of(self, digest: ObservationDigest) -> str:
        """The state an observation shows, as the rules compare states (module docstring).

        The same state key is the same state. The same cycle key is the same state only
        when the controls changed with the last action: a toggle back to an earlier look.
        """
        before = self._last_observation_before_action(digest.tab)
        toggled = (
            before is not None
            and bool(digest.controls_key)
            and before.controls_key != digest.controls_key
        )
        for earlier in reversed(self._observations):
            if earlier.tab != digest.tab:
                continue
            if earlier.state_key == digest.state_key:
                return earlier.state
            if toggled and digest.cycle_key and earlier.cycle_key == digest.cycle_key:
                return earlier.state
        return digest.state_key

    def _last_observation_before_action(self, tab: str) -> _ObservationEntry | None:
        """The tab's look before the latest action: what that action changed."""
        if not self._actions:
            return None
        acted = self._actions[-1].seq
        for earlier in reversed(self._observations):
            if earlier.tab == tab and earlier.seq < acted:
                return earlier
        return None

    def _changes_course(self, fingerprint: str) -> bool:
        """Whether an action breaks a streak: the actions before it repeat, it is none of them."""
        streak = max(
            (self._runs[p] + p for p in range(1, len(self._runs)) if self._runs[p] >= p),
            default=0,
        )
        if streak < 2:
            return False
        recent = islice(reversed(self._actions), min(streak, len(self._actions)))
        return all(entry.fingerprint != fingerprint for entry in recent)

    # Decisions

    def _clear_signal(self) -> None:
        if self._active is not None:
            _log.info("loop_signal_cleared", kind=self._active.finding.kind)
            self._active = None

    def _settle(self, progressed: bool) -> LoopSignal | None:
        """Raise, freeze or clear the signal after an event; return it only when raised."""
        finding = self._find()
        if self._active is not None and not progressed:
            if finding is not None:
                self._active = _Active(_merge(self._active.finding, finding))
            return None
        self._clear_signal()
        if finding is None:
            return None
        self._active = _Active(finding)
        signal = self._active.current()
        _log.info("loop_signal", **signal.model_dump(exclude={"guidance"}))
        return signal

    def _find(self) -> _Finding | None:
        run = self._repeating_run()
        found = None if run is None else self._repetition(run)
        return found if found is not None else self._stagnation()

    def _repeating_run(self) -> _Run | None:
        """The longest run at the end of the history that repeats with a period of 1..k."""
        length, period = 0, 0
        for p in range(1, len(self._runs)):
            if self._runs[p] >= p:  # at least two full periods
                candidate = min(self._runs[p] + p, len(self._actions))
                if candidate > length:
                    length, period = candidate, p
        s = self.settings
        if length < min(s.repeated_actions, s.unobserved_repeats):
            return None
        entries = tuple(islice(reversed(self._actions), length))[::-1]
        return _Run(length, period, entries)

    def _window(self, run: _Run) -> _Window:
        """The run's observations (on its tabs), counted against the state it started from.

        Each action of the run counts once, for the state the last observation after it
        showed (module docstring): re-reading the page between two actions is no revisit.
        """
        tabs = {e.tab for e in run.entries}
        acted = [e.seq for e in run.entries]
        start: str | None = None
        after_action: dict[int, str] = {}  # the run's action number -> the state it led to
        for obs in reversed(self._observations):
            if obs.tab not in tabs:
                continue
            if obs.seq < acted[0]:
                start = obs.state  # the state the run started from
                break
            after_action.setdefault(bisect_left(acted, obs.seq), obs.state)  # the newest wins
        return _count_visits(start, [after_action[n] for n in sorted(after_action)])

    def _repetition(self, run: _Run) -> _Finding | None:
        s = self.settings
        window = self._window(run)
        seen_loop = (
            run.length >= s.repeated_actions
            and window.revisits >= s.state_revisits
            and window.latest_is_revisit
        )
        blind_loop = run.length >= s.unobserved_repeats and window.new_states == 0
        if not (seen_loop or blind_loop):
            return None
        kind: SignalKind = "repeated_actions" if run.period == 1 else "action_cycle"
        if window.observations == 0:
            kind = "repeated_actions_unobserved"
        return _Finding(
            kind=kind,
            tab=run.entries[-1].tab,
            counts=(run.length, run.period, window.observations, window.revisits, 0),
            action_kinds=tuple(sorted({e.kind for e in run.entries})),
            target_roles=tuple(sorted({e.target_role for e in run.entries if e.target_role})),
            actions=frozenset(e.fingerprint for e in run.entries),
            states=window.states,
        )

    def _stagnation(self) -> _Finding | None:
        if self._stagnant < self.settings.stagnant_observations:
            return None
        latest = self._observations[-1]
        return _Finding(
            kind="stagnant_observations",
            tab=latest.tab,
            counts=(0, 0, self._stagnant, 0, self._stagnant),
            action_kinds=(),
            target_roles=(),
            actions=None,
            states=frozenset({latest.state}),
        )


def _count_visits(start: str | None, states: list[str]) -> _Window:
    """Visits per state, starting from ``start``; ``states`` are what each action led to."""
    visits: dict[str, int] = {} if start is None else {start: 1}
    new_states = 0
    latest_is_revisit = False
    for state in states:
        latest_is_revisit = state in visits
        new_states += not latest_is_revisit
        visits[state] = visits.get(state, 0) + 1
    revisits = max(visits.values(), default=1) - 1  # of the single most visited state
    return _Window(len(states), revisits, new_states, latest_is_revisit, frozenset(visits))


def _merge(standing: _Finding, latest: _Finding) -> _Finding:
    """The standing loop with the latest counts; what counts as progress only widens."""
    actions = latest.actions if standing.actions is None else standing.actions
    if latest.actions is not None and standing.actions is not None:
        actions = standing.actions | latest.actions
    return replace(latest, actions=actions, states=standing.states | latest.states)
