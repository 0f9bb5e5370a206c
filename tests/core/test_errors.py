"""The error tree: stable codes, a fix for each, context that survives ``to_dict``."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import northstar
from northstar import errors
from northstar.errors import (
    NorthstarError,
    ParamInvalid,
    ProgramIterationNotVerified,
    RecipeInvalid,
    TargetMissing,
    error_class_for_code,
)

# The codes are an external contract (CLI output, the journal, the docs): pinned here.
STABLE_CODES = {
    "ActionFailed": "ACTION_FAILED",
    "BindingError": "BINDING_ERROR",
    "BrowserClosed": "BROWSER_CLOSED",
    "BrowserError": "BROWSER_ERROR",
    "BrowserNotFound": "BROWSER_NOT_FOUND",
    "BrowserUnreachable": "BROWSER_UNREACHABLE",
    "CredentialsInvalid": "CREDENTIALS_INVALID",
    "DefinitionChanged": "DEFINITION_CHANGED",
    "DisplayMissing": "DISPLAY_MISSING",
    "ConfigInvalid": "CONFIG_INVALID",
    "EventLoopRunning": "EVENT_LOOP_RUNNING",
    "ExpectationFailed": "EXPECTATION_FAILED",
    "FileChanged": "FILE_CHANGED",
    "FillNotApplied": "FILL_NOT_APPLIED",
    "FixOutdated": "FIX_OUTDATED",
    "IdempotencyConflict": "IDEMPOTENCY_CONFLICT",
    "InputError": "INPUT_INVALID",
    "JournalError": "JOURNAL_ERROR",
    "JournalUnavailable": "JOURNAL_UNAVAILABLE",
    "NavigationFailed": "NAVIGATION_FAILED",
    "NorthstarError": "NORTHSTAR_ERROR",
    "NotSent": "NOT_SENT",
    "OptionMissing": "OPTION_MISSING",
    "OriginBlocked": "ORIGIN_BLOCKED",
    "OutcomeError": "OUTCOME_ERROR",
    "OutcomeSettling": "OUTCOME_SETTLING",
    "ProbeBlind": "PROBE_BLIND",
    "ProbeInconclusive": "INCONCLUSIVE",
    "OutcomeUnknown": "OUTCOME_UNKNOWN",
    "OutputSaveFailed": "OUTPUT_SAVE_FAILED",
    "ParamInvalid": "PARAM_INVALID",
    "ParamMissing": "PARAM_MISSING",
    "ProfileMismatch": "PROFILE_MISMATCH",
    "ProgramIterationNotVerified": "PROGRAM_ITERATION_NOT_VERIFIED",
    "RecipeInvalid": "RECIPE_INVALID",
    "RepeatOptionsInvalid": "REPEAT_OPTIONS_INVALID",
    "RunBlocked": "RUN_BLOCKED",
    "RunNotFound": "RUN_NOT_FOUND",
    "SchemeBlocked": "SCHEME_BLOCKED",
    "SignInError": "SIGN_IN_ERROR",
    "SignInFailed": "SIGN_IN_FAILED",
    "SignedOut": "SIGNED_OUT",
    "SiteUnreachable": "SITE_UNREACHABLE",
    "StaleReference": "STALE_REFERENCE",
    "TabClosed": "TAB_CLOSED",
    "TargetAmbiguous": "TARGET_AMBIGUOUS",
    "TargetMissing": "TARGET_MISSING",
    "UsageInvalid": "USAGE_INVALID",
    "VerificationError": "VERIFICATION_ERROR",
}

# Codes the design names (DESIGN.md section 8): each must exist.
DESIGN_CODES = {
    "RECIPE_INVALID",
    "PARAM_MISSING",
    "PARAM_INVALID",
    "DEFINITION_CHANGED",
    "FILE_CHANGED",
    "PROFILE_MISMATCH",
    "ORIGIN_BLOCKED",
    "TAB_CLOSED",
    "TARGET_MISSING",
    "TARGET_AMBIGUOUS",
    "EXPECTATION_FAILED",
    "PROGRAM_ITERATION_NOT_VERIFIED",
    "OUTCOME_UNKNOWN",
    "RUN_BLOCKED",
    "IDEMPOTENCY_CONFLICT",
    "CREDENTIALS_INVALID",
    "BROWSER_NOT_FOUND",
    "OUTPUT_SAVE_FAILED",
}


def error_classes() -> list[type[NorthstarError]]:
    classes = [
        obj
        for name in errors.__all__
        if isinstance(obj := getattr(errors, name), type) and issubclass(obj, NorthstarError)
    ]
    return sorted(classes, key=lambda cls: cls.__name__)


def all_subclasses(cls: type[NorthstarError]) -> list[type[NorthstarError]]:
    found = [cls]
    for sub in cls.__subclasses__():
        found.extend(all_subclasses(sub))
    return found


def test_every_class_in_the_module_is_exported_and_pinned() -> None:
    assert {cls.__name__: cls.code for cls in error_classes()} == STABLE_CODES


def test_codes_are_unique_across_every_subclass_anywhere() -> None:
    for module in pkgutil.walk_packages(northstar.__path__, "northstar."):
        importlib.import_module(module.name)  # any module may define more errors
    codes = [cls.code for cls in all_subclasses(NorthstarError)]
    assert len(codes) == len(set(codes)), sorted(codes)


def test_codes_are_upper_snake_case() -> None:
    for cls in error_classes():
        assert cls.code.replace("_", "").isalpha()
        assert cls.code == cls.code.upper()


def test_the_design_codes_exist() -> None:
    assert set(STABLE_CODES.values()) >= DESIGN_CODES


@pytest.mark.parametrize("cls", error_classes(), ids=lambda cls: cls.__name__)
def test_every_error_has_a_one_line_default_fix(cls: type[NorthstarError]) -> None:
    assert cls.default_fix.strip()
    assert "\n" not in cls.default_fix
    assert cls("boom").fix == cls.default_fix


@pytest.mark.parametrize("cls", error_classes(), ids=lambda cls: cls.__name__)
def test_error_class_for_code_round_trips(cls: type[NorthstarError]) -> None:
    assert error_class_for_code(cls.code) is cls


def test_an_unknown_code_reads_back_as_the_base_class() -> None:
    assert error_class_for_code("NO_SUCH_CODE") is NorthstarError


@pytest.mark.parametrize("cls", error_classes(), ids=lambda cls: cls.__name__)
def test_str_contains_the_code_and_the_message(cls: type[NorthstarError]) -> None:
    text = str(cls("it broke"))
    assert text.startswith(cls.code + ": ")
    assert "it broke" in text


def test_str_names_the_file_position() -> None:
    error = RecipeInvalid("bad", file="r.yaml", line=3, column=7)
    assert str(error) == "RECIPE_INVALID: r.yaml:3:7: bad"
    assert str(RecipeInvalid("bad", file="r.yaml", line=3)) == "RECIPE_INVALID: r.yaml:3:1: bad"
    assert str(RecipeInvalid("bad", file="r.yaml")) == "RECIPE_INVALID: r.yaml: bad"


def test_str_names_the_step() -> None:
    assert str(TargetMissing("no button", step="save")) == "TARGET_MISSING: step 'save': no button"


def test_to_dict_keeps_code_message_fix_and_context() -> None:
    error = TargetMissing(
        "no button",
        fix="Look again.",
        run_id="r1",
        iteration=2,
        step="save",
        tab="admin",
        file="x.yaml",
        line=4,
        column=2,
        path="steps[1]",
    )
    assert error.to_dict() == {
        "code": "TARGET_MISSING",
        "message": "no button",
        "fix": "Look again.",
        "run_id": "r1",
        "iteration": 2,
        "step": "save",
        "tab": "admin",
        "file": "x.yaml",
        "line": 4,
        "column": 2,
        "path": "steps[1]",
    }


def test_none_context_is_dropped() -> None:
    error = ParamInvalid("bad", step=None, iteration=3)
    assert error.context == {"iteration": 3}
    assert "step" not in error.to_dict()


def test_with_context_adds_but_never_overwrites() -> None:
    error = TargetMissing("x", step="inner")
    assert error.with_context(step="outer", run_id="r", iteration=None) is error
    assert error.context == {"step": "inner", "run_id": "r"}


def test_default_fix_is_used_when_none_is_given() -> None:
    assert ParamInvalid("x", fix=None).fix == ParamInvalid.default_fix
    assert ParamInvalid("x", fix="Do this.").fix == "Do this."


def test_program_iteration_not_verified_carries_results() -> None:
    error = ProgramIterationNotVerified("stopped", result="r3", verified=("r1", "r2"), iteration=3)
    assert error.result == "r3"
    assert error.verified == ("r1", "r2")
    assert error.to_dict()["iteration"] == 3


def test_errors_are_exceptions_that_can_be_caught_by_family() -> None:
    with pytest.raises(errors.InputError):
        raise RecipeInvalid("x")
    with pytest.raises(errors.BrowserError):
        raise TargetMissing("x")
    assert issubclass(errors.RunNotFound, errors.JournalError)
