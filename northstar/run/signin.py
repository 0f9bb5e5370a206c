"""Sign in once: a recipe's ``setup`` run per lane, its state held as a secret and re-checked.

A recipe with ``setup`` signs in once per run and lane, in a context of its own, before
the lane's first iteration; the storage state it leaves (cookies, local storage,
IndexedDB) is written beside the journal with mode 0600 and every iteration's fresh
context is made from it (``RunIdentity``), so iterations stay isolated and the login is
not repeated. Before each later iteration (never inside one, never after a submission
was dispatched) the ``signed_in`` checks are run in a fresh context made from the state;
if they fail, ``setup`` runs again once, and if they still fail the run stops with
``SIGN_IN_FAILED`` before that iteration started: nothing is sent. The decision is
``next_move`` over plain facts; ``LaneSignIn`` is the thin driver around it.

The state holds live session cookies: it is never journaled, logged or put in a report,
and ``remove_held`` deletes it when the run ends (``--keep-state FILE`` keeps a copy).
A queued worker keeps its lanes' sign-ins across the iterations it serves
(``KeptSignIns``) and deletes them when a run settles and when it exits.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from enum import StrEnum
from pathlib import Path
from typing import Any

import structlog

from northstar.browser import BrowserHost, BrowserSession
from northstar.errors import NorthstarError, SignedOut, SignInFailed
from northstar.logs import secret_values
from northstar.plan.compiler import CompiledRecipe, bind
from northstar.plan.model import Plan
from northstar.recipe.model import Check, Step
from northstar.recipe.templates import TemplateError, template_names
from northstar.results import IterationResult, IterationState
from northstar.run.identity import RunIdentity
from northstar.run.runner import ProgramRunner, open_session

__all__ = [
    "KeptSignIns",
    "LaneSignIn",
    "SignInMove",
    "SignInPlans",
    "check_plan",
    "end_held",
    "held_identity",
    "keep_state",
    "next_move",
    "remove_held",
    "save_sign_in",
    "setup_only_params",
    "setup_plan",
    "sign_in_part",
    "signed_out",
    "signed_out_or",
    "state_file",
    "without_sign_in",
    "write_state",
]

log = structlog.get_logger("northstar.run.signin")

SignInEvent = Callable[[str, Mapping[str, Any]], None]


class SignInMove(StrEnum):
    """What to do after a ``signed_in`` check."""

    USE = "use"  # the state holds: start the iteration from it
    SET_UP = "set_up"  # run ``setup`` (again), then check once more
    FAIL = "fail"  # SIGN_IN_FAILED: no iteration starts


def next_move(*, holds: bool, has_setup: bool, setups_run: int) -> SignInMove:
    """After a check: use a state that holds; else run ``setup`` once; else give up.

    ``setups_run`` counts the setups run for this check point: a second failure after a
    fresh setup means the credentials or the steps are wrong, and trying again would
    only send more logins.
    """
    if holds:
        return SignInMove.USE
    if has_setup and setups_run == 0:
        return SignInMove.SET_UP
    return SignInMove.FAIL


def _part_of(compiled: CompiledRecipe, steps: list[Step], checks: list[Check]) -> CompiledRecipe:
    """The recipe with only ``steps`` and ``checks`` as its work (no outputs, no setup)."""
    update = {"steps": steps, "done_when": checks, "outputs": {}, "setup": [], "signed_in": []}
    # The line numbers are those of the recipe's ``steps``; these steps are others.
    recipe = compiled.recipe.model_copy(update=update)
    return dataclasses.replace(compiled, recipe=recipe, step_lines=())


def sign_in_part(compiled: CompiledRecipe) -> CompiledRecipe:
    """The recipe as ``northstar sign-in`` needs it: ``setup`` and ``signed_in`` and only
    the parameters they use, so a sign-in asks for no iteration's values (a title)."""
    recipe = compiled.recipe
    texts = json.dumps([s.model_dump(mode="json") for s in [*recipe.setup, *recipe.signed_in]])
    used = template_names(texts) | {n for t in recipe.tabs.values() for n in _names(t.start)}
    update = {
        "params": {n: p for n, p in recipe.params.items() if n in used},
        "steps": list(recipe.setup) or recipe.steps[:0],
        "outputs": {},
        "done_when": [],
    }
    return dataclasses.replace(compiled, recipe=recipe.model_copy(update=update), step_lines=())


def setup_only_params(compiled: CompiledRecipe) -> frozenset[str]:
    """The parameters only ``setup`` and ``signed_in`` use (a password): an iteration,
    started from a signed-in state, never needs them; a recorded case replays without."""
    recipe = compiled.recipe
    signing_in = [s.model_dump(mode="json") for s in [*recipe.setup, *recipe.signed_in]]
    rest = recipe.model_dump(mode="json", exclude={"setup", "signed_in", "params"})
    return frozenset(_names_in(signing_in) - _names_in(rest))


