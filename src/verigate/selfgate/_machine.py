"""What the machine must provide for the hosts' sandboxes (``verigate doctor`` only; the hooks never run this:
with ``sandbox.failIfUnavailable`` Claude Code itself refuses to run commands when the sandbox cannot start)."""

from __future__ import annotations

import shutil
import subprocess
import sys

from ._boundary import Check
from ._wall import Host

__all__ = ["machine_checks"]

#: Claude Code's sandbox on Linux (the sandbox-runtime): bubblewrap for the namespaces, socat for the network
#: proxy bridge, ripgrep to find the files it always protects
_CLAUDE_TOOLS = (("bwrap", "bubblewrap"), ("socat", "socat"), ("rg", "ripgrep"))
_USERNS_TIMEOUT_S = 10.0


def _user_namespaces(bwrap: str) -> Check:
    """bubblewrap needs unprivileged user namespaces (off in some containers and hardened kernels)."""
    try:
        ran = subprocess.run([bwrap, "--ro-bind", "/", "/", "true"], capture_output=True, text=True,
                             timeout=_USERNS_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("user namespaces", False, f"`bwrap --ro-bind / / true` failed: {exc}",
                     "enable unprivileged user namespaces (kernel.unprivileged_userns_clone=1, or run outside a "
                     "container that forbids them)")
    if ran.returncode != 0:
        return Check("user namespaces", False,
                     f"`bwrap --ro-bind / / true` exited {ran.returncode}: {ran.stderr.strip()[:200]}",
                     "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu "
                     "also kernel.apparmor_restrict_unprivileged_userns=0), or run outside a container that "
                     "forbids them")
    return Check("user namespaces", True, "`bwrap --ro-bind / / true` works")


def machine_checks(host: Host) -> list[Check]:
    if not sys.platform.startswith("linux"):
        return [Check("sandbox tools", True, f"{sys.platform}: the host uses the system's own sandbox "
                                             "(Seatbelt on macOS); nothing to install", skipped=True)]
    checks: list[Check] = []
    if host == "claude-code":
        for program, package in _CLAUDE_TOOLS:
            found = shutil.which(program)
            checks.append(Check(program, found is not None, found or "not on PATH",
                                f"install the Debian/Ubuntu package {package} (apt-get install {package})"))
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        checks.append(Check("user namespaces", True, "not checked: bwrap is not installed", skipped=True))
    else:
        checks.append(_user_namespaces(bwrap))
    return checks
