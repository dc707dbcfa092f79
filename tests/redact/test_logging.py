"""Everything verigate logs is redacted before a handler sees it: message, arguments, exception and stack text."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from redact.embeddings import TOKENS
from verigate import Candidate, Gate, Termination, Verdict, hookimpl
from verigate import _logging as vlogging
from verigate._logging import WITHHELD, RedactingFilter, get_logger
from verigate.gate import finalize_and_return
from verigate.testing import ScriptedJudge


def _token() -> str:
    return TOKENS["github-classic-token"]()


@pytest.fixture
def logger(request: pytest.FixtureRequest) -> Iterator[logging.Logger]:
    """A fresh verigate logger; its filters are removed afterwards so no test sees another's."""
    name = f"verigate.test.{request.node.name}"
    yield get_logger(name)
    logging.getLogger(name).filters.clear()


@pytest.fixture
def stream(logger: logging.Logger) -> Iterator[io.StringIO]:
    """What a handler attached to the logger itself writes, with exceptions and stacks formatted."""
    output = io.StringIO()
    handler = logging.StreamHandler(output)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s %(detail)s"))
    logger.addHandler(handler)
    yield output
    logger.removeHandler(handler)


def test_the_filter_is_attached_once(logger: logging.Logger) -> None:
    assert get_logger(logger.name) is logger
    get_logger(logger.name)
    assert sum(isinstance(item, RedactingFilter) for item in logger.filters) == 1


def test_message_arguments_exception_and_extra_are_redacted(logger: logging.Logger, stream: io.StringIO,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    token = _token()
    caplog.set_level(logging.DEBUG, logger=logger.name)
    try:
        raise RuntimeError(f"handler said token {token}")
    except RuntimeError as exc:
        logger.error("hook %s failed: %s", "post_verify", exc, exc_info=True, extra={"detail": f"see {token}"})
    record = caplog.records[-1]
    assert record.args == () and record.exc_info is None
    assert token not in record.msg and "[REDACTED:github-classic-token#1]" in record.msg
    assert record.msg.startswith("hook post_verify failed: handler said token")
    assert record.exc_text is not None and "RuntimeError" in record.exc_text and token not in record.exc_text
    assert token not in caplog.text
    written = stream.getvalue()
    assert token not in written and "Traceback" in written and "see [REDACTED:github-classic-token#1]" in written


def test_stack_info_is_redacted(logger: logging.Logger, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=logger.name)
    logger.info("where am I", stack_info=True, extra={"detail": ""})
    stack = caplog.records[-1].stack_info
    assert stack is not None and "test_stack_info_is_redacted" in stack
    assert __file__ not in stack  # the absolute path names a user's folders: the privacy pack cuts it
    assert "[REDACTED:posix-absolute-path#" in stack


def test_a_message_whose_arguments_do_not_fit_is_still_redacted(logger: logging.Logger,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    token = _token()
    caplog.set_level(logging.INFO, logger=logger.name)
    logger.info(f"token {token} %s %s", "only one", extra={"detail": ""})
    record = caplog.records[-1]
    assert token not in record.msg and "[log arguments could not be formatted]" in record.msg


def test_without_a_redactor_the_message_is_withheld(logger: logging.Logger, caplog: pytest.LogCaptureFixture,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from verigate.redact import RulePackRedactor

    def broken(*_: Any, **__: Any) -> Any:
        raise OSError("rule packs are missing")

    monkeypatch.setattr(vlogging, "_REDACTOR", [])
    monkeypatch.setattr(RulePackRedactor, "from_packs", broken)
    token = _token()
    caplog.set_level(logging.INFO, logger=logger.name)
    try:
        raise ValueError(token)
    except ValueError:
        logger.exception("failed with %s", token, extra={"detail": token})
    record = caplog.records[-1]
    assert (record.msg, record.args, record.exc_text) == (WITHHELD, (), WITHHELD)
    assert token not in caplog.text and record.__dict__["detail"] == WITHHELD
    monkeypatch.undo()
    logger.info("redactor back: %s", token, extra={"detail": ""})  # a later record builds it and is redacted
    assert caplog.records[-1].msg == "redactor back: [REDACTED:github-classic-token#1]"


def test_a_record_logged_while_the_redactor_is_built_is_withheld(logger: logging.Logger,
                                                                 caplog: pytest.LogCaptureFixture,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from verigate.redact import RulePackRedactor

    real = RulePackRedactor.from_packs
    token = _token()

    def noisy(*args: Any, **kwargs: Any) -> Any:
        logger.warning("compiling with %s", token, extra={"detail": ""})  # re-enters the filter
        return real(*args, **kwargs)

    monkeypatch.setattr(vlogging, "_REDACTOR", [])
    monkeypatch.setattr(RulePackRedactor, "from_packs", noisy)
    caplog.set_level(logging.INFO, logger=logger.name)
    logger.info("outer %s", token, extra={"detail": ""})
    assert [record.msg for record in caplog.records[-2:]] == [WITHHELD, "outer [REDACTED:github-classic-token#1]"]


def test_a_redactor_failing_on_one_text_withholds_that_text(logger: logging.Logger,
                                                            caplog: pytest.LogCaptureFixture,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    class Failing:
        def redact(self, text: str) -> Any:
            raise RecursionError("too deep")

    monkeypatch.setattr(vlogging, "_REDACTOR", [Failing()])
    caplog.set_level(logging.INFO, logger=logger.name)
    logger.info("anything %s", _token(), extra={"detail": ""})
    assert caplog.records[-1].msg == WITHHELD


class _RaisingPostVerify:
    def __init__(self, token: str) -> None:
        self.__name__, self.token = "leaky-handler", token

    @hookimpl
    def verigate_post_verify(self, verdict: Verdict) -> Any:
        raise RuntimeError(f"token {self.token}")


def test_a_handler_exception_through_the_gate_is_logged_redacted(tmp_path: Any,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    token = _token()
    caplog.set_level(logging.DEBUG, logger="verigate")
    judge = ScriptedJudge([Verdict(passed=True, score=1.0)])
    config = {"judge": {"engine": "scripted"}}
    with Gate.from_config(config, plugins=[judge, _RaisingPostVerify(token)], store=str(tmp_path / "v.db"),
                          entry_points=False) as gate:
        result = finalize_and_return(gate, Candidate("Fix it.", "Fixed.", session_id="s"), Termination("natural"))
    assert result.policy_action == "escalate_hook_error"
    gate_records = [record for record in caplog.records if record.name.startswith("verigate")]
    assert gate_records, "the gate logged nothing about the failing handler"
    assert token not in caplog.text
    assert all(token not in record.getMessage() for record in caplog.records)
