"""What the openai client does over plain HTTP that the SDK did before it: no redirect carries the key elsewhere,
the SDK's retry rule (a server's x-should-retry and retry-after), the organization / project headers, proxies."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from judge_servers import JudgeServer, verdict_json
from verigate import JudgeError


def _reason(run: Callable[[], object]) -> str:
    with pytest.raises(JudgeError) as caught:
        run()
    return caught.value.reason


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_not_followed(build_judge, make_request, run_judge, api_key, status) -> None:
    with JudgeServer("openai") as elsewhere, JudgeServer("openai") as server:
        elsewhere.reply_text(verdict_json(passed=True))
        server.reply_status(status, headers={"location": f"{elsewhere.base_url}/chat/completions"})
        judge = build_judge("llm_judge", "openai", model="m", base_url=server.base_url)
        assert _reason(lambda: run_judge(judge, make_request())) == f"judge_http_{status}"
        assert elsewhere.requests == [] and len(server.requests) == 1


def test_the_server_may_forbid_a_retry(build_judge, make_request, run_judge, api_key) -> None:
    with JudgeServer("openai") as server:
        server.reply_status(503, headers={"x-should-retry": "false"})
        server.reply_text(verdict_json(passed=True))
        judge = build_judge("llm_judge", "openai", model="m", base_url=server.base_url, options={"max_retries": 2})
        assert _reason(lambda: run_judge(judge, make_request())) == "judge_http_503"
        assert len(server.requests) == 1


def test_the_server_may_ask_for_a_retry_of_a_client_error(build_judge, make_request, run_judge, api_key) -> None:
    with JudgeServer("openai") as server:
        server.reply_status(400, headers={"x-should-retry": "true", "retry-after-ms": "10"})
        server.reply_text(verdict_json(passed=True))
        judge = build_judge("llm_judge", "openai", model="m", base_url=server.base_url, options={"max_retries": 1})
        assert run_judge(judge, make_request()).passed
        assert len(server.requests) == 2


def test_a_client_error_is_not_retried(build_judge, make_request, run_judge, api_key) -> None:
    with JudgeServer("openai") as server:
        server.reply_status(401)
        server.reply_text(verdict_json(passed=True))
        judge = build_judge("llm_judge", "openai", model="m", base_url=server.base_url, options={"max_retries": 3})
        assert _reason(lambda: run_judge(judge, make_request())) == "judge_http_401"
        assert len(server.requests) == 1


def test_a_retry_after_past_the_deadline_is_a_timeout(build_judge, make_request, run_judge, api_key) -> None:
    with JudgeServer("openai") as server:
        server.reply_status(429, headers={"retry-after": "30"})
        server.reply_text(verdict_json(passed=True))
        judge = build_judge("llm_judge", "openai", model="m", base_url=server.base_url, options={"max_retries": 1})
        assert _reason(lambda: run_judge(judge, make_request(), timeout_s=0.5)) == "judge_timeout"
        assert len(server.requests) == 1


def test_organization_and_project_headers(build_judge, make_request, run_judge, api_key, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-test")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-test")
    with JudgeServer("openai") as server:
        server.reply_text(verdict_json(passed=True))
        run_judge(build_judge("llm_judge", "openai", model="m", base_url=server.base_url), make_request())
        headers = server.requests[0].headers
    assert headers["openai-organization"] == "org-test" and headers["openai-project"] == "proj-test"
    assert headers["content-type"] == "application/json"


def test_a_proxy_from_the_environment_carries_the_call(build_judge, make_request, run_judge, api_key,
                                                       monkeypatch) -> None:
    # a plain-HTTP proxy receives the absolute URL: the loopback server plays the proxy and answers itself
    with JudgeServer("openai", path="http://judge.invalid/v1/chat/completions") as proxy:
        proxy.reply_text(verdict_json(passed=True))
        monkeypatch.setenv("http_proxy", proxy.base_url.rsplit("/v1", 1)[0])
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        judge = build_judge("llm_judge", "openai", model="m", base_url="http://judge.invalid/v1")
        assert run_judge(judge, make_request()).passed
        assert len(proxy.requests) == 1


def _planted_base_urls(tmp_path) -> list[str]:
    """Base URLs that urllib opens without any server: the reply a local file or the URL itself plants ('#' ends
    the URL before the appended /chat/completions, as urllib drops a fragment)."""
    import json
    import urllib.parse

    from judge_servers import openai_completion

    reply = json.dumps(openai_completion(verdict_json(passed=True)))
    planted = tmp_path / "reply.json"
    planted.write_text(reply, encoding="utf-8")
    return [f"data:application/json,{urllib.parse.quote(reply)}#", f"{planted.as_uri()}#"]


@pytest.mark.parametrize("which", [0, 1])
def test_a_base_url_that_is_not_http_is_refused(build_judge, make_request, run_judge, api_key, tmp_path,
                                                which) -> None:
    # the SDK (httpx) refused every scheme but http(s); urllib would read a data: URL or a local file as the reply
    base_url = _planted_base_urls(tmp_path)[which]
    judge = build_judge("llm_judge", "openai", model="m", base_url=base_url)
    # today refused only because such a reply has no HTTP status (the check of response.status raises)
    assert _reason(lambda: run_judge(judge, make_request())) == "judge_transport_error"
