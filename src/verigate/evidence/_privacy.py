"""Privacy rules of the EV contract §7: input key scan, value reduction, and the output check (pure)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..redact import RedactionResult, Redactor

__all__ = [
    "ACCOUNT_KEYS",
    "FORBIDDEN_KEYS",
    "Escalation",
    "check_output_privacy",
    "evidence_ref_error",
    "redact",
    "remember_value_scans",
    "scan_input_keys",
    "scrub_reasons",
    "texts_of",
]

#: the 14 keys that must never appear in an EV (kept here, never registered as schema properties)
FORBIDDEN_KEYS = frozenset({
    "file_path", "file_paths", "stack_trace", "stacktrace", "command_output", "stdout", "stderr",
    "raw_response", "raw_request", "api_key", "user_prompt", "system_prompt", "prompt_text", "absolute_path",
})
#: keys that identify an account
ACCOUNT_KEYS = frozenset({"account", "actor", "author", "github_user", "login", "owner", "user", "username"})

#: an escalation item as (kind, detail)
Escalation = tuple[str, str]

# any scheme, and a bare github.com reference, so owner names in "github.com/owner/repo" are reduced too
_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://|github\.com)[^\s\"']*")
_PR = re.compile(r"/pull/([0-9]+)")
_COMMENT = re.compile(r"#issuecomment-([0-9]+)")
# PlanGate's rule is ``(^/|/Users/)``; it misses "see /home/bob/x", so a slash that starts a multi-segment path
# (not preceded by a name character: "a/b" and "2026/01" stay) and Windows drive paths count as absolute too
_ABSOLUTE = re.compile(r"(^/|/Users/|(?<![A-Za-z0-9])~/|(?<![A-Za-z0-9._~-])/[^\s/\"']+/|(?<![A-Za-z0-9])[A-Za-z]:\\)")
_ABSOLUTE_PART = re.compile(r"(?<![A-Za-z0-9])(/|[A-Za-z]:\\)[^\s\"']*")
_HANDLE = re.compile(r"(?<![A-Za-z0-9])@[A-Za-z0-9][A-Za-z0-9-]+")
# an e-mail address names an account whatever its domain (the pii pack lets documentation domains through)
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_ACCOUNT_VALUE = re.compile(r"(github\.com|://|(?<![A-Za-z0-9])@[A-Za-z0-9][A-Za-z0-9-]+)")

URL_REDUCED: Escalation = ("privacy_url_reduced", "URL を番号参照へ還元した")
PATH_REDUCED: Escalation = ("privacy_absolute_path", "絶対パスを含む入力値を還元した")
HANDLE_REDUCED: Escalation = ("privacy_account_handle", "account handle を含む入力値を還元した")
EMAIL_REDUCED: Escalation = ("privacy_account_email", "e-mail アドレスを含む入力値を還元した")


def _walk_keys(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _walk_keys(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk_keys(item)


def texts_of(value: Any) -> tuple[set[str], set[str]]:
    """The distinct keys and string values at any depth, found without building a path for each node."""
    keys: set[Any] = set()
    strings: set[str] = set()
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        # exact types first (what a JSON parser builds); subclasses take the isinstance branch, as in the walks
        if kind is str:
            strings.add(item)
        elif kind is dict:
            keys.update(item)
            extend(item.values())
        elif kind is list:
            extend(item)
        elif isinstance(item, dict):
            keys.update(item)
            extend(item.values())
        elif isinstance(item, list):
            extend(item)
        elif isinstance(item, str):
            strings.add(item)
    if not all(type(key) is str for key in keys):
        keys = set(map(str, keys))  # the walks name a key by str(key)
    return keys, strings


_NAMED_KEYS = FORBIDDEN_KEYS | ACCOUNT_KEYS


def scan_input_keys(value: Any, label: str) -> list[Escalation]:
    """Escalations for forbidden and account keys at any depth of an input; values are never copied."""
    if _NAMED_KEYS.isdisjoint(texts_of(value)[0]):
        return []  # the walk below, in key order, only runs when there is something to report
    found: list[Escalation] = []
    for key in _walk_keys(value):
        if key in FORBIDDEN_KEYS:
            found.append(("privacy_forbidden_key", f"{label}: {key}"))
        elif key in ACCOUNT_KEYS:
            found.append(("privacy_account_key", f"{label}: {key}"))
    return found


def _reduce_url(match: re.Match[str]) -> str:
    url = match.group(0)
    parts = [f"pr:{pr.group(1)}" for pr in [_PR.search(url)] if pr]
    parts += [f"comment:{comment.group(1)}" for comment in [_COMMENT.search(url)] if comment]
    return "#".join(parts) or "ref:redacted"


def _secret_escalations(result: RedactionResult) -> list[Escalation]:
    # the rule id names what was found; the matched text never leaves
    return [(f"privacy_{finding.category}_reduced", finding.rule_id) for finding in result.findings
            if not finding.suppressed]


def redact(text: str, secrets: Redactor) -> tuple[str, list[Escalation]]:
    """Reduce secrets and personal data (``secrets``: the rule packs), URLs to number references, absolute
    paths, e-mail addresses and @handles to placeholders; log each reduction, never the reduced text."""
    entry = _MEMOS.get(id(secrets))
    if entry is None or entry[0] is not secrets:
        return _redact(text, secrets)
    found = entry[2].get(text)
    if found is None:
        found = _redact(text, secrets)
        _remember(entry[2], text, found)
    reduced, escalations = found
    return reduced, list(escalations)  # a copy: the caller may extend it, the memo must not change


def _redact(text: str, secrets: Redactor) -> tuple[str, list[Escalation]]:
    # NFKC first: full-width "ｇｉｔｈｕｂ．ｃｏｍ" or "＠alice" must not slip past the ASCII patterns below
    scanned = secrets.redact(unicodedata.normalize("NFKC", text))
    escalations = _secret_escalations(scanned)
    reduced, urls = _URL.subn(_reduce_url, scanned.text)
    if urls:
        escalations.append(URL_REDUCED)
    if _ABSOLUTE.search(reduced):
        escalations.append(PATH_REDUCED)
        reduced = _ABSOLUTE_PART.sub("path:redacted", reduced)
    reduced, emails = _EMAIL.subn("account:redacted", reduced)
    if emails:
        escalations.append(EMAIL_REDUCED)
    if _HANDLE.search(reduced):
        escalations.append(HANDLE_REDUCED)
        reduced = _HANDLE.sub("account:redacted", reduced)
    return reduced, escalations


def evidence_ref_error(ref: Any) -> str | None:
    """Why an evidence_refs item is not a repo-relative path (None when it is): empty, absolute, a URL or ``..``."""
    if not isinstance(ref, str) or not ref or ref.startswith("/") or "/Users/" in ref or ":" in ref \
            or "\\" in ref or ".." in ref.split("/"):
        return f"{ref!r}: repo-relative paths only (絶対パス・URL・.. は不可)"
    return None


#: a remembered text is at most this long and each memo holds at most this many texts: memory stays bounded
_MEMO_MAX_CHARS = 512
_MEMO_MAX_TEXTS = 16384
# id(redactor) -> (the redactor, output-check problems by text, reductions by text); the strong reference keeps
# the id from being reused by another redactor
_MEMOS: dict[int, tuple[Redactor, dict[str, tuple[str, ...]], dict[str, tuple[str, list[Escalation]]]]] = {}


def remember_value_scans(secrets: Redactor) -> None:
    """Let :func:`redact` and the output check remember, per process, what ``secrets`` makes of a short text.

    Only for a redactor whose findings are a function of the text alone (compiled once, immutable, no plug-in
    kinds): a remembered result is then exactly what a new scan of the same text derives, so nothing in an EV
    is trusted — keys, enum values and fixed texts simply repeat across the EVs one process verifies."""
    _MEMOS.setdefault(id(secrets), (secrets, {}, {}))


def _remember(memo: dict[str, Any], text: str, value: Any) -> None:
    if len(text) <= _MEMO_MAX_CHARS:
        if len(memo) >= _MEMO_MAX_TEXTS:
            memo.clear()  # bounded: start over rather than grow with every distinct hash the EVs carry
        memo[text] = value


def _value_problems(texts: Iterable[str], secrets: Redactor) -> dict[str, tuple[str, ...]]:
    """What the output check finds in each text (each scanned once, or remembered: see remember_value_scans)."""
    entry = _MEMOS.get(id(secrets))
    if entry is None or entry[0] is not secrets:
        return {text: _scan_value(text, secrets) for text in texts}
    memo = entry[1]
    problems: dict[str, tuple[str, ...]] = {}
    for text in texts:
        found: tuple[str, ...] | None = memo.get(text)
        if found is None:
            found = _scan_value(text, secrets)
            _remember(memo, text, found)
        problems[text] = found
    return problems


def _scan_value(text: str, secrets: Redactor) -> tuple[str, ...]:
    problems: list[str] = []
    folded = unicodedata.normalize("NFKC", text)
    if _ABSOLUTE.search(folded):
        problems.append("絶対パスを含む値")
    if _ACCOUNT_VALUE.search(folded) or _EMAIL.search(folded):
        problems.append("URL または account 識別子を含む値")
    # an inline allow marker does not excuse a finding here: the EV author is not trusted to vouch for it
    rules = sorted({finding.rule_id for finding in secrets.redact(folded).findings})
    if rules:
        problems.append(f"secret または personal data を含む値 ({', '.join(rules)})")
    return tuple(problems)


def _walk_strings(value: Any, path: str) -> Iterator[tuple[str, str, bool]]:
    """(where, text, is_key) for every key and string value; forbidden and account keys are reported apart."""
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            yield where, str(key), True
            yield from _walk_strings(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk_strings(item, f"{path}[{index}]")
    elif isinstance(value, str):
        yield path or "<root>", value, False


def check_output_privacy(record: Any, secrets: Redactor, *, texts: tuple[set[str], set[str]] | None = None
                         ) -> list[str]:
    """Every privacy violation in an EV (keys and string values at any depth); empty means clean. ``texts``:
    ``texts_of(record)`` when the caller has it already (the verifier reuses the one walk for other checks)."""
    keys, strings = texts_of(record) if texts is None else texts
    # keys such as "kind" and "detail" repeat: each distinct text is scanned once
    scanned = _value_problems((keys - _NAMED_KEYS) | strings, secrets)
    if _NAMED_KEYS.isdisjoint(keys) and not any(scanned.values()):
        return []  # clean: the walk below, which names where each problem is, only runs to report one
    reasons: list[str] = []
    for where, text, is_key in _walk_strings(record, ""):
        if is_key and text in FORBIDDEN_KEYS:
            reasons.append(f"{where}: forbidden key")
        elif is_key and text in ACCOUNT_KEYS:
            reasons.append(f"{where}: account key")
        else:
            reasons += [f"{where}: {problem}{' (key)' if is_key else ''}" for problem in scanned[text]]
    return reasons


def scrub_reasons(reasons: Iterable[str], secrets: Redactor) -> list[str]:
    """Refusal reasons with secrets and personal data redacted: they quote the values they refuse."""
    return [secrets.redact(reason).text for reason in reasons]
