"""The host's guards hold whichever front end asks: the recipe runner, a program, an agent
session over MCP and, where it has a way of its own in, a queued run served by a worker.

Each case is written once as a ``Flow`` and run through every front end (see
``tests/frontends/conftest.py``). What is checked is what reached the outside: the
fixture site's and the other origin's own counts of what they were sent, and every byte a
front end answered, printed or wrote (its folder, its journal, the run's report; for a
worker the Postgres journal's rows and the server's log).

- a ``file:`` or ``data:`` page is ``SCHEME_BLOCKED`` and nothing of it comes back;
- an upload from outside the allowed folder is ``PARAM_INVALID`` and the site gets no file;
- a middle-click (or, where there is no mouse button to choose, a ctrl+Enter) on a link
  to another origin opens a page that is closed before its first request;
- the same submission asked twice is dispatched once;
- a secret with ``& # % + \\ " '`` and regex metacharacters, in a failing ``url`` check,
  is found nowhere in any encoding.

A queued run is checked where the worker does something the CLI does not (it loads the
page and builds the journal itself): the scheme, the secret and the repeated submission.
"""

from __future__ import annotations

import base64
import io
import json
import re
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from fixtures.other_origin import OtherOrigin
from fixtures.site_server import FixtureSite
from tests.core.test_redaction import every_form
from tests.frontends.conftest import (
    RUN_ID,
    SECRET_SLOT,
    Act,
    Flow,
    FrontEnd,
    QueuedWorker,
    Said,
    northstar,
    post_flow,
)

pytestmark = pytest.mark.browser

MARKER = "guard-marker-6121"
# Every character the brief of a leak names, and regex metacharacters (``.`` ``*`` ``(``).
SECRET = "Sx&1#2%3+4\\5\"6'7.8*9(0"
EVERY = ("cli", "program", "mcp", "worker")
NO_WORKER = ("cli", "program", "mcp")


def front_ends(*names: str) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("front_end", names, indirect=True)


