"""``verigate doctor``: would verigate guard this project? One line per check, with the fix: the host's sandbox
is the self-gate's wall, the hooks are wired and run this verigate (Codex: trusted), and the Stop gate has a
valid configuration, a writable store and a judge that answers.

Exit 0 when every check passes (warnings and skipped checks do not fail), 1 when something would let actions
through unguarded. ``--print-settings HOST`` prints the settings fragment the checks look for.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .._errors import VerigateError
from ..selfgate._boundary import Check

if TYPE_CHECKING:
    from ..selfgate._wall import Host

__all__ = ["main"]

_HOSTS = ("claude-code", "codex")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="verigate doctor", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", choices=_HOSTS, action="append",
                        help="check this host (repeatable; default: the hosts wired to verigate's hooks, else both)")
    parser.add_argument("--project", default=None,
                        help="project folder (default: CLAUDE_PROJECT_DIR, else the current folder)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--no-judge-probe", action="store_true",
                        help="do not send the judge its one probe call (a probe costs a model call)")
    parser.add_argument("--print-settings", choices=_HOSTS, metavar="HOST",
                        help="print the settings fragment for HOST (claude-code: settings.json; codex: config.toml)")
    return parser


def _wired_hosts(project: str) -> list[str]:
    """The hosts whose settings files run ``verigate hook <host>`` (either host's files, project or user)."""
    from ..selfgate._wall import claude_files, codex_files

    wired = []
    for host, files in (("claude-code", claude_files(project)), ("codex", codex_files(project))):
        extra = [os.path.join(project, ".codex", "hooks.json")] if host == "codex" else []  # noqa: PTH118
        for path in [path for path, _ in files] + extra:
            try:
                text = Path(path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if f"verigate hook {host}" in text or f"verigate.exe hook {host}" in text:
                wired.append(host)
                break
    return wired


def _entry(check: Check) -> dict[str, str]:
    return {"name": check.name, "status": check.status.lower(), "detail": check.detail,
            "fix": check.fix if not check.ok else ""}


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if args.print_settings:
        from ..selfgate._snippets import snippet

        sys.stdout.write(snippet(args.print_settings))
        return 0
    from .._project import project_dir
    from ..selfgate._boundary import host_checks
    from ..selfgate._enforce import settings_for
    from ..selfgate._location import legacy_store, project_state_dir
    from ..selfgate._machine import machine_checks
    from ..selfgate._wiring import wiring_checks
    from ._doctor_checks import codex_trust_checks, config_check, judge_check, path_checks, store_check

    project = str(Path(project_dir(None, explicit=args.project)).resolve())  # --project, CLAUDE_PROJECT_DIR, cwd
    hosts = args.host or _wired_hosts(project) or list(_HOSTS)
    report: dict[str, object] = {"project": project, "state_folder": project_state_dir(project), "hosts": {}}
    failed = False
    lines = [f"project {project}", f"self-gate state folder {project_state_dir(project)}"]
    for name in hosts:
        host: Host = "codex" if name == "codex" else "claude-code"
        checks = wiring_checks(host, project) + path_checks(host, project, os.environ)
        if host == "codex":
            checks += codex_trust_checks(project, os.environ)
        checks += machine_checks(host)
        try:
            settings = settings_for({"cwd": project}, host, import_legacy=False)
        except VerigateError as exc:  # an invalid self_gate section: the hooks refuse (exit 2) until it is fixed
            checks.insert(0, Check("self-gate configuration", False, f"cannot be read: {exc}",
                                   "fix the file it names: every hook call fails while it is invalid"))
            failed = True
            report["hosts"][host] = {"checks": [_entry(check) for check in checks]}  # type: ignore[index]
            lines.append(f"\n{host}")
            lines += [f"  {check.line()}" for check in checks]
            continue
        store = str(settings.store.path)
        checks = host_checks(host, project, store, settings.config_path, settings.custom_store) + checks
        failed = failed or any(check.failed for check in checks)
        report["hosts"][host] = {  # type: ignore[index]
            "mode": settings.mode, "hardening": settings.hardening, "config": settings.config_path or None,
            "store": store, "checks": [_entry(check) for check in checks]}
        lines.append(f"\n{host} (self-gate mode {settings.mode}, hardening {settings.hardening}, configuration "
                     f"{settings.config_path or 'none: the defaults'})")
        lines += [f"  {check.line()}" for check in checks]
        if settings.hardening == "best-effort":
            lines.append("  note: hardening is best-effort: block mode runs without these checks")
    # the Stop gate's own needs, the same for both hosts: its configuration, its store, its judge
    config_ok, config = config_check(project)
    stop = [config_ok]
    if config is None:
        stop += [Check(name, False, "not checked: verigate.yaml is invalid", skipped=True)
                 for name in ("Stop gate store", "judge")]
    else:
        stop.append(store_check(project, config))
        stop.append(Check("judge", True, "probe not sent (--no-judge-probe)", skipped=True)
                    if args.no_judge_probe and config.judge is not None else judge_check(project, config))
    failed = failed or any(check.failed for check in stop)
    report["checks"] = [_entry(check) for check in stop]
    lines.append("\nStop gate")
    lines += [f"  {check.line()}" for check in stop]
    if Path(legacy_store(project)).exists() and not Path(project_state_dir(project), "self-gates.jsonl").exists():
        lines.append(f"\nnote: {legacy_store(project)} is imported into the state folder by the next hook call")
    report["ok"] = not failed
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print("\n".join(lines))
        print("\nall checks pass" if not failed else
              "\nsome checks fail: actions may go unguarded, and block mode refuses blocked tools while a boundary "
              f"setting is missing (see the fixes above; `verigate doctor --print-settings {hosts[0]}` prints the "
              "settings)")
    return 0 if not failed else 1
