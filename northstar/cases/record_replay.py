"""Recording a regression case live, and replaying it with no network at all.

Like ``northstar.composition``, this is a composition root: it wires the Playwright adapter
in, lazily, inside its functions (``import northstar.cases.record_replay`` loads no Playwright).
Neither function touches the journal: a case is a fixture, recorded and replayed in a
fresh browser of its own.

``record_case`` runs one iteration with Playwright's HAR recorder on and a DOM snapshot
after each step, and writes the case only if the iteration verified: into a hidden
sibling folder first, renamed into place at the end, so a failed recording never leaves
half a case. A recipe with ``setup`` signs in first through the run's own sign-in
(``northstar.run.signin.held_identity``), in a context that is not recorded; the state
it leaves seeds the recorded context and is deleted after, its values scrubbed from the
case (``manifest``). ``replay_case`` answers every request from the recording (what it
lacks is aborted and named) and compares the outputs with the recorded ones.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from northstar.browser.hooks import HookChain, IterationHooks
from northstar.browser.settings import BrowserSettings, PauseFunction
from northstar.cases.manifest import (
    HAR_FILE,
    RegressionCase,
    leaked_secrets,
    load_case,
    project_root,
    recorded_params,
    replay_params,
    restore_secrets,
    scrub_secrets,
    signed_in_values,
    snapshot_file_name,
)
from northstar.cases.results import CaseReplay
from northstar.composition import load_compiled
from northstar.errors import UsageInvalid
from northstar.logs import secret_values
from northstar.plan.compiler import CompiledRecipe, bind
from northstar.plan.model import Plan
from northstar.recipe.params import coerce_params
from northstar.results import IterationResult
from northstar.run.identity import RunIdentity, run_identity
from northstar.run.runner import ProgramRunner
from northstar.run.signin import held_identity, setup_only_params, state_file

if TYPE_CHECKING:
    from browser_adapters import PlaywrightHost
    from browser_adapters.debugging import ScreenshotMode

__all__ = ["RecordOutcome", "record_case", "replay_case"]


@dataclass(frozen=True)
class RecordOutcome:
    """The recorded iteration, and the case written from it (``None`` if not verified)."""

    result: IterationResult
    case: RegressionCase | None
    folder: Path


async def record_case(
    recipe_path: Path,
    params: Mapping[str, Any],
    *,
    to: Path,
    base_url: str | None = None,
    browser: BrowserSettings | None = None,
    overwrite: bool = False,
    shared: PlaywrightHost | None = None,
    state: str | None = None,
) -> RecordOutcome:
    """Run ``recipe_path`` once, live, and save what happened as a case in ``to``.

    A recipe with ``setup`` signs in first, as a run does (``held_identity``), in a
    context that is not recorded; ``state`` (a saved sign-in, ``--state``) is used
    instead while its ``signed_in`` checks hold. ``shared`` is a started host whose
    browser the recording borrows (tests do).
    """
    compiled = load_compiled(recipe_path)
    values = coerce_params(compiled.recipe.params, params, recipe_dir=recipe_path.parent)
    plan = bind(compiled, values, base_url=base_url)
    staging = _staging_folder(to, overwrite=overwrite)
    try:
        settings = _options(browser or BrowserSettings(), record_har=None, pause=None)
        sign_in = _SignIn.of(compiled, values, base_url, state=state, settings=settings)
        recorded = await _record_iteration(plan, staging, settings, shared, sign_in)
        if not recorded.result.verified:
            return RecordOutcome(recorded.result, None, to)
        case = _write_case(compiled, plan, recipe_path, base_url, recorded, staging, to)
        _move_into_place(staging, to)
        return RecordOutcome(recorded.result, case, to)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _staging_folder(to: Path, *, overwrite: bool) -> Path:
    """A hidden sibling of ``to`` (same file system, so the final rename is atomic)."""
    if to.exists() and not overwrite:
        raise UsageInvalid(f"{to} already exists", fix="Pass --force to record the case again.")
    to.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{to.name}.recording-", dir=to.parent))
    staging.chmod(0o755)  # a case is a fixture to share, not a private temporary folder
    return staging


def _move_into_place(staging: Path, to: Path) -> None:
    if to.exists():
        shutil.rmtree(to)
    staging.rename(to)


@dataclass(frozen=True)
class _Recorded:
    """The recorded iteration, its snapshots, and the sign-in it started from."""

    result: IterationResult
    snapshots: dict[str, str]
    signed_in: str | None  # the manifest's word for it (see ``RegressionCase``)
    state_values: dict[str, str]  # the started-from state's values: scrubbed, never kept


@dataclass(frozen=True)
class _SignIn:
    """How a recording signs in: as a run does, from the given state or by ``setup``."""

    compiled: CompiledRecipe
    values: Mapping[str, Any]
    base_url: str | None
    start: RunIdentity
    given: str | None  # "state" (--state), "profile" (--profile) or None

    @classmethod
    def of(
        cls,
        compiled: CompiledRecipe,
        values: Mapping[str, Any],
        base_url: str | None,
        *,
        state: str | None,
        settings: BrowserSettings,
    ) -> _SignIn:
        profile = settings.storage_state
        given = "state" if state else "profile" if profile else None
        return cls(compiled, values, base_url, run_identity(profile, state), given)

    @asynccontextmanager
    async def held(self, host: PlaywrightHost) -> AsyncIterator[RunIdentity]:
        """The run's own sign-in (``held_identity``), its state in a private folder that
        is deleted after: the state holds a live session and never reaches the case."""
        with tempfile.TemporaryDirectory(prefix="northstar-record-") as private:  # mode 0700
            held_at = state_file(Path(private), lane=1)
            async with held_identity(
                host, self.compiled, self.values, self.base_url, held_at, self.start
            ) as identity:
                yield identity

    def word(self, identity: RunIdentity) -> str | None:
        """The manifest's ``signed_in``: what the recorded iteration started from."""
        return "setup" if identity.held else self.given


