"""``northstar import-codegen`` and ``northstar codegen`` (a stand-in recorder: no display)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from click.testing import CliRunner

from northstar.authoring.recorder import EXECUTABLE_ENV, recorder_command
from northstar.cli import cli

RECORDINGS = Path(__file__).parent / "recordings"
# A stand-in for `python -m playwright`: writes a recording to -o, and what it was given.
FAKE_PLAYWRIGHT = """
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
recording = Path(os.environ["FAKE_RECORDING"]).read_text()
Path(args[args.index("-o") + 1]).write_text(recording)
seen = {"argv": args, "executable": os.environ.get("PWTEST_CLI_EXECUTABLE_PATH")}
Path(os.environ["FAKE_SEEN"]).write_text(json.dumps(seen))
"""


def test_the_recorder_command_asks_for_python_async_on_the_discovered_chromium() -> None:
    command = recorder_command(
        "http://127.0.0.1:8000/form",
        Path("/tmp/out.py"),
        executable="/usr/bin/chromium",
        environ={"HOME": "/root"},
        python="/venv/bin/python",
    )
    assert command.argv == (
        "/venv/bin/python", "-m", "playwright", "codegen", "--target", "python-async",
        "--browser", "chromium", "-o", "/tmp/out.py", "http://127.0.0.1:8000/form",
    )  # fmt: skip
    assert command.env == {"HOME": "/root", EXECUTABLE_ENV: "/usr/bin/chromium"}
    own_build = recorder_command("u", Path("o"), executable=None, environ={})
    assert EXECUTABLE_ENV not in own_build.env  # Playwright finds its own build


def test_import_codegen_writes_a_recipe_that_validates(tmp_path: Path) -> None:
    to = tmp_path / "recipes" / "contact.yaml"
    script = RECORDINGS / "sign_in_and_contact.py"
    result = CliRunner().invoke(cli, ["import-codegen", str(script), "--to", str(to)])
    assert result.exit_code == 0, result.output
    assert "14 steps, 6 parameters (secret: password)" in result.output
    assert "kept as comments (no recipe equivalent): script lines 29" in result.output
    assert "--base-url http://127.0.0.1:8000 -p password=..." in result.output
    assert CliRunner().invoke(cli, ["validate", str(to)]).exit_code == 0
    again = CliRunner().invoke(cli, ["import-codegen", str(script), "--to", str(to)])
    assert again.exit_code == 2
    assert "already exists" in again.output


def test_a_submission_without_checks_is_written_but_reported_as_not_valid(tmp_path: Path) -> None:
    script = tmp_path / "rec.py"
    text = (RECORDINGS / "sign_in_and_contact.py").read_text()
    cut = text.index('    await expect(page).to_have_url("http://127.0.0.1:8000/form/thanks')
    script.write_text(text[:cut] + text[text.index("    # -----") :])
    to = tmp_path / "contact.yaml"
    result = CliRunner().invoke(cli, ["import-codegen", str(script), "--to", str(to)])
    assert result.exit_code == 2
    assert "not valid yet: submit step(s) click-send have no `expect`" in result.output
    assert "error[RECIPE_INVALID]" in result.output
    assert "# TODO: add `expect:`" in to.read_text()


def test_codegen_runs_the_recorder_and_converts_what_it_leaves(tmp_path: Path) -> None:
    fake = tmp_path / "fake" / "playwright"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")  # a regular package: it shadows the real one
    (fake / "__main__.py").write_text(FAKE_PLAYWRIGHT)
    browser = tmp_path / "chromium"
    browser.write_text("#!/bin/sh\n")
    browser.chmod(0o755)
    env = {
        "PYTHONPATH": os.pathsep.join([str(fake.parent), *sys.path]),
        "FAKE_RECORDING": str(RECORDINGS / "playground_and_popup.py"),
        "FAKE_SEEN": str(tmp_path / "seen.json"),
    }
    to = tmp_path / "play.yaml"
    url = "http://127.0.0.1:8000/codegen"
    args = ["codegen", url, "--to", str(to), "--browser", str(browser)]
    result = CliRunner(env=env).invoke(cli, args)
    assert result.exit_code == 0, result.output
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["executable"] == str(browser)
    assert seen["argv"][:4] == ["codegen", "--target", "python-async", "--browser"]
    assert seen["argv"][-1] == url
    recording = Path(seen["argv"][seen["argv"].index("-o") + 1])
    assert not recording.exists()  # the temporary script (typed values) is gone
    assert "opened_by: click-open-chooser" in to.read_text()


def test_codegen_says_so_when_the_recorder_leaves_nothing(tmp_path: Path) -> None:
    fake = tmp_path / "fake" / "playwright"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text("")
    browser = tmp_path / "chromium"
    browser.write_text("#!/bin/sh\n")
    browser.chmod(0o755)
    env = {"PYTHONPATH": os.pathsep.join([str(fake.parent), *sys.path])}
    args = ["codegen", "http://x/", "--to", str(tmp_path / "r.yaml"), "--browser", str(browser)]
    result = CliRunner(env=env).invoke(cli, args)
    assert result.exit_code == 2
    assert "without writing a script" in result.output
    assert not (tmp_path / "r.yaml").exists()
