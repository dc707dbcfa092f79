"""Tokens generated at run time (``secrets``) and the ways real output embeds them: terminal colours, JSON
escapes, double encoding, query strings, shell, YAML, XML. Nothing secret-shaped is stored in the repository.
"""

from __future__ import annotations

import json
import secrets
import string
import urllib.parse
from collections.abc import Callable

B32 = string.ascii_uppercase + "234567"


def _choice(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


#: token kinds that identify themselves (no key needed): rule id -> generator
TOKENS: dict[str, Callable[[], str]] = {
    "github-classic-token": lambda: "gh" + "p_" + secrets.token_hex(18),
    "openai-api-key": lambda: "sk-" + "proj-" + secrets.token_urlsafe(40).replace("-", "x"),
    "aws-access-key-id": lambda: "AK" + "IA" + _choice(B32, 16),
    "slack-token": lambda: "xo" + "xb-" + _choice(string.digits, 11) + "-" + secrets.token_hex(12),
    "stripe-secret-key": lambda: "sk" + "_live_" + secrets.token_hex(16),
    "npm-token": lambda: "npm" + "_" + secrets.token_hex(18),
}


def _full_width(text: str) -> str:
    """ASCII letters, digits and punctuation as their full-width forms (U+FF01..U+FF5E)."""
    return "".join(chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char for char in text)


def _thirds(token: str) -> tuple[str, str, str]:
    third = len(token) // 3
    return token[:third], token[third:2 * third], token[2 * third:]


def _ansi(code: str) -> Callable[[str], str]:
    return lambda token: f"\x1b[{code}m{token}\x1b[0m"


def _double_json(token: str) -> str:
    return json.dumps(json.dumps({"note": "first\nsecond", "token": token}))


def _percent_json(token: str) -> str:
    return "https://api.internal.io/v1/search?q=" + urllib.parse.quote(json.dumps({"auth": token}))


#: how the token appears in the output: name -> text holding the token
EMBEDDINGS: dict[str, Callable[[str], str]] = {
    "ansi-colour-before": lambda token: f"\x1b[32m{token}",
    "ansi-colour-around": _ansi("1;31"),
    "ansi-256-colour": _ansi("38;5;196"),
    "ansi-truecolour": _ansi("38;2;255;0;0"),
    "ansi-reset-after": lambda token: f"{token}\x1b[0m trailing",
    "ansi-key-and-value": lambda token: f"\x1b[33mtoken\x1b[0m=\x1b[32m{token}\x1b[0m",
    "ansi-osc-hyperlink": lambda token: f"\x1b]8;;https://ci.internal.io/run\x1b\\{token}\x1b]8;;\x1b\\",
    "ansi-written-as-backslash-e": lambda token: f'echo -e "\\e[32m{token}\\e[0m"',
    "ansi-written-as-octal": lambda token: f"printf '\\033[1m{token}\\033[0m\\n'",
    "ansi-written-as-hex": lambda token: f'print("\\x1b[31m{token}")',
    "ansi-written-as-json-unicode": lambda token: '{"line": "\\u001b[32m' + token + '\\u001b[0m"}',
    "json-escaped-newline": lambda token: '{"log": "line one\\n' + token + '\\nline two"}',
    "json-escaped-tab": lambda token: '{"row": "name\\t' + token + '\\tok"}',
    "json-escaped-carriage-return": lambda token: '"progress 100%\\r' + token + '"',
    "json-escaped-quotes": lambda token: '{"body": "{\\"token\\":\\"' + token + '\\"}"}',
    "json-unicode-quote": lambda token: "\\u0022" + token + "\\u0022",
    "json-double-encoded": _double_json,
    "json-in-url-query": _percent_json,
    "url-query-string": lambda token: f"GET https://api.internal.io/v1/items?user=a&token={token}&x=1",
    "shell-export": lambda token: f"export GH_TOKEN={token}",
    "shell-export-json-escaped": lambda token: '{"command": "export GH_TOKEN=\\"' + token + '\\" && make"}',
    "yaml-value": lambda token: f"env:\n  - name: GH_TOKEN\n    value: '{token}'",
    "xml-attribute": lambda token: f'<credential kind="api" token="{token}"/>',
    "xml-text": lambda token: f"<token>{token}</token>",
    "python-bytes-repr": lambda token: repr(b"\n" + token.encode() + b"\x00"),
    "logfmt": lambda token: f'level=info token={token} msg="deployed"',
    "token-split-by-ansi": lambda token: f"{token[:12]}\x1b[0m{token[12:]}",
    "double-escaped-newline": lambda token: "\\\\n" + token,
    "zero-width-space-inside": lambda token: f"{token[:10]}\u200b{token[10:]}",
    "soft-hyphen-and-joiner-inside": lambda token: "\u00ad".join(_thirds(token)[:2]) + "\u2060" + _thirds(token)[2],
    "full-width-letters": lambda token: _full_width(token),
    "bom-before": lambda token: f"x\ufeff{token}",
}

#: embeddings where the token is no longer one substring of the text: the oracle checks its pieces instead
SPLIT: dict[str, Callable[[str], tuple[str, ...]]] = {
    "token-split-by-ansi": lambda token: (token[:12], token[12:]),
    "zero-width-space-inside": lambda token: (token[:10], token[10:]),
    "soft-hyphen-and-joiner-inside": _thirds,
    "full-width-letters": lambda token: (_full_width(token), token),
}

BEFORE, AFTER = "deploy started for service api", "deploy finished in 4s"


def embedded(embedding: str, token: str) -> str:
    """The embedding of ``token`` between two lines of ordinary context."""
    return f"{BEFORE}\n{EMBEDDINGS[embedding](token)}\n{AFTER}"


def pieces(embedding: str, token: str) -> tuple[str, ...]:
    """What must not appear in the output: the token, or both of its pieces when the embedding splits it."""
    split = SPLIT.get(embedding)
    return split(token) if split is not None else (token,)
