"""Judges: the engine and model-client interfaces, ``llm_judge``, ``jev`` and the ``callable`` client; labelled
judge cases and the agreement figures of ``verigate judge eval`` and ``calibrate`` (the runner that drives the
gate's judge over cases is :func:`verigate.gate.evaluate_judge`)."""

from __future__ import annotations

from .. import _face

#: type checkers read this constant as typing.TYPE_CHECKING
_TYPE_CHECKING = False
if _TYPE_CHECKING:
    from ._agreement import (
        KAPPA_Z,
        Agreement,
        CaseConsistency,
        JudgeQuality,
        Judgment,
        Thresholds,
        agreement,
        consistency,
        failed_thresholds,
        percentile,
        quality_json,
    )
    from ._base import (
        MAX_JUDGE_TIMEOUT_S,
        ChatRequest,
        DecisionClient,
        JudgeCacheConfig,
        JudgeCaps,
        JudgeConfig,
        JudgeEngine,
        JudgeEngineFactory,
        JudgeRequest,
        ModelClient,
        ModelClientFactory,
    )
    from ._callable import CallableClient
    from ._cases import (
        CASE_SCHEMA,
        LABELS,
        MAX_CASE_LINE_CHARS,
        MAX_CASES,
        MAX_CASES_FILE_BYTES,
        JudgeCase,
        case_record,
        check_case_record,
        parse_judge_cases,
        read_judge_cases,
    )
    from ._clients import (
        DEFAULT_MAX_REPLY_BYTES,
        api_key_from_env,
        bounded_timeout,
        describe,
        http_status_error,
        in_daemon_thread,
        is_loopback_url,
        mapped_sdk_errors,
        option,
        read_capped,
        reply_json,
        require_model,
        tls_context,
    )
    from ._jev import DEFAULT_JEV_MODEL, VERDICT_OPTIONS, JevJudge, jev_request_body
    from ._llm import LLMJudge
    from ._prompt import build_chat_request, neutralise, wire_schema
    from ._trust import check_trust
    from ._usage import JudgeUsage, collecting_usage, report_usage
    from ._verdict import VERDICT_SCHEMA, parse_verdict, verdict_object_from_text

#: the module each exported name lives in: it is imported on first use (see verigate._face.lazy)
_EXPORTS: dict[str, tuple[str, ...]] = {
    "_agreement": (
        "KAPPA_Z", "Agreement", "CaseConsistency", "JudgeQuality", "Judgment", "Thresholds", "agreement",
        "consistency", "failed_thresholds", "percentile", "quality_json",
    ),
    "_base": (
        "MAX_JUDGE_TIMEOUT_S", "ChatRequest", "DecisionClient", "JudgeCacheConfig", "JudgeCaps", "JudgeConfig",
        "JudgeEngine", "JudgeEngineFactory", "JudgeRequest", "ModelClient", "ModelClientFactory",
    ),
    "_callable": ("CallableClient",),
    "_cases": (
        "CASE_SCHEMA", "LABELS", "MAX_CASE_LINE_CHARS", "MAX_CASES", "MAX_CASES_FILE_BYTES", "JudgeCase",
        "case_record", "check_case_record", "parse_judge_cases", "read_judge_cases",
    ),
    "_clients": (
        "DEFAULT_MAX_REPLY_BYTES", "api_key_from_env", "bounded_timeout", "describe", "http_status_error",
        "in_daemon_thread", "is_loopback_url", "mapped_sdk_errors", "option", "read_capped", "reply_json",
        "require_model", "tls_context",
    ),
    "_jev": ("DEFAULT_JEV_MODEL", "VERDICT_OPTIONS", "JevJudge", "jev_request_body"),
    "_llm": ("LLMJudge",),
    "_prompt": ("build_chat_request", "neutralise", "wire_schema"),
    "_trust": ("check_trust",),
    "_usage": ("JudgeUsage", "collecting_usage", "report_usage"),
    "_verdict": ("VERDICT_SCHEMA", "parse_verdict", "verdict_object_from_text"),
}

__all__ = [
    "CASE_SCHEMA",
    "DEFAULT_JEV_MODEL",
    "DEFAULT_MAX_REPLY_BYTES",
    "KAPPA_Z",
    "LABELS",
    "MAX_CASES",
    "MAX_CASES_FILE_BYTES",
    "MAX_CASE_LINE_CHARS",
    "MAX_JUDGE_TIMEOUT_S",
    "VERDICT_OPTIONS",
    "VERDICT_SCHEMA",
    "Agreement",
    "CallableClient",
    "CaseConsistency",
    "ChatRequest",
    "DecisionClient",
    "JevJudge",
    "JudgeCacheConfig",
    "JudgeCaps",
    "JudgeCase",
    "JudgeConfig",
    "JudgeEngine",
    "JudgeEngineFactory",
    "JudgeQuality",
    "JudgeRequest",
    "JudgeUsage",
    "Judgment",
    "LLMJudge",
    "ModelClient",
    "ModelClientFactory",
    "Thresholds",
    "agreement",
    "api_key_from_env",
    "bounded_timeout",
    "build_chat_request",
    "case_record",
    "check_case_record",
    "check_trust",
    "collecting_usage",
    "consistency",
    "describe",
    "failed_thresholds",
    "http_status_error",
    "in_daemon_thread",
    "is_loopback_url",
    "jev_request_body",
    "mapped_sdk_errors",
    "neutralise",
    "option",
    "parse_judge_cases",
    "parse_verdict",
    "percentile",
    "quality_json",
    "read_capped",
    "read_judge_cases",
    "reply_json",
    "report_usage",
    "require_model",
    "tls_context",
    "verdict_object_from_text",
    "wire_schema",
]

__getattr__, __dir__ = _face.lazy(globals())
