"""What a browser context of a run starts from: the run's identity on the site.

A reconcile probe judges whether a submission happened; it can only see what the
iteration saw if it starts from the same signed-in state. A probe in a fresh, signed-out
context lands on a login page and would "prove" every entry absent. So every context a
run opens besides its iterations' own (a reconcile probe, the positive control after a
verified submission, the re-check before a resend) is opened from ``RunIdentity``.

Today the identity is the storage state (``--profile``) the run was started with, taken
from the journal's record of the run, so a reconcile or resume that is not given
``--profile`` again still probes signed in. A run-level sign-in adds its saved state
here: ``storage_state`` is the one path a context starts from, whatever produced it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RunIdentity", "run_identity"]


@dataclass(frozen=True)
class RunIdentity:
    """The state a browser context of this run starts from (``None``: a fresh one)."""

    profile: str | None = None
    """The storage-state file the run was started with (``--profile``), as recorded."""

    @property
    def storage_state(self) -> str | None:
        """The storage-state file a context of this run is created with."""
        return self.profile


def run_identity(recorded_profile: str | None, given_profile: str | None = None) -> RunIdentity:
    """The run's identity from its journal record, or from its request before it is recorded.

    The recorded profile wins: the binding check refuses a request with another one, and a
    probe must see what the run's iterations saw.
    """
    return RunIdentity(profile=recorded_profile or given_profile or None)