async def _record_iteration(
    plan: Plan,
    folder: Path,
    settings: BrowserSettings,
    shared: PlaywrightHost | None,
    sign_in: _SignIn,
) -> _Recorded:
    """Sign in (unrecorded) when the recipe asks, then record one iteration from that state."""
    from browser_adapters.dom_snapshots import DomSnapshots

    snapshots = DomSnapshots(folder, snapshot_file_name)
    token = secret_values.set(plan.secrets)
    try:
        async with _started(settings, shared) as host, sign_in.held(host) as identity:
            # The sign-in's contexts were the host's; only this one writes the HAR.
            recording = host.sharing_browser(replace(settings, record_har=str(folder / HAR_FILE)))
            hooks = _chain(recording.iteration_hooks(folder), snapshots)
            runner = ProgramRunner(recording, hooks=hooks)
            result = await runner.run_iteration(plan, storage_state=identity.storage_state)
            values = _state_values(identity.storage_state)
    finally:
        secret_values.reset(token)
    return _Recorded(result, snapshots.saved, sign_in.word(identity), values)


def _state_values(storage_state: str | None) -> dict[str, str]:
    if storage_state is None:
        return {}
    return signed_in_values(json.loads(Path(storage_state).read_text(encoding="utf-8")))


def _write_case(
    compiled: CompiledRecipe,
    plan: Plan,
    recipe_path: Path,
    base_url: str | None,
    recorded: _Recorded,
    folder: Path,
    to: Path,
) -> RegressionCase:
    """Scrub secrets from everything recorded, check nothing leaked, write the manifest."""
    specs = compiled.recipe.params
    secrets = {n: str(plan.param_values[n]) for n, p in specs.items() if p.secret}
    secrets = {name: value for name, value in secrets.items() if value}
    hidden = {**recorded.state_values, **secrets}  # a parameter's marker wins a clash
    _scrub_file(folder / HAR_FILE, hidden, as_json=True)
    for name in recorded.snapshots.values():
        _scrub_file(folder / name, hidden, as_json=False)
    # A secret only ``setup`` used (a password) is not the replay's to ask for.
    replayed = sorted(set(secrets) - setup_only_params(compiled))
    root = project_root(to.parent)
    case = RegressionCase(
        name=to.name,
        recipe=_relative(recipe_path, root),
        base_url=base_url,
        params=recorded_params(specs, plan.param_values, root),
        secret_params=tuple(replayed),
        outputs=dict(recorded.result.outputs),
        definition_hash=plan.definition_hash,
        northstar_version=_version(),
        recorded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        snapshots=dict(recorded.snapshots),
        signed_in=recorded.signed_in,
    )
    (folder / "case.json").write_text(case.to_json(), encoding="utf-8")
    leaked = leaked_secrets((p.read_text(errors="replace") for p in folder.iterdir()), hidden)
    if leaked:  # the last guard: a case with a secret in it is never left behind
        raise UsageInvalid(
            f"the recording still holds the value of {', '.join(leaked)}",
            fix="The site echoes it in a form Northstar cannot scrub; do not record it.",
        )
    return case


