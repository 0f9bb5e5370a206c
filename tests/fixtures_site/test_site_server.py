"""The fixture site, checked over plain HTTP (urllib), without a browser.

Browser behaviour of these pages is exercised by the adapter's tests; here we pin the server's
contract: where it listens, what it counts, how faults and reset behave, and that it lets go of
its port.
"""

from __future__ import annotations

import hashlib
import http.cookiejar
import json
import re
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest

from fixtures.site_server import FixtureSite

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def site() -> Iterator[FixtureSite]:
    with FixtureSite() as running:
        yield running


def fetch(url: str, data: bytes | None = None, headers: dict[str, str] | None = None):
    """Return (status, final URL, text), following redirects like a browser."""
    request = urllib.request.Request(url, data=data, headers=headers or {})
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, response.url, response.read().decode("utf-8")


def post_form(url: str, fields: dict[str, str]):
    return fetch(url, urlencode(fields).encode())


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]):
    """Encode a multipart/form-data body the way a browser does."""
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
        + value.encode()
        + b"\r\n"
        for name, value in fields.items()
    ]
    parts += [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n".encode()
        + content
        + b"\r\n"
        for name, (filename, content) in files.items()
    ]
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    return body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}


def api_submissions(site: FixtureSite) -> dict:
    return json.loads(fetch(f"{site.base_url}/api/submissions")[2])


def test_listens_on_an_ephemeral_loopback_port(site: FixtureSite) -> None:
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", site.base_url)
    assert not site.base_url.endswith(":0")


def test_index_links_every_page_and_each_has_title_and_heading(site: FixtureSite) -> None:
    _, _, index = fetch(f"{site.base_url}/")
    links = re.findall(r'<a href="([^"]+)">', index)
    expected = {"/form", "/login", "/account", "/items?page=1", "/popup/opener", "/frame"}
    expected |= {"/delayed?ms=1500", "/posts/new", "/posts", "/menu", "/big?n=1000", "/media"}
    assert expected | {"/external"} <= set(links)
    for link in (
        link for link in links if not link.startswith("/slow")
    ):  # /slow is slow on purpose.
        _, _, page = fetch(site.base_url + link)
        assert "<title>" in page
        assert "<h1>" in page


def test_publishing_a_post_is_counted_once_and_readable_over_http(site: FixtureSite) -> None:
    status, url, page = post_form(f"{site.base_url}/posts", {"title": "Hello world"})

    assert (status, url) == (200, f"{site.base_url}/posts?created=Hello%20world")
    assert '<p role="status">Post published: Hello world</p>' in page
    assert site.submission_count("post") == 1
    assert site.submissions() == [{"id": "1", "kind": "post", "title": "Hello world"}]
    assert api_submissions(site) == {
        "count": 1,
        "by_kind": {"post": 1},
        "items": [{"id": "1", "kind": "post", "title": "Hello world"}],
    }


def test_posts_can_be_searched_and_shown(site: FixtureSite) -> None:
    post_form(f"{site.base_url}/posts", {"title": "Alpha"})
    post_form(f"{site.base_url}/posts", {"title": "Beta"})

    _, _, results = fetch(f"{site.base_url}/posts?q=alp")
    _, _, post = fetch(f"{site.base_url}/posts/2")

    assert '<a href="/posts/1">Alpha</a>' in results
    assert "Beta" not in results
    assert "Post published" not in results
    assert "<h1>Beta</h1>" in post


def test_contact_form_without_a_name_is_refused_and_not_counted(site: FixtureSite) -> None:
    body, headers = multipart({"name": " ", "message": "hi", "topic": "sales"}, {})

    status, url, page = fetch(f"{site.base_url}/form", body, headers)

    assert (status, url) == (200, f"{site.base_url}/form")
    assert '<p role="alert">Name is required</p>' in page
    assert site.submission_count() == 0


