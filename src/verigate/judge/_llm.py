"""The ``llm_judge`` engine: one tool-free chat call per judgment, its reply validated into a Verdict."""

from __future__ import annotations

import asyncio

from .. import _face
from .._data import schema
from .._errors import ConfigError, JudgeError
from .._models import Verdict
from ._base import ChatRequest, JudgeConfig, JudgeRequest, ModelClient
from ._clients import bounded_timeout, describe, option
from ._prompt import build_chat_request, wire_schema
from ._trust import check_trust
from ._verdict import VERDICT_SCHEMA, parse_verdict

__all__ = ["DEFAULT_MAX_OUTPUT_TOKENS", "LLMJudge", "client_label"]

#: the ChatRequest default; ``options.max_output_tokens`` raises it for reasoning models
DEFAULT_MAX_OUTPUT_TOKENS = ChatRequest(system="", user="").max_output_tokens


def client_label(config: JudgeConfig, client: object) -> str:
    """What a client is, for ``effective_engine``: its own ``label`` or ``<client>:<model>``."""
    label = getattr(client, "label", None)
    if isinstance(label, str) and label:
        return label
    return f"{config.client or type(client).__name__}:{config.model or 'default'}"


class LLMJudge:
    """Asks a chat model for the verdict JSON of ``schemas/judge-verdict.schema.json``.

    Raises JudgeError (never returns an unearned pass): ``judge_unavailable`` (no client),
    ``personal_data_omitted`` (auxiliary judge, personal data), ``judge_timeout``,
    ``verification_time_budget_exhausted``, ``invalid_judge_response``, and the client's own codes.
    """

    name = "llm_judge"

    def __init__(self, config: JudgeConfig, client: ModelClient | None = None) -> None:
        if client is not None and not isinstance(client, ModelClient):
            raise ConfigError(
                f"engine 'llm_judge' needs a chat model client; {config.client!r} has no complete()",
                field="judge.client",
            )
        self.config = config
        self.client = client
        # reasoning models spend output tokens before they answer: give them room with options.max_output_tokens
        self.max_output_tokens = option(config, "max_output_tokens", int, DEFAULT_MAX_OUTPUT_TOKENS)
        self.response_schema = wire_schema(schema(VERDICT_SCHEMA))
        self.effective_engine = f"{self.name}/{client_label(config, client)}" if client is not None else self.name

    async def prepare(self) -> None:
        """Load what the client's call needs (its ``prepare()``, when it has one: an SDK imported at first use), so
        that the judge timeout measures the model's answer, not an import. The gate calls it before the timeout
        starts; a call without it still works (the client then loads inside the call). Raises JudgeError."""
        prepare = getattr(self.client, "prepare", None)
        if prepare is not None:
            await prepare()

    async def judge(self, request: JudgeRequest, *, timeout_s: float) -> Verdict:
        timeout_s = bounded_timeout(min(timeout_s, self.config.effective_timeout_s))
        if self.client is None:
            raise JudgeError("judge_unavailable", "engine 'llm_judge' has no model client configured")
        check_trust(self.config, request)
        chat = build_chat_request(request, self.config.caps, response_schema=self.response_schema,
                                  max_output_tokens=self.max_output_tokens)
        try:
            async with asyncio.timeout(timeout_s):
                reply = await self.client.complete(chat, timeout_s=timeout_s)
        except JudgeError:
            raise
        except TimeoutError as exc:
            raise JudgeError("judge_timeout", f"the judge did not answer within {timeout_s:g} s") from exc
        except Exception as exc:  # a third-party client that breaks its contract still fails closed
            raise JudgeError("judge_transport_error", f"the model client raised {describe(exc)}") from exc
        return parse_verdict(reply, engine=self.name, effective_engine=self.effective_engine)


_face.present_module(globals())  # the names verigate.judge exports report it
