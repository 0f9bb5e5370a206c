"""Save a note in the members area, which is behind a sign-in: the program signs in once.

The declaration's ``setup`` signs in once per run, before the first iteration, and its
``signed_in`` check proves the state still holds before each later one; every iteration
starts from that signed-in state in a fresh browser context. The code below only saves
the note: it never sees the sign-in form.

Run it:
    export NORTHSTAR_SECRET_PASSWORD='demo-password'
    northstar run examples/programs/members_notes.py --base-url URL --repeat 3
"""

from __future__ import annotations

from northstar.sdk import Session

PROGRAM = {
    "name": "members-notes",
    "version": 1,
    "description": "Save one note per iteration in the login-walled members area.",
    "params": {
        "prefix": {"type": "string", "default": "Program note"},
        "username": {"type": "string", "default": "demo"},
        "password": {"type": "string", "secret": True, "required": True},
    },
    "tabs": {"notes": {"start": "{{ base_url }}/members/notes/new"}},
    "setup": [
        {
            "id": "username",
            "tab": "notes",
            "fill": {"target": {"label": "Username"}, "value": "{{ username }}"},
        },
        {
            "id": "password",
            "tab": "notes",
            "fill": {"target": {"label": "Password"}, "value": "{{ password }}"},
        },
        {
            "id": "sign-in",
            "tab": "notes",
            "click": {"target": {"role": "button", "name": "Sign in"}},
            "expect": [{"visible": {"role": "heading", "name": "New note"}}],
        },
    ],
    "signed_in": [{"tab": "notes", "visible": {"role": "button", "name": "Log out"}}],
    "outputs": ["title"],
    "done_when": [{"tab": "notes", "url": "**/members/notes?q=*"}],
}


async def main(nx: Session) -> None:
    notes = nx.tab("notes")  # opened signed in, at the new-note form
    title = f"{nx.params['prefix']} {nx.iteration}"
    await notes.fill({"label": "Title"}, title)
    await notes.click(
        {"role": "button", "name": "Save note"},
        submit=True,
        expect=[{"visible": {"text": f"Note {title} was saved"}}],
        reconcile=[
            {"goto": f"/members/notes?q={title}"},
            {"check": {"visible": {"text": title, "exact": True}}},
        ],
    )
    # Verified by the listing, which also holds when a resume answers the save from the
    # record instead of sending it again.
    await notes.goto(f"/members/notes?q={title}")
    await notes.verify({"visible": {"text": title, "exact": True}})
    await nx.output("title", title)
    await nx.complete({"title": title})