def test_contact_form_records_fields_and_attachment(site: FixtureSite) -> None:
    content = b"line one\r\nline two\x00\xff"
    fields = {"name": "Zoë", "email": "zoe@example.test", "topic": "sales", "subscribe": "yes"}
    body, headers = multipart(fields, {"attachment": ("notes.bin", content)})

    _, url, page = fetch(f"{site.base_url}/form", body, headers)

    assert url == f"{site.base_url}/form/thanks?id=1"
    assert "Message #1 received from Zoë" in page
    assert "<dt>Topic</dt><dd>Sales</dd>" in page
    assert "<dt>Attachment</dt><dd>notes.bin</dd>" in page
    [contact] = site.submissions()
    assert contact["subscribe"] == "yes"
    assert contact["agree"] == "no"
    assert contact["attachment_size"] == str(len(content))
    assert contact["attachment_sha256"] == hashlib.sha256(content).hexdigest()


def test_popup_choice_is_counted_as_popup(site: FixtureSite) -> None:
    _, _, answer = post_form(f"{site.base_url}/popup/choice", {"colour": "green"})

    assert json.loads(answer) == {"id": 1, "colour": "green"}
    assert site.submission_count("popup") == 1


def test_status_fault_answers_once_then_the_site_recovers(site: FixtureSite) -> None:
    site.set_fault("/posts", status=500)

    with pytest.raises(urllib.error.HTTPError) as failure:
        post_form(f"{site.base_url}/posts", {"title": "First"})
    post_form(f"{site.base_url}/posts", {"title": "Second"})

    assert failure.value.code == 500
    assert "Server error" in failure.value.read().decode()
    assert [s["title"] for s in site.submissions()] == ["Second"]


def test_delay_fault_records_the_submission_before_answering(site: FixtureSite) -> None:
    fault = {"path": "/posts", "delay_s": 2}
    fetch(f"{site.base_url}/api/fault", json.dumps(fault).encode())
    request = urllib.request.Request(
        f"{site.base_url}/posts", urlencode({"title": "Late"}).encode()
    )

    with pytest.raises((TimeoutError, urllib.error.URLError)):
        urllib.request.urlopen(request, timeout=0.3)

    assert site.submission_count("post") == 1  # The client gave up, the effect happened.


def post_in_background(url: str, title: str) -> tuple[threading.Thread, list[object]]:
    """POST a title from another thread; the list gets its (status, text) or its HTTPError."""
    answers: list[object] = []

    def send() -> None:
        try:
            answers.append(post_form(url, {"title": title})[::2])
        except urllib.error.HTTPError as exc:
            answers.append(exc.code)

    thread = threading.Thread(target=send)
    thread.start()
    return thread, answers


def test_a_held_save_happens_only_when_the_test_releases_it(site: FixtureSite) -> None:
    site.hold("/posts")  # once: the redirect that follows the save is not held
    first, first_answer = post_in_background(f"{site.base_url}/posts", "Later")
    site.wait_held(1)
    assert site.submission_count("post") == 0  # parked before the route: no effect yet

    assert site.release_held(save=True) == 1
    assert [s["title"] for s in site.submissions()] == ["Later"]  # recorded on release
    first.join(5)

    site.hold("/posts")
    second, second_answer = post_in_background(f"{site.base_url}/posts", "Never")
    site.wait_held(1)
    assert site.release_held(save=False) == 1
    second.join(5)
    post_form(f"{site.base_url}/posts", {"title": "Unheld"})  # the hold is used up

    assert first_answer[0][0] == 200  # type: ignore[index]
    assert second_answer == [503]
    assert [s["title"] for s in site.submissions()] == ["Later", "Unheld"]


def test_reset_drops_held_requests_without_their_effect(site: FixtureSite) -> None:
    site.hold("/posts")
    thread, answers = post_in_background(f"{site.base_url}/posts", "Dropped")
    site.wait_held(1)
    site.reset()
    thread.join(5)
    assert answers == [503]
    assert site.submission_count() == 0
    with pytest.raises(AssertionError, match="did not arrive"):
        site.wait_held(1, timeout_s=0.05)


def test_bad_fault_settings_are_refused(site: FixtureSite) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        fetch(f"{site.base_url}/api/fault", json.dumps({"path": "posts", "status": 500}).encode())
    with pytest.raises(ValueError, match="delay_s"):
        site.set_fault("/posts", delay_s=31)
    with pytest.raises(ValueError, match="never faulted"):
        site.set_fault("/api/submissions", status=500)

    assert refused.value.code == 400


