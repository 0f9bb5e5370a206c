"""What a browser context of this run starts from: its identity.

Every context a run opens (an iteration's, a ``signed_in`` check's, a reconcile probe's)
starts from the same storage state, so a probe sees what the iterations saw and a resume
starts where the run was signed in. The state is a Playwright storage-state file: a
profile given with ``--profile``, a saved sign-in given with ``--state``, or the one the
recipe's ``setup`` made for this run (``held``: a secret beside the journal, removed at
the run's end). ``RunIdentity`` is plain data; ``northstar.run.signin`` makes and checks it.
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


def run_identity(profile: str | None = None, state: str | None = None) -> RunIdentity:
    """A run's starting identity: a saved sign-in (``--state``) wins over a profile."""
    chosen = state or profile
    return RunIdentity(str(Path(chosen).resolve()) if chosen else None)
