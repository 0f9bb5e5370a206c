"""``northstar review``: a person's look at the fixes agents proposed, and the one way in.

Listing and showing read the journal through ``northstar.readers``. ``--apply ID`` prints
the diff, then writes the proposed recipe only while the file still has the content the
diff was made against (``northstar.run.fixes``), and says the new definition hash.
Nothing else in Northstar writes a proposal to a recipe file.
"""

from __future__ import annotations

import json

import click

from northstar.cli._options import journal_option
from northstar.cli._output import expected_errors
from northstar.journal.paths import resolve_journal
from northstar.readers.diagnoses import get_proposal, list_proposals, render_proposals

__all__ = ["review"]


@click.command()
@journal_option
@click.option("--show", "show_id", type=int, default=None, help="Print proposal ID's diff.")
@click.option(
    "--apply", "apply_id", type=int, default=None, help="Print proposal ID, then apply it."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (listing and --show).")
def review(journal: str | None, show_id: int | None, apply_id: int | None, as_json: bool) -> None:
    """List the recipe fixes agents proposed; show one, or apply it to its recipe file."""
    path = resolve_journal(journal)
    with expected_errors():
        if apply_id is not None:
            _apply(path, apply_id)
        elif show_id is not None:
            proposal = get_proposal(path, show_id)
            if as_json:
                click.echo(json.dumps(proposal.to_dict(), indent=2))
            else:
                click.echo(proposal.diff, nl=False)  # the diff ends with its own newline
        else:
            found = list_proposals(path)
            text = json.dumps([p.to_dict() for p in found], indent=2)
            click.echo(text if as_json else render_proposals(found))


def _apply(path: object, proposal_id: int) -> None:
    from northstar.journal import Journal  # the writer, only for the one command that writes
    from northstar.run.fixes import apply_fix

    click.echo(get_proposal(str(path), proposal_id).diff, nl=False)
    with Journal.open(str(path)) as journal:
        applied = apply_fix(journal, proposal_id)
    click.echo(
        f"applied fix {applied.proposal_id} to {applied.recipe_path}; "
        f"new definition hash {applied.definition_hash} (start a new run with it)"
    )
