"""The model clients' TLS: the verifying context (loading the CA store costs tens of ms) is built for an https
server only, never for a plain-HTTP one such as a local model server; an https server whose certificate nothing
vouches for is a transport error, never a verdict."""

from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator

import pytest

from judge_servers import JudgeServer, jev_answers, verdict_json
from verigate import JudgeError
from verigate.judge import JudgeEngine, tls_context

MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5", "jev": None}
ENGINES = {"openai": "llm_judge", "anthropic": "llm_judge", "jev": "jev"}
PROTOCOLS = ["openai", "anthropic", "jev"]


def _judge(build_judge: Callable[..., JudgeEngine], protocol: str, base_url: str) -> JudgeEngine:
    settings = {"model": MODELS[protocol]} if MODELS[protocol] else {}
    return build_judge(ENGINES[protocol], protocol, base_url=base_url, **settings)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_plain_http_judge_builds_no_tls_context(build_judge, make_request, run_judge, api_key: str,
                                                  protocol: str) -> None:
    tls_context.cache_clear()  # the process's one context: start this test without it
    with JudgeServer(protocol, required_key=api_key) as server:
        if protocol == "jev":
            server.reply_json(jev_answers("supported", {"supported": 0.9, "contradicted": 0.05,
                                                        "insufficient_evidence": 0.05}))
        else:
            server.reply_text(verdict_json(passed=True))
        assert run_judge(_judge(build_judge, protocol, server.base_url), make_request()).passed
    assert tls_context.cache_info().currsize == 0


@pytest.fixture(scope="module")
def untrusted_tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A loopback TLS server with a self-signed certificate made at test time: the https base URL it serves at."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    folder = tmp_path_factory.mktemp("tls")
    key, cert = folder / "key.pem", folder / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                connection.settimeout(5)
                try:  # the client refuses the certificate: the handshake fails on its side, nothing is served
                    with context.wrap_socket(connection, server_side=True) as tls:
                        tls.recv(1)
                except (OSError, ssl.SSLError):
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        listener.close()
        thread.join(timeout=5)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_https_judge_must_present_a_trusted_certificate(build_judge, make_request, run_judge, api_key: str,
                                                           untrusted_tls_server: str, protocol: str) -> None:
    tls_context.cache_clear()
    judge = _judge(build_judge, protocol, untrusted_tls_server)
    with pytest.raises(JudgeError) as caught:
        run_judge(judge, make_request())
    assert caught.value.reason == "judge_transport_error"
    assert tls_context.cache_info().currsize == 1  # the verifying context was built, and it refused
