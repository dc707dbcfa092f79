"""Judges: the engine and model-client interfaces, ``llm_judge``, ``jev`` and the ``callable`` client."""

from __future__ import annotations

from .._face import present as _present
from ._base import (
    MAX_JUDGE_TIMEOUT_S,
    ChatRequest,
    DecisionClient,
    JudgeCaps,
    JudgeConfig,
    JudgeEngine,
    JudgeEngineFactory,
    JudgeRequest,
    ModelClient,
    ModelClientFactory,
)
from ._callable import CallableClient
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
from ._observed import report_usage
from ._prompt import build_chat_request, neutralise, wire_schema
from ._trust import check_trust
from ._verdict import VERDICT_SCHEMA, parse_verdict, verdict_object_from_text

__all__ = [
    "DEFAULT_JEV_MODEL",
    "DEFAULT_MAX_REPLY_BYTES",
    "MAX_JUDGE_TIMEOUT_S",
    "VERDICT_OPTIONS",
    "VERDICT_SCHEMA",
    "CallableClient",
    "ChatRequest",
    "DecisionClient",
    "JevJudge",
    "JudgeCaps",
    "JudgeConfig",
    "JudgeEngine",
    "JudgeEngineFactory",
    "JudgeRequest",
    "LLMJudge",
    "ModelClient",
    "ModelClientFactory",
    "api_key_from_env",
    "bounded_timeout",
    "build_chat_request",
    "check_trust",
    "describe",
    "http_status_error",
    "in_daemon_thread",
    "is_loopback_url",
    "jev_request_body",
    "mapped_sdk_errors",
    "neutralise",
    "option",
    "parse_verdict",
    "read_capped",
    "reply_json",
    "report_usage",
    "require_model",
    "tls_context",
    "verdict_object_from_text",
    "wire_schema",
]

_present(globals(), __name__)