@pytest.fixture
def private(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside every front end's own: a page and a file no run may read."""
    folder = tmp_path_factory.mktemp("private")
    (folder / "page.html").write_text(f"<h1>{MARKER}</h1>")
    (folder / "other.txt").write_text(MARKER)
    return folder


# -- what a front end left behind ------------------------------------------------------


def _members(data: bytes) -> Iterator[bytes]:
    """A zip's members (a trace), each expanded; any other file as it is."""
    yield data
    if data[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for name in archive.namelist():
                yield archive.read(name)


def files_under(folder: Path) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            found[str(path)] = b"\n".join(_members(path.read_bytes()))
    return found


def postgres_rows(url: str) -> bytes:
    """Every row of every table of the worker's journal, as JSON text."""
    import psycopg

    rows: list[str] = []
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
        ).fetchall()
        for schema, table in tables:
            query = f'SELECT row_to_json(t)::text FROM "{schema}"."{table}" t'
            rows += [row[0] for row in conn.execute(query)]  # type: ignore[arg-type]
    return "\n".join(rows).encode()


async def written(front_end: FrontEnd, said: Said, postgres: Any = None) -> dict[str, bytes]:
    """Every answer and line, every file in the front end's folder, the run as ``show``
    and ``report`` give it, and (a worker) its Postgres journal and the server's log."""
    texts = {"answers and output": said.text.encode()}
    journal: str | Path = front_end.folder / "journal.db"
    if isinstance(front_end, QueuedWorker):
        journal = front_end.journal
    found = RUN_ID.search(said.text)
    if found is not None:
        folder = front_end.folder
        shown = await northstar("show", found[1], "--json", cwd=folder, journal=journal)
        texts["show"] = (shown.stdout + shown.stderr).encode()
        report = folder / "guard-report.html"
        made = await northstar(
            "report", found[1], "--out", str(report), cwd=folder, journal=journal
        )
        texts["report"] = (made.stdout + made.stderr).encode()
    texts |= files_under(front_end.folder)
    if isinstance(front_end, QueuedWorker):
        texts["postgres rows"] = postgres_rows(front_end.journal)
        texts["postgres log"] = (Path(postgres.folder) / "log").read_bytes()
    return texts


def found_in(texts: dict[str, bytes], forms: dict[str, bytes]) -> dict[str, list[str]]:
    """Where each form turned up: ``{}`` when nothing leaked."""
    leaks = {
        where: [name for name, form in forms.items() if form in data]
        for where, data in texts.items()
    }
    return {where: names for where, names in leaks.items() if names}


def base64_forms(secret: bytes) -> dict[str, bytes]:
    """The secret base64-encoded alone or inside a longer text at any of the three byte
    offsets: the characters that encode only the secret's own bytes."""
    forms: dict[str, bytes] = {}
    for shift in range(3):
        for name, encode in (("base64", base64.b64encode), ("urlsafe", base64.urlsafe_b64encode)):
            encoded = encode(b"\0" * shift + secret)
            forms[f"{name}+{shift}"] = encoded[4 if shift else 0 : -4]
    return forms


def secret_forms(secret: str) -> dict[str, bytes]:
    """Raw, URL-, JSON-, HTML-encoded, repr'd; ``re.escape``d as it is or after a quote
    (a ``url`` check's glob becomes a regex of the URL); base64."""
    forms = {name: form.encode() for name, form in every_form(secret).items()}
    for name, text in (("", secret), (" of quote", quote(secret, safe=""))):
        escaped = re.escape(text)
        forms[f"re.escape{name}"] = escaped.encode()
        forms[f"repr(re.escape{name})"] = repr(escaped)[1:-1].encode()
        forms[f"json(re.escape{name})"] = json.dumps(escaped)[1:-1].encode()
    return forms | base64_forms(secret.encode())


# -- the cases ---------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["file", "data"])
@front_ends(*NO_WORKER)
async def test_a_local_page_is_refused_and_nothing_of_it_comes_back(
    front_end: FrontEnd, site: FixtureSite, private: Path, scheme: str
) -> None:
    # base64: the marker shows as itself only if the page was read (the URL is in the recipe)
    page = base64.b64encode(f"<h1>{MARKER}</h1>".encode()).decode()
    url = {"file": (private / "page.html").as_uri(), "data": f"data:text/html;base64,{page}"}
    said = await front_end.run_flow(Flow("/form", (Act("goto", value=url[scheme]),)))
    assert found_in(await written(front_end, said), {"marker": MARKER.encode()}) == {}
    assert "SCHEME_BLOCKED" in said.text, said.text


@front_ends("worker")
async def test_a_queued_run_sent_to_a_local_file_reads_nothing_of_it(
    front_end: FrontEnd, site: FixtureSite, private: Path, postgres: Any
) -> None:
    flow = Flow("/form", (Act("goto", value=(private / "page.html").as_uri()),))
    said = await front_end.run_flow(flow)
    assert "SCHEME_BLOCKED" in said.text or said.status == "failed", said.text
    texts = await written(front_end, said, postgres)
    assert "SCHEME_BLOCKED" in texts["show"].decode(), texts["show"]
    assert found_in(texts, {"marker": MARKER.encode()}) == {}


def upload_flow(path: str) -> Flow:
    """The contact form, a file attached from ``path``, and sent."""
    send = Act(
        "click",
        target={"role": "button", "name": "Send"},
        submit=True,
        expect=({"title": {"contains": "Thank"}},),
    )
    return Flow(
        "/form",
        (
            Act("fill", target={"label": "Name"}, value="Ada"),
            Act("check", target={"role": "checkbox", "name": "Agree to terms"}),
            Act("upload", target={"label": "Attachment"}, value=path),
            send,
        ),
    )


@pytest.mark.parametrize("way", ["absolute", "dot-dot"])
@front_ends(*NO_WORKER)
async def test_an_upload_from_outside_the_allowed_folder_is_refused(
    front_end: FrontEnd, site: FixtureSite, private: Path, way: str
) -> None:
    """The allowed folder is the front end's own (the recipe's, the program's, the one
    given to ``northstar mcp --files``); ``private`` lies beside it."""
    path = {
        "absolute": str(private / "other.txt"),
        "dot-dot": str(Path("..") / private.name / "other.txt"),
    }[way]
    if way == "dot-dot":  # the folders are siblings only under the same temporary root
        assert (front_end.folder.parent / private.name).resolve() == private.resolve()
    said = await front_end.run_flow(upload_flow(path))
    assert "PARAM_INVALID" in said.text, said.text
    sent = [s.get("attachment_filename") for s in site.submissions()]
    assert "other.txt" not in sent, sent
    assert found_in(await written(front_end, said), {"marker": MARKER.encode()}) == {}


def middle_click(front_end: FrontEnd) -> Act:
    """A link opened in a new tab the way the front end can ask for it: a recipe's
    ``button: middle``; the SDK and an agent (no button to choose) press ctrl+Enter on it."""
    link = {"role": "link", "name": "Go there directly"}
    if front_end.name in ("cli", "worker"):
        return Act("click", target=link, options={"button": "middle"})
    return Act("press", target=link, value="Control+Enter")


@front_ends(*NO_WORKER)
async def test_a_link_opened_in_a_new_tab_sends_nothing_to_another_origin(
    front_end: FrontEnd, site: FixtureSite, other: OtherOrigin
) -> None:
    landing = f"{other.base_url}/landing"
    start = f"/leave?to={quote(landing, safe='')}"
    said = await front_end.run_flow(Flow(start, (middle_click(front_end),)))
    assert other.requests() == [], said.text
    assert landing in said.text, said.text  # a page was opened, and refused by name


def posts(site: FixtureSite) -> Counter[str]:
    return Counter(s["title"] for s in site.submissions() if s["kind"] == "post")


@front_ends(*EVERY)
async def test_the_same_submission_asked_twice_is_dispatched_once(
    front_end: FrontEnd, site: FixtureSite
) -> None:
    """The fixture site counts what it really received; the host's one dispatch routine
    and the journal's one verdict keep the second ask from the browser."""
    title = f"Once through {front_end.name}"
    said = await front_end.submit_twice(post_flow(title))
    assert posts(site) == Counter({title: 1}), said.text
    assert said.status in ("verified", "stopped"), said.text  # settled, nothing left unknown
    assert "Traceback" not in said.text


def secret_flow() -> Flow:
    """The secret typed into a password field (how an agent's session learns it is one),
    then a ``url`` check with the secret in it that cannot hold."""
    return Flow(
        "/login/echo",
        (
            Act("fill", target={"label": "Password"}, value=SECRET_SLOT),
            Act("verify", value=f"**/form?q={SECRET_SLOT}"),
        ),
        secret=SECRET,
    )


@front_ends(*EVERY)
async def test_a_secret_in_a_failing_url_check_is_found_nowhere_in_any_encoding(
    front_end: FrontEnd, site: FixtureSite, request: pytest.FixtureRequest
) -> None:
    said = await front_end.run_flow(secret_flow())
    postgres = request.getfixturevalue("postgres") if front_end.name == "worker" else None
    texts = await written(front_end, said, postgres)
    assert found_in(texts, secret_forms(SECRET)) == {}
    failed = ("EXPECTATION_FAILED", '"held": false', "did not hold")
    assert any(word in said.text for word in failed), said.text  # the check ran, and failed
