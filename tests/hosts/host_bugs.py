"""Known verigate bugs the real-client scenarios reveal, per host: each is a strict xfail, so a fix flips it (the
test then XPASSes and fails until its marker is removed here). One entry per host, because the fixes may land
for one host before the other."""

from __future__ import annotations

import pytest

HOSTS = ("claude-code", "codex")

#: issue 10 item 2: lines the transcript line registry does not classify open problem gates in the self-gate
#: (Codex 0.171's world_state / token_usage_record were classified by f7978f8)
PROBLEM_GATES: dict[str, str] = {}  # Claude Code 2.1.332's api-request-* lines were classified too
#: issue 10 item 2: the same line types are reader warnings in `verigate grade`
GRADE_WARNINGS: dict[str, str] = {}
#: issue 10 item 3: a Codex call the hook denied has no exit status and is graded ok
DENIED_GRADED_OK: dict[str, str] = {}  # a Codex call the hook denied is graded not ok since the fix


def hosts_expecting(bug: dict[str, str]) -> list[object]:
    """The ``host`` parameters, each host the bug affects marked as a strict xfail."""
    return [pytest.param(host, marks=pytest.mark.xfail(strict=True, reason=bug[host])) if host in bug else host
            for host in HOSTS]


def expect(request: pytest.FixtureRequest, host: str, bug: dict[str, str]) -> None:
    """Inside a test of a host-parametrized fixture: mark it a strict xfail when the bug affects the host."""
    if host in bug:
        request.applymarker(pytest.mark.xfail(strict=True, reason=bug[host]))
