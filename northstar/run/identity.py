"""What a browser context of a run starts from: the run's identity on the site.

A reconcile probe judges whether a submission happened; it can only see what the
iteration saw if it starts from the same signed-in state. A probe in a fresh, signed-out
context lands on a login page and would "prove" every entry absent. So every context a
run opens (an iteration's, a ``signed_in`` check's, a reconcile probe's, the positive
control after a verified submission, the re-check before a resend) starts from
``RunIdentity``.

The state is a Playwright storage-state file: a profile given with ``--profile`` (the one
the journal recorded for the run wins, so a reconcile or resume not given ``--profile``
again still probes signed in), a saved sign-in given with ``--state``, or the one the
recipe's ``setup`` made for this run (``held``: a secret beside the journal, removed at the
run's end). ``RunIdentity`` is plain data; ``northstar.run.signin`` makes and checks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["RunIdentity", "run_identity"]


@dataclass(frozen=True)
class RunIdentity:
    """The storage-state file a context starts from (``None``: a clean context)."""

    storage_state: str | None = None
    # The state was made by this run's ``setup``: a secret the run removes when it ends.
    held: bool = False

    def signed_in_with(self, state_file: Path) -> RunIdentity:
        """The identity after ``setup`` saved a new signed-in state to ``state_file``."""
        return RunIdentity(str(state_file), held=True)


def run_identity(
    profile: str | None = None,
    state: str | None = None,
    *,
    recorded_profile: str | None = None,
) -> RunIdentity:
    """A run's starting identity: a saved sign-in (``--state``) wins, then the profile the
    journal recorded for the run (the binding check refuses another), then ``profile``."""
    chosen = state or recorded_profile or profile
    return RunIdentity(str(Path(chosen).resolve()) if chosen else None)
