"""Recording a regression case live, and replaying it with no network at all.

Like ``northstar.composition``, this is a composition root: it wires the Playwright adapter
in, lazily, inside its functions (``import northstar.cases.record_replay`` loads no Playwright).
Neither function touches the journal: a case is a fixture, recorded and replayed in a
fresh browser of its own.

``record_case`` runs one iteration with Playwright's HAR recorder on and a DOM snapshot
after each step, and writes the case only if the iteration verified: into a hidden
sibling folder first, renamed into place at the end, so a failed recording never leaves
half a case. ``replay_case`` answers every request from the recording (what it lacks is
aborted and named) and compares the outputs with the recorded ones.
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
from northstar.run.runner import ProgramRunner

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
) -> RecordOutcome:
    """Run ``recipe_path`` once, live, and save what happened as a case in ``to``.

    ``shared`` is a started host whose browser the recording borrows (tests do).
    """
    compiled = load_compiled(recipe_path)
    values = coerce_params(compiled.recipe.params, params, recipe_dir=recipe_path.parent)
    plan = bind(compiled, values, base_url=base_url)
    staging = _staging_folder(to, overwrite=overwrite)
    try:
        options = _options(
            browser or BrowserSettings(), record_har=str(staging / HAR_FILE), pause=None
        )
        result, snapshots = await _record_iteration(plan, staging, options, shared)
        if not result.verified:
            return RecordOutcome(result, None, to)
        case = _write_case(compiled, plan, recipe_path, base_url, result, snapshots, staging, to)
        _move_into_place(staging, to)
        return RecordOutcome(result, case, to)
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


async def _record_iteration(
    plan: Plan, folder: Path, options: BrowserSettings, shared: PlaywrightHost | None
) -> tuple[IterationResult, dict[str, str]]:
    from browser_adapters.dom_snapshots import DomSnapshots

    snapshots = DomSnapshots(folder, snapshot_file_name)
    token = secret_values.set(plan.secrets)
    try:
        async with _started(options, shared) as host:
            hooks = _chain(host.iteration_hooks(folder), snapshots)
            result = await ProgramRunner(host, hooks=hooks).run_iteration(plan)
    finally:
        secret_values.reset(token)
    return result, snapshots.saved


def _write_case(
    compiled: CompiledRecipe,
    plan: Plan,
    recipe_path: Path,
    base_url: str | None,
    result: IterationResult,
    snapshots: dict[str, str],
    folder: Path,
    to: Path,
) -> RegressionCase:
    """Scrub secrets from everything recorded, check nothing leaked, write the manifest."""
    specs = compiled.recipe.params
    secrets = {n: str(plan.param_values[n]) for n, p in specs.items() if p.secret}
    secrets = {name: value for name, value in secrets.items() if value}
    _scrub_file(folder / HAR_FILE, secrets, as_json=True)
    for name in snapshots.values():
        _scrub_file(folder / name, secrets, as_json=False)
    root = project_root(to.parent)
    case = RegressionCase(
        name=to.name,
        recipe=_relative(recipe_path, root),
        base_url=base_url,
        params=recorded_params(specs, plan.param_values, root),
        secret_params=tuple(sorted(secrets)),
        outputs=dict(result.outputs),
        definition_hash=plan.definition_hash,
        northstar_version=_version(),
        recorded_at=datetime.now(UTC).isoformat(timespec="seconds"),
        snapshots=dict(snapshots),
    )
    (folder / "case.json").write_text(case.to_json(), encoding="utf-8")
    leaked = leaked_secrets((p.read_text(errors="replace") for p in folder.iterdir()), secrets)
    if leaked:  # the last guard: a case with a secret in it is never left behind
        raise UsageInvalid(
            f"the recording still holds the value of secret parameter(s) {', '.join(leaked)}",
            fix="The site echoes the secret in a form Northstar cannot scrub; do not record it.",
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