def test_login_guards_the_account_page(site: FixtureSite) -> None:
    browser = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    login = f"{site.base_url}/login"

    guarded = browser.open(f"{site.base_url}/account").url
    refused = browser.open(login, urlencode({"username": "demo", "password": "x"}).encode())
    signed_in = browser.open(
        login, urlencode({"username": "demo", "password": "demo-password"}).encode()
    )
    signed_out = browser.open(f"{site.base_url}/logout", b"").url

    assert guarded == f"{site.base_url}/login?next=/account"
    assert '<p role="alert">Invalid username or password</p>' in refused.read().decode()
    assert signed_in.url == f"{site.base_url}/account"
    assert "Signed in as demo" in signed_in.read().decode()
    assert signed_out == login
    assert browser.open(f"{site.base_url}/account").url.startswith(login)


def test_items_are_paginated(site: FixtureSite) -> None:
    _, _, first = fetch(f"{site.base_url}/items?page=1")
    _, _, last = fetch(f"{site.base_url}/items?page=10")

    assert "<td>Item 1</td>" in first
    assert '<a href="/items?page=2">Next</a>' in first
    assert ">Previous</a>" not in first
    assert "Page 10 of 10" in last
    assert "<td>Item 50</td>" in last
    assert ">Next</a>" not in last
    with pytest.raises(urllib.error.HTTPError, match="404"):
        fetch(f"{site.base_url}/items?page=11")


def test_reset_clears_submissions_sessions_and_faults(site: FixtureSite) -> None:
    browser = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    credentials = urlencode({"username": "demo", "password": "demo-password"}).encode()
    browser.open(f"{site.base_url}/login", credentials)
    post_form(f"{site.base_url}/posts", {"title": "Before reset"})
    site.set_fault("/posts", status=503)

    fetch(f"{site.base_url}/api/reset", b"")
    post_form(f"{site.base_url}/posts", {"title": "After reset"})

    assert api_submissions(site)["items"] == [{"id": "1", "kind": "post", "title": "After reset"}]
    assert browser.open(f"{site.base_url}/account").url.startswith(f"{site.base_url}/login")
    site.reset()
    assert site.submission_count() == 0
    assert site.submissions() == []


def test_stop_frees_the_port() -> None:
    site = FixtureSite().start()
    port = int(site.base_url.rsplit(":", 1)[1])

    site.stop()

    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass
    with FixtureSite(port=port) as again:
        assert again.base_url == f"http://127.0.0.1:{port}"


def test_module_main_prints_the_base_url_first() -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "fixtures.site_server", "--port", "0"],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = server.stdout.readline().strip()
        status, _, _ = fetch(f"{base_url}/")
    finally:
        server.terminate()
        server.wait(timeout=5)

    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", base_url)
    assert status == 200
    assert server.returncode == 0


def test_the_site_in_its_own_process_counts_like_the_in_process_one() -> None:
    """``SiteProcess`` (the benchmark's site) serves the same site and stops with its block."""
    from fixtures.site_process import SiteProcess

    with SiteProcess() as running:
        base_url = running.base_url
        assert base_url.startswith("http://127.0.0.1:")
        post_form(f"{base_url}/posts", {"title": "From another process"})
        assert (running.submission_count(), running.submission_count("post")) == (1, 1)
        assert running.submission_count("contact") == 0
    with pytest.raises(urllib.error.URLError):
        fetch(f"{base_url}/api/submissions")  # the process and its port are gone


def test_the_site_in_its_own_process_counts_logins_and_forgets_on_reset() -> None:
    from fixtures._site_routes import DEMO_PASSWORD
    from fixtures.site_process import SiteProcess

    with SiteProcess() as running:
        post_form(f"{running.base_url}/login", {"username": "demo", "password": DEMO_PASSWORD})
        post_form(f"{running.base_url}/posts", {"title": "Before the reset"})
        assert (running.login_count(), running.submission_count()) == (1, 1)

        running.reset()

        assert (running.login_count(), running.submission_count()) == (0, 0)