def _names_in(value: Any) -> set[str]:
    """The template names in dumped recipe data (a regex or a prose field is no template)."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return set().union(*(_names_in(item) for item in value))
    try:
        return template_names(value) if isinstance(value, str) else set()
    except TemplateError:
        return set()


def without_sign_in(compiled: CompiledRecipe) -> CompiledRecipe:
    """The recipe with no ``setup`` or ``signed_in``, for replaying a case recorded signed
    in: its recording holds no sign-in, and answers every request whatever cookie is sent."""
    recipe = compiled.recipe.model_copy(update={"setup": [], "signed_in": []})
    return dataclasses.replace(compiled, recipe=recipe)


def _names(text: str | None) -> set[str]:
    return template_names(text) if text else set()


def setup_plan(
    compiled: CompiledRecipe, values: Mapping[str, Any], base_url: str | None
) -> Plan | None:
    """``setup`` as a plan whose ``done_when`` is ``signed_in``; ``None`` without setup."""
    recipe = compiled.recipe
    if not recipe.setup:
        return None
    part = _part_of(compiled, recipe.setup, recipe.signed_in)
    return bind(part, values, base_url=base_url, iteration=0)


def check_plan(
    compiled: CompiledRecipe, values: Mapping[str, Any], base_url: str | None
) -> Plan | None:
    """The ``signed_in`` checks as passive steps, each on its tab's start page."""
    checks = compiled.recipe.signed_in
    if not checks:
        return None
    steps = [
        Step(id=f"signed-in-{i}", tab=str(c.tab), verify_outcome=c.model_copy(update={"tab": None}))
        for i, c in enumerate(checks, start=1)
    ]
    return bind(_part_of(compiled, steps, []), values, base_url=base_url, iteration=0)


@dataclasses.dataclass(frozen=True)
class SignInPlans:
    """A run's rendered ``setup`` and ``signed_in`` plans (either may be absent)."""

    setup: Plan | None
    check: Plan | None

    @classmethod
    def of(
        cls, compiled: CompiledRecipe, values: Mapping[str, Any], base_url: str | None
    ) -> SignInPlans | None:
        """``None`` when the recipe has neither: its runs do not sign in."""
        plans = cls(setup_plan(compiled, values, base_url), check_plan(compiled, values, base_url))
        return plans if plans.setup or plans.check else None


def state_file(artifacts: Path, lane: int) -> Path:
    """Where a lane's signed-in state is held: beside the journal, in the run's folder."""
    return artifacts / f"signed-in-lane-{lane}.json"