def _scrub_file(path: Path, secrets: Mapping[str, str], *, as_json: bool) -> None:
    if not secrets or not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    if as_json:
        path.write_text(json.dumps(scrub_secrets(json.loads(text), secrets)), encoding="utf-8")
    else:
        path.write_text(scrub_secrets(text, secrets), encoding="utf-8")


async def replay_case(
    case_dir: Path,
    *,
    artifacts: Path,
    params: Mapping[str, Any] | None = None,
    recipe_path: Path | None = None,
    browser: BrowserSettings | None = None,
    screenshots: ScreenshotMode = "only-on-failure",
    pause: PauseFunction | None = None,
    shared: PlaywrightHost | None = None,
) -> CaseReplay:
    """Replay the case in ``case_dir`` offline; ``recipe_path`` replaces the recorded one.

    ``shared`` is a started host whose browser the replay borrows (the pytest plugin
    keeps one for the session); without it the replay launches its own.
    """
    case = load_case(case_dir)
    root = project_root(case_dir)
    recorded = root / case.recipe
    recipe_path = recipe_path or recorded
    # The case's files were selected beside the recipe it was recorded with.
    compiled = replace(load_compiled(recipe_path), files_dirs=(str(recorded.parent.resolve()),))
    specs = compiled.recipe.params
    raw = replay_params(case, specs, root, params or {})
    values = coerce_params(specs, raw, recipe_dir=recipe_path.parent)
    plan = bind(compiled, values, base_url=case.base_url)
    secrets = {n: str(values[n]) for n in case.secret_params if values.get(n)}
    with replay_har(case_dir, case, secrets) as har:
        settings = replace(browser or BrowserSettings(), replay_har=str(har))
        options = _options(settings, record_har=None, pause=pause)
        result = await _replay_iteration(plan, options, artifacts, screenshots, shared)
    return CaseReplay(case, case_dir, compiled.recipe, result, plan.definition_hash, artifacts)


async def _replay_iteration(
    plan: Plan,
    options: BrowserSettings,
    artifacts: Path,
    screenshots: ScreenshotMode,
    shared: PlaywrightHost | None,
) -> IterationResult:
    from browser_adapters.debugging import ScreenshotHooks

    token = secret_values.set(plan.secrets)
    try:
        async with _started(options, shared) as host:
            hooks = _chain(host.iteration_hooks(artifacts), ScreenshotHooks(screenshots, artifacts))
            return await ProgramRunner(host, hooks=hooks).run_iteration(plan)
    finally:
        secret_values.reset(token)


@asynccontextmanager
async def _started(
    options: BrowserSettings, shared: PlaywrightHost | None
) -> AsyncIterator[PlaywrightHost]:
    """A host for ``options``: on the shared browser, or on a browser of its own."""
    from browser_adapters import PlaywrightHost

    if shared is not None:
        yield shared.sharing_browser(options)
        return
    async with PlaywrightHost(options) as host:
        yield host


@contextmanager
def replay_har(case_dir: Path, case: RegressionCase, secrets: Mapping[str, str]) -> Iterator[Path]:
    """The case's HAR, or a private copy with the secret values put back, for one replay."""
    har = case_dir / case.har
    if not case.secret_params:
        yield har
        return
    with tempfile.TemporaryDirectory(prefix="northstar-replay-") as folder:
        restored = Path(folder) / HAR_FILE
        body = restore_secrets(json.loads(har.read_text(encoding="utf-8")), secrets)
        restored.write_text(json.dumps(body), encoding="utf-8")
        restored.chmod(0o600)
        yield restored


def _options(
    settings: BrowserSettings, *, record_har: str | None, pause: PauseFunction | None
) -> BrowserSettings:
    return replace(settings, pause=pause, record_har=record_har)


def _chain(*hooks: IterationHooks | None) -> IterationHooks:
    return HookChain([hook for hook in hooks if hook is not None])


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path.resolve())


def _version() -> str:
    try:
        return metadata.version("northstar")
    except metadata.PackageNotFoundError:
        return "unknown"
