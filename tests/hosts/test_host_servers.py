"""The scripted model servers themselves (no host CLI needed): the SSE streams parse back into the scripted turn,
the non-streaming and side requests are answered, and every request is recorded."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from host_servers import UNSCRIPTED_TEXT, AnthropicServer, Call, ResponsesServer, Turn


def post(url: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return str(response.headers.get("content-type")), response.read()


def events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for block in raw.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            data = json.loads(lines["data"])
            assert data["type"] == lines["event"]
            found.append((lines["event"], data))
    return found


def test_anthropic_stream_rebuilds_text_and_tool_use() -> None:
    call = Call("Edit", {"file_path": "/p/a.py", "old_string": "x = 1", "new_string": "x = 2"})
    with AnthropicServer() as server:
        server.script(Turn(text="I'll edit a.py.", calls=(call,)))
        kind, raw = post(server.url + "/v1/messages?beta=true",
                         {"model": "m", "stream": True, "tools": [{"name": "Edit"}], "messages": []})
        assert kind == "text/event-stream"
        stream = events(raw)
        names = [name for name, _ in stream]
        assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
        text = "".join(data["delta"]["text"] for name, data in stream
                       if name == "content_block_delta" and data["delta"]["type"] == "text_delta")
        partial = "".join(data["delta"]["partial_json"] for name, data in stream
                          if name == "content_block_delta" and data["delta"]["type"] == "input_json_delta")
        start = next(data for name, data in stream
                     if name == "content_block_start" and data["content_block"]["type"] == "tool_use")
        assert text == "I'll edit a.py." and json.loads(partial) == call.input
        assert start["content_block"] == {"type": "tool_use", "id": f"toolu_{call.id}", "name": "Edit", "input": {}}
        assert stream[-2][1]["delta"]["stop_reason"] == "tool_use"
        # unscripted main request: a final text; side request (no tools) and token counting: harmless answers
        _, plain = post(server.url + "/v1/messages", {"model": "m", "tools": [{"name": "Edit"}], "messages": []})
        assert json.loads(plain)["content"] == [{"type": "text", "text": UNSCRIPTED_TEXT}]
        _, side = post(server.url + "/v1/messages", {"model": "haiku", "messages": []})
        assert json.loads(side)["stop_reason"] == "end_turn"
        _, counted = post(server.url + "/v1/messages/count_tokens", {"messages": []})
        assert json.loads(counted) == {"input_tokens": 100}
        assert [request.role for request in server.requests] == ["main", "main", "side", "other"]
        assert server.unscripted == 1


def test_responses_stream_carries_function_and_custom_tool_calls() -> None:
    shell = Call("exec_command", {"cmd": "ls"})
    patch = Call("apply_patch", "*** Begin Patch\n*** End Patch\n", kind="custom")
    with ResponsesServer() as server:
        server.script(Turn(text="Looking.", calls=(shell, patch)))
        kind, raw = post(server.url + "/v1/responses", {"model": "gpt-5.5", "stream": True, "tools": [{}],
                                                        "input": []})
        assert kind == "text/event-stream"
        stream = events(raw)
        assert stream[0][0] == "response.created" and stream[-1][0] == "response.completed"
        done = [data["item"] for name, data in stream if name == "response.output_item.done"]
        assert [item["type"] for item in done] == ["message", "function_call", "custom_tool_call"]
        assert json.loads(done[1]["arguments"]) == {"cmd": "ls"} and done[1]["call_id"] == f"call_{shell.id}"
        assert done[2]["input"] == patch.input and done[2]["name"] == "apply_patch"
        assert "".join(data["delta"] for name, data in stream if name == "response.output_text.delta") == "Looking."
        assert stream[-1][1]["response"]["output"] == done
        # what the host sends back is read per call
        post(server.url + "/v1/responses", {"model": "gpt-5.5", "stream": True, "tools": [{}], "input": [
            {"type": "function_call_output", "call_id": f"call_{shell.id}", "output": "a.py"},
            {"type": "custom_tool_call_output", "call_id": f"call_{patch.id}", "output": "Done!"},
        ]})
        assert server.result_of(shell) == "a.py" and server.result_of(patch) == "Done!"