def write_state(path: Path, state: Mapping[str, Any]) -> None:
    """Write a storage state only its owner may read (0600, also when the file existed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(handle, "w") as file:
        os.fchmod(file.fileno(), 0o600)
        json.dump(dict(state), file)


def keep_state(source: str, destination: Path) -> None:
    """Copy a held state to ``--keep-state FILE``, readable by its owner only."""
    handle = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(handle, "wb") as file, open(source, "rb") as held:
        os.fchmod(file.fileno(), 0o600)
        shutil.copyfileobj(held, file)


def remove_held(identities: list[RunIdentity]) -> None:
    """Delete the states this run's setup made; a profile or ``--state`` file is the user's."""
    for identity in identities:
        if identity.held and identity.storage_state:
            Path(identity.storage_state).unlink(missing_ok=True)


def end_held(identities: list[RunIdentity], keep_to: str | None) -> None:
    """A run ended: copy its state to ``--keep-state`` (``keep_to``) if asked, then delete
    every state its ``setup`` made, even when the copy failed."""
    chosen = next((i.storage_state for i in identities if i.storage_state), None)
    try:
        if keep_to and chosen:
            keep_state(chosen, Path(keep_to))
    finally:
        remove_held(identities)


def signed_out(result: IterationResult) -> IterationResult:
    """An iteration that failed while the state no longer held: the site signed it out.

    The failing step met the sign-in page instead of its target, so its own code
    (``TARGET_MISSING``, ``EXPECTATION_FAILED``) would send a person to the recipe.
    """
    was = result.reason_code or "a failed step"
    reason = (
        f"the site signed the session out during step {result.failing_step!r} "
        f"(the step failed with {was}; the `signed_in` checks no longer hold)"
    )
    if result.failing_step is None:  # a program's: its reason names the open submissions
        reason = (
            "the site signed the session out during the iteration (the `signed_in` checks "
            f"no longer hold); it failed with {was}: {result.reason}"
        )
    return dataclasses.replace(result, reason_code=SignedOut.code, reason=reason)


class LaneSignIn:
    """One lane's signed-in state: set up once, checked before each iteration."""

    def __init__(
        self,
        host: BrowserHost,
        plans: SignInPlans,
        held_at: Path,
        start: RunIdentity,
        on_event: SignInEvent = lambda name, fields: None,
    ) -> None:
        self._host = host
        self._plans = plans
        self._held_at = held_at
        self.identity = start
        # Public: a worker keeps the sign-in across iterations, each with its lane's journal.
        self.on_event = on_event
        self._fresh = False  # set up and verified just now: the next check is not needed

    async def ready(self) -> RunIdentity:
        """The identity the next iteration starts from, signed in; else ``SignInFailed``."""
        holds = self._fresh or await self._holds_now()
        self._fresh = False
        setups_run = 0
        while True:
            move = next_move(
                holds=holds, has_setup=self._plans.setup is not None, setups_run=setups_run
            )
            if move is SignInMove.USE:
                return self.identity
            if move is SignInMove.FAIL:
                raise self._failed(setups_run)
            holds = await self._set_up()
            setups_run += 1

    @asynccontextmanager
    async def checked_session(
        self, plan: Plan, check: Plan | None
    ) -> AsyncIterator[BrowserSession]:
        """A fresh context for iteration ``plan``, made from a state that holds.

        The ``signed_in`` checks (``check``, rendered for this iteration) run in that very
        context, on its tabs' start pages, which the iteration's steps then go on with:
        proving the sign-in costs one check, not another context and page load. When they
        fail, the context is closed before any step, ``setup`` runs again once, and a new
        context is made; when they still fail, ``SignInFailed``.
        """
        setups_run = 0
        while True:
            if self.identity.storage_state is not None:
                async with open_session(self._host, plan, self.identity.storage_state) as session:
                    if await self._holds_in(session, check):
                        yield session
                        return
            holds = False
            move = next_move(
                holds=holds, has_setup=self._plans.setup is not None, setups_run=setups_run
            )
            if move is SignInMove.FAIL:
                raise self._failed(setups_run)
            await self._set_up()
            setups_run += 1

    async def _holds_in(self, session: BrowserSession, check: Plan | None) -> bool:
        """Whether every ``signed_in`` check holds in ``session`` (just set up: not asked)."""
        if self._fresh or check is None:
            self._fresh = False
            return True
        try:
            for step in check.steps:
                if not session.has_tab(step.tab):
                    await session.open_tab(check.tabs[step.tab], timeout_ms=step.timeout_ms)
                assert step.step.verify_outcome is not None
                await session.check(
                    step.step.verify_outcome, tab=step.tab, timeout_ms=step.timeout_ms
                )
        except NorthstarError as exc:
            self.on_event("signed_in_checked", {"holds": False, "code": exc.code})
            return False
        return True

    async def holds(self) -> bool:
        """Whether the ``signed_in`` checks hold with the current state (read-only)."""
        return await self._holds_now()

    async def _holds_now(self) -> bool:
        if self.identity.storage_state is None:
            return False  # nothing to be signed in with yet
        check = self._plans.check
        if check is None:
            return True  # no checks: a state that exists is taken to hold
        result = await self._run(check, self.identity.storage_state)
        self.on_event("signed_in_checked", {"holds": result.verified})
        return result.verified

    async def _set_up(self) -> bool:
        """Run ``setup`` in a clean context; on success hold its state. True if verified."""
        plan = self._plans.setup
        assert plan is not None
        token = secret_values.set(plan.secrets)  # typed passwords stay out of the logs
        try:
            result, state = await self._run_saving(plan)
        finally:
            secret_values.reset(token)
        self.on_event("setup_ran", {"verified": result.verified, "code": result.reason_code})
        log.info("setup_ran", verified=result.verified, reason=result.reason_code)
        if result.verified and state is not None:
            write_state(self._held_at, state)
            self.identity = self.identity.signed_in_with(self._held_at)
            self._fresh = True
        return result.verified

    async def _run(self, plan: Plan, storage_state: str | None) -> IterationResult:
        async with open_session(self._host, plan, storage_state) as session:
            return await ProgramRunner(self._host).run_iteration(plan, session=session)

    async def _run_saving(self, plan: Plan) -> tuple[IterationResult, dict[str, Any] | None]:
        """Run ``plan`` in a clean context and read that context's state before it closes."""
        async with self._host.session(plan) as session:
            result = await ProgramRunner(self._host).run_iteration(plan, session=session)
            if not result.verified:
                return result, None
            try:
                return result, await session.storage_state()
            except NorthstarError as exc:
                failed = IterationState.FAILED
                return dataclasses.replace(result, state=failed, reason_code=exc.code), None

    def _failed(self, setups_run: int) -> SignInFailed:
        if self._plans.setup is None:
            why = "the `signed_in` checks do not hold and the recipe has no `setup` to sign in"
        elif setups_run:
            why = "the `signed_in` checks still do not hold after `setup` ran again"
        else:
            why = "the `signed_in` checks do not hold"
        return SignInFailed(why + "; no iteration was started")


