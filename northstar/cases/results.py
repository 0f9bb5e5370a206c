"""What a replayed regression case found, and how a failure is explained to a person.

A replay passes when its iteration verified and it produced the outputs the recording
did. Otherwise ``explain`` names the failing step, what the recipe expected there (from
the recipe's own text, so no secret value can appear), what was found, and where to
look: the page as it was at recording around that step, and this replay's artifacts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from northstar.cases.manifest import RegressionCase
from northstar.recipe.model import Check, Recipe, Step, Target
from northstar.results import IterationResult, StepResult, StepStatus

__all__ = ["CaseReplay", "describe_expected", "explain_failure"]


@dataclass(frozen=True)
class CaseReplay:
    """One replay of a case: the iteration's result and what to compare it with."""

    case: RegressionCase
    case_dir: Path
    recipe: Recipe
    result: IterationResult
    definition_hash: str
    artifacts: Path | None = None

    @property
    def output_differences(self) -> list[tuple[str, str | None, str | None]]:
        """``(name, recorded, replayed)`` for every output that differs."""
        found = dict(self.result.outputs)
        names = sorted(set(self.case.outputs) | set(found))
        return [
            (name, self.case.outputs.get(name), found.get(name))
            for name in names
            if self.case.outputs.get(name) != found.get(name)
        ]

    @property
    def passed(self) -> bool:
        return self.result.verified and not self.output_differences

    @property
    def definition_changed(self) -> bool:
        return self.definition_hash != self.case.definition_hash

    def explain(self) -> str:
        """The failure in a few lines (empty when the replay passed)."""
        if self.passed:
            return ""
        if self.result.verified:
            lines = [f"replay of case {self.case.name!r} verified, but its outputs differ:"]
            lines += [
                f"  output {name}: recorded {old!r}, replayed {new!r}"
                for name, old, new in self.output_differences
            ]
        else:
            lines = self._failed_step_lines()
        if self.definition_changed:
            lines.append(
                f"  the recipe changed since the case was recorded (definition "
                f"{self.case.definition_hash[:12]} -> {self.definition_hash[:12]})"
            )
        return "\n".join(lines + self._artifact_lines())

    def _failed_step_lines(self) -> list[str]:
        headline = f"replay of case {self.case.name!r} failed"
        return explain_failure(self.recipe, self.result, headline)

    def _artifact_lines(self) -> list[str]:
        lines = []
        before, after = self._snapshots_around(self.result.failing_step)
        if before:
            lines.append(f"  page at recording, before this step: {before}")
        if after:
            lines.append(f"  page at recording, after this step:  {after}")
        if self.artifacts is not None and self.artifacts.is_dir():
            files = sorted(p.name for p in self.artifacts.iterdir())
            if files:
                lines.append(f"  artifacts of this replay: {self.artifacts}/ ({', '.join(files)})")
        return lines

    def _snapshots_around(self, step_id: str | None) -> tuple[Path | None, Path | None]:
        ids = [step.id for step in self.recipe.steps]
        if step_id not in ids:
            return None, None
        index = ids.index(step_id)
        earlier = [self.case.snapshots.get(i) for i in ids[:index] if i in self.case.snapshots]
        before = earlier[-1] if earlier else None
        after = self.case.snapshots.get(step_id)
        return (
            self.case_dir / before if before else None,
            self.case_dir / after if after else None,
        )


def explain_failure(recipe: Recipe, result: IterationResult, headline: str) -> list[str]:
    """The failing step, what the recipe expected there, what was found, what was checked."""
    step_id = result.failing_step or "?"
    lines = [f"{headline}: {result.reason_code} at step {step_id!r}"]
    failed = _failed_step(result)
    step = _recipe_step(recipe, step_id)
    tab = f" (tab {failed.tab})" if failed is not None and failed.tab else ""
    lines.append(f"  step {step_id!r}{tab}")
    expected = describe_expected(step) if step is not None else ["done_when and outputs"]
    lines.append(f"    expected: {expected[0]}")
    lines.extend(f"              {more}" for more in expected[1:])
    lines.append(f"    found:    {result.reason or '(no message)'}")
    for evidence in failed.evidence if failed is not None else ():
        mark = "ok" if evidence.passed else "not"
        lines.append(f"    checked:  {evidence.expected} [{mark}] {evidence.found}".rstrip())
    return lines


def _failed_step(result: IterationResult) -> StepResult | None:
    return next((s for s in reversed(result.steps) if s.status is StepStatus.FAILED), None)


def _recipe_step(recipe: Recipe, step_id: str) -> Step | None:
    return next((step for step in recipe.steps if step.id == step_id), None)


def describe_expected(step: Step) -> list[str]:
    """What a step looks for and expects, in the recipe's words (templates unrendered)."""
    body = getattr(step, step.kind)
    if isinstance(body, Check):
        first = body.describe()
    elif isinstance(body, str):
        first = f"{step.kind} {body}"
    elif isinstance(getattr(body, "target", None), Target):
        first = f"{step.kind} {body.target.describe()}"
    else:
        first = step.kind
    return [first, *(f"then {check.describe()}" for check in step.expect)]
