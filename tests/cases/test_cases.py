"""Regression case manifests and secret markers, without a browser."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote_plus

import pytest

from northstar.cases.manifest import (
    CASE_FILE,
    RegressionCase,
    find_case_files,
    is_case_file,
    leaked_secrets,
    load_case,
    project_root,
    recorded_params,
    replay_params,
    restore_secrets,
    scrub_secrets,
    secret_env_var,
    signed_in_values,
    snapshot_file_name,
)
from northstar.cases.results import CaseReplay, describe_expected
from northstar.errors import ParamMissing, UsageInvalid
from northstar.recipe.loader import parse_recipe
from northstar.results import Evidence, IterationResult, IterationState, StepResult, StepStatus

SECRET = "p&ss w<rd>"
SECRETS = {"password": SECRET}

RECIPE = parse_recipe(
    """
name: demo
params:
  user: {type: string, default: demo}
  password: {type: string, secret: true, required: true}
  notes: {type: file}
tabs:
  site: {start: "{{ base_url }}/login"}
steps:
  - id: fill-password
    tab: site
    fill: {target: {label: Password}, value: "{{ password }}"}
  - id: send
    tab: site
    click: {target: {role: button, name: Sign in, exact: true}}
    expect:
      - url: "**/account"
""",
    source="<test>",
)


def a_case(**changes: object) -> RegressionCase:
    fields: dict[str, object] = {
        "name": "demo",
        "recipe": "recipes/demo.yaml",
        "base_url": "http://127.0.0.1:5000",
        "params": {"user": "demo", "password": "<secret:password>", "notes": "files/n.txt"},
        "secret_params": ("password",),
        "outputs": {"who": "demo"},
        "definition_hash": "a" * 64,
        "northstar_version": "0.1.0",
        "recorded_at": "2026-01-01T00:00:00+00:00",
        "snapshots": {"fill-password": "step-01-fill-password.html"},
    }
    fields.update(changes)
    return RegressionCase(**fields)  # type: ignore[arg-type]


# --- secret markers -------------------------------------------------------------------------


def test_scrub_replaces_every_encoding_of_a_secret_and_restore_puts_it_back() -> None:
    recorded = {
        "postData": {"text": f"user=demo&password={quote_plus(SECRET)}"},
        "html": f"<input value='{SECRET.replace('&', '&amp;').replace('<', '&lt;')}'>",
        "raw": [SECRET],
        "body": {"encoding": "base64", "text": base64.b64encode(SECRET.encode()).decode()},
    }
    scrubbed = scrub_secrets(recorded, SECRETS)
    text = json.dumps(scrubbed)
    assert (
        leaked_secrets([text, base64.b64decode(scrubbed["body"]["text"]).decode()], SECRETS) == []
    )
    assert "%3Csecret%3Apassword%3E" in scrubbed["postData"]["text"]
    # A partly escaped form (``>`` left as it is) is no encoding a replay can put back:
    # it becomes the plain marker, and the replay's page shows the plain value there.
    assert scrubbed["html"] == "<input value='<secret:password>'>"
    assert restore_secrets(scrubbed, SECRETS) == {**recorded, "html": f"<input value='{SECRET}'>"}


def test_leaked_secrets_names_what_is_left() -> None:
    assert leaked_secrets(["nothing here", f"oops {quote_plus(SECRET)}"], SECRETS) == ["password"]
    assert leaked_secrets(["x"], {"empty": ""}) == []


def test_binary_base64_content_is_left_alone() -> None:
    body = {"encoding": "base64", "text": base64.b64encode(b"\xff\xfe\x00").decode()}
    assert scrub_secrets(body, SECRETS) == body


# --- parameters -----------------------------------------------------------------------------


def test_recorded_params_keep_no_secret_and_files_relative_to_the_root(tmp_path: Path) -> None:
    values = {"user": "demo", "password": SECRET, "notes": str(tmp_path / "files" / "n.txt")}
    kept = recorded_params(RECIPE.params, values, tmp_path)
    assert kept == {"user": "demo", "password": "<secret:password>", "notes": "files/n.txt"}


def test_replay_params_take_secrets_from_the_environment_and_given_values_win(
    tmp_path: Path,
) -> None:
    environ = {secret_env_var("password"): SECRET}
    raw = replay_params(a_case(), RECIPE.params, tmp_path, {"user": "ada"}, environ)
    assert raw == {"user": "ada", "password": SECRET, "notes": str(tmp_path / "files/n.txt")}
    given = replay_params(a_case(), RECIPE.params, tmp_path, {"password": "other"}, {})
    assert given["password"] == "other"


def test_a_missing_secret_says_which_variable_to_set(tmp_path: Path) -> None:
    with pytest.raises(ParamMissing) as caught:
        replay_params(a_case(), RECIPE.params, tmp_path, {}, {})
    assert "NORTHSTAR_SECRET_PASSWORD" in caught.value.fix
    assert secret_env_var("api-key") == "NORTHSTAR_SECRET_API_KEY"


# --- the manifest ---------------------------------------------------------------------------


def test_a_case_round_trips_through_case_json(tmp_path: Path) -> None:
    folder = tmp_path / "cases" / "demo"
    folder.mkdir(parents=True)
    (folder / CASE_FILE).write_text(a_case().to_json())
    assert load_case(folder) == a_case()
    assert is_case_file(folder / CASE_FILE)
    assert find_case_files(tmp_path) == [folder / CASE_FILE]


def test_other_case_json_files_are_not_cases(tmp_path: Path) -> None:
    other = tmp_path / CASE_FILE
    other.write_text('{"kind": "something else"}')
    assert not is_case_file(other)
    with pytest.raises(UsageInvalid):
        load_case(other)
    other.write_text(a_case().to_json().replace('"format": 1', '"format": 9'))
    with pytest.raises(UsageInvalid, match="format"):
        load_case(other)


def test_the_project_root_is_the_nearest_folder_with_a_marker(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    deep = tmp_path / "fixtures" / "cases" / "x"
    deep.mkdir(parents=True)
    assert project_root(deep) == tmp_path.resolve()


def test_snapshot_names_count_from_one() -> None:
    assert snapshot_file_name(0, "open") == "step-01-open.html"
    assert snapshot_file_name(11, "send") == "step-12-send.html"


# --- explaining a replay --------------------------------------------------------------------


def failed_result(step_id: str, message: str) -> IterationResult:
    steps = (
        StepResult("fill-password", "site", "fill", StepStatus.PASSED),
        StepResult(
            step_id,
            "site",
            "click",
            StepStatus.FAILED,
            evidence=(Evidence("tab_opened", "site", "open page", True, "http://x/login"),),
            error={"code": "TARGET_MISSING", "message": message},
        ),
    )
    return IterationResult(
        1,
        IterationState.FAILED,
        steps,
        reason_code="TARGET_MISSING",
        reason=message,
        failing_step=step_id,
    )


def test_a_failed_replay_names_the_step_what_was_expected_and_found(tmp_path: Path) -> None:
    found = 'no element matches button "Sign in" (waited 400 ms for it to be visible)'
    replay = CaseReplay(a_case(), tmp_path, RECIPE, failed_result("send", found), "b" * 64)
    text = replay.explain()
    assert "TARGET_MISSING at step 'send'" in text
    assert 'expected: click button "Sign in"\n' in text
    assert "then url '**/account'" in text
    assert f"found:    {found}" in text
    assert "the recipe changed since the case was recorded" in text
    assert f"before this step: {tmp_path / 'step-01-fill-password.html'}" in text
    assert SECRET not in text


def test_a_verified_replay_with_other_outputs_fails(tmp_path: Path) -> None:
    result = IterationResult(1, IterationState.VERIFIED, outputs={"who": "ada"})
    replay = CaseReplay(a_case(), tmp_path, RECIPE, result, "a" * 64)
    assert not replay.passed
    assert replay.output_differences == [("who", "demo", "ada")]
    assert "output who: recorded 'demo', replayed 'ada'" in replay.explain()
    same = CaseReplay(a_case(), tmp_path, RECIPE, replace_outputs(result), "a" * 64)
    assert same.passed
    assert same.explain() == ""


def replace_outputs(result: IterationResult) -> IterationResult:
    return IterationResult(result.iteration, result.state, outputs={"who": "demo"})


def test_describe_expected_uses_the_recipes_words() -> None:
    fill = RECIPE.steps[0]
    assert describe_expected(fill) == ['fill label "Password"']


# --- cases recorded signed in ---------------------------------------------------------------


def test_a_states_cookie_and_storage_values_are_named_for_scrubbing_short_ones_left() -> None:
    state = {
        "cookies": [
            {"name": "session", "value": "s3cr3t-token-1"},
            {"name": "session", "value": "s3cr3t-token-2"},  # another domain, same name
            {"name": "theme", "value": "dark"},
        ],
        "origins": [{"origin": "x", "localStorage": [{"name": "jwt", "value": "eyJhbGciOi"}]}],
    }
    values = signed_in_values(state)
    assert sorted(values.values()) == ["eyJhbGciOi", "s3cr3t-token-1", "s3cr3t-token-2"]
    assert values["signed-in-storage-jwt"] == "eyJhbGciOi"
    scrubbed = scrub_secrets({"cookie": "session=s3cr3t-token-1; theme=dark"}, values)
    assert scrubbed == {"cookie": "session=<secret:signed-in-cookie-session>; theme=dark"}


def test_only_secrets_no_step_uses_are_setup_only() -> None:
    from northstar.plan.compiler import prepare
    from northstar.run.signin import setup_only_params

    recipe = parse_recipe(
        """
name: demo
params:
  password: {type: string, secret: true}
  token: {type: string, secret: true}
tabs:
  site: {start: "{{ base_url }}/x"}
setup:
  - {id: pw, tab: site, fill: {target: {label: Password}, value: "{{ password }}"}}
  - {id: tk, tab: site, fill: {target: {label: Token}, value: "{{ token }}"}}
steps:
  - {id: again, tab: site, fill: {target: {label: Token}, value: "{{ token }}"}}
""",
        source="<test>",
    )
    assert setup_only_params(prepare(recipe)) == {"password"}


def test_a_case_without_signed_in_reads_as_recorded_signed_out(tmp_path: Path) -> None:
    body = json.loads(a_case().to_json())
    del body["signed_in"]  # a case recorded before the field existed
    (tmp_path / CASE_FILE).write_text(json.dumps(body), encoding="utf-8")
    assert load_case(tmp_path).signed_in is None
    assert json.loads(a_case(signed_in="setup").to_json())["signed_in"] == "setup"