async def signed_out_or(result: IterationResult, sign_in: LaneSignIn | None) -> IterationResult:
    """``result``, or ``signed_out(result)`` when it failed and the state no longer holds."""
    failed = result.state in (IterationState.FAILED, IterationState.UNKNOWN)
    if sign_in is None or not failed or sign_in.identity.storage_state is None:
        return result
    return result if await sign_in.holds() else signed_out(result)


class KeptSignIns:
    """Lanes' sign-ins kept by a process that outlives each iteration: a queued worker.

    A worker runs one iteration at a time per lane, each handed over on its own; without
    this, each would sign in again. The states live in a folder of the worker's own (mode
    0700, each file 0600), never in the journal database, and go when this worker settles
    the run (``forget_run``) or exits (``close``). They are kept per run and lane: two
    runs may sign in as different accounts, and a lane's state is never shared with
    another (as in a local run).
    """

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="northstar-signed-in-"))  # mode 0700
        self._lanes: dict[tuple[str, int], LaneSignIn] = {}

    def kept(self, run_id: str, lane: int) -> LaneSignIn | None:
        """The lane's sign-in for ``run_id`` made by an earlier iteration, if any."""
        return self._lanes.get((run_id, lane))

    def keep(self, run_id: str, lane: int, sign_in: LaneSignIn) -> None:
        self._lanes[(run_id, lane)] = sign_in

    def state_file(self, run_id: str, lane: int) -> Path:
        """Where the lane's state for ``run_id`` is held while the worker serves it."""
        return self.folder / f"{run_id}-lane-{lane}.json"

    def forget_run(self, run_id: str) -> None:
        """The run settled: its states are of no more use and are deleted."""
        ended = [key for key in self._lanes if key[0] == run_id]
        remove_held([self._lanes.pop(key).identity for key in ended])

    def close(self) -> None:
        """The worker exits: every held state and the folder go."""
        remove_held([sign_in.identity for sign_in in self._lanes.values()])
        self._lanes.clear()
        shutil.rmtree(self.folder, ignore_errors=True)


@asynccontextmanager
async def held_identity(
    host: BrowserHost,
    compiled: CompiledRecipe,
    values: Mapping[str, Any],
    base_url: str | None,
    held_at: Path,
    start: RunIdentity,
) -> AsyncIterator[RunIdentity]:
    """A signed-in identity for work outside the lanes (a reconcile's probes), removed after.

    A probe that is not signed in would land on the sign-in page and could not tell a
    missing entry from a missing session; ``SignInFailed`` stops it before it looks.
    """
    plans = SignInPlans.of(compiled, values, base_url)
    if plans is None:
        yield start
        return
    sign_in = LaneSignIn(host, plans, held_at, start)
    token = secret_values.set(_secrets(plans))
    try:
        yield await sign_in.ready()
    finally:
        secret_values.reset(token)
        remove_held([sign_in.identity])


def _secrets(plans: SignInPlans) -> frozenset[str]:
    return frozenset().union(*(p.secrets for p in (plans.setup, plans.check) if p is not None))


async def save_sign_in(
    host: BrowserHost, plans: SignInPlans, save_to: Path, *, by_hand: bool, wait_ms: int
) -> None:
    """``northstar sign-in``: sign in once and save the state to ``save_to`` (mode 0600).

    By ``setup`` (checked by ``signed_in``), or ``by_hand``: a person signs in in the
    headed browser (a second factor, a captcha) and it ends when every ``signed_in`` check
    holds on the page they reached, up to ``wait_ms``; nothing is navigated under them.
    """
    if not by_hand:
        sign_in = LaneSignIn(host, plans, save_to, RunIdentity())
        await sign_in.ready()  # writes the state to ``save_to`` when setup verified
        return
    plan = plans.check
    if plan is None:
        raise SignInFailed(
            "signing in by hand ends when `signed_in` holds, and the recipe has none",
            fix="Add `signed_in:` checks to the recipe (for example a visible Log out).",
        )
    async with host.session(plan) as session:
        first = plan.steps[0].tab
        await session.open_tab(plan.tabs[first], timeout_ms=plan.default_timeout_ms)
        for step in plan.steps:
            assert step.step.verify_outcome is not None
            await session.check(step.step.verify_outcome, tab=step.tab, timeout_ms=wait_ms)
        write_state(save_to, await session.storage_state())
