"""A labeled corpus generated at run time: true tokens in each secret rule's documented format, and near-misses.

Nothing secret-shaped is written to the repository: every token is assembled from random characters here.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

import attrs

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
B32 = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"


@attrs.frozen
class Planted:
    """A true token: ``secret`` is the exact part the rule ``rule_id`` must report inside ``text``."""

    rule_id: str
    secret: str
    text: str


def _pick(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def _mixed(rng: random.Random, alphabet: str, length: int) -> str:
    """Random characters with at least two digits and two letters, like real generated tokens."""
    while True:
        value = _pick(rng, alphabet, length)
        if sum(char.isdigit() for char in value) >= 2 and sum(char.isalpha() for char in value) >= 2:
            return value


def _b64json(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    header = _b64json({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"})
    payload = _b64json({"sub": _pick(rng, string.digits, 8), "iat": rng.randrange(1_600_000_000, 1_800_000_000)})
    return f"{header}.{payload}.{_pick(rng, B64URL, 43)}"


def _private_key(rng: random.Random) -> str:
    label = rng.choice(["RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", ""])
    body = "\n".join(_pick(rng, ALNUM + "+/", 64) for _ in range(rng.randrange(3, 8)))
    begin, end = "-----BEGIN ", "-----END "
    return f"{begin}{label}PRIVATE KEY-----\n{body}\n{end}{label}PRIVATE KEY-----"


def _pgp_key(rng: random.Random) -> str:
    body = "\n".join(_pick(rng, ALNUM + "+/", 64) for _ in range(4))
    label = "PGP PRIVATE KEY BLOCK"
    return f"-----BEGIN {label}-----\n\n{body}\n=AbCd\n-----END {label}-----"


# rule id -> [(secret generator, context with {} where the secret goes)]
_GENERATORS: dict[str, list[tuple[Callable[[random.Random], str], str]]] = {
    "aws-access-key-id": [
        (lambda r: r.choice(["AK", "AS"]) + "IA" + _mixed(r, B32, 16), "aws_access_key_id = {}"),
        (lambda r: "AKIA" + _mixed(r, B32, 16), 'export AWS_ACCESS_KEY_ID="{}"'),
    ],
    "aws-secret-access-key": [
        (lambda r: _mixed(r, ALNUM + "/+", 40), "aws_secret_access_key = {}"),
        (lambda r: _mixed(r, ALNUM + "/+", 40), '"SecretAccessKey": "{}",'),
    ],
    "github-classic-token": [(lambda r: "gh" + r.choice("pousr") + "_" + _mixed(r, ALNUM, 36), "GITHUB_TOKEN={}")],
    "github-fine-grained-pat": [
        (lambda r: "github" + "_pat_" + _mixed(r, ALNUM, 22) + "_" + _mixed(r, ALNUM, 59), "token: {}"),
    ],
    "gitlab-token": [(lambda r: "gl" + r.choice(["pat", "dt", "rt"]) + "-" + _mixed(r, B64URL, 20), "GL={}")],
    "openai-api-key": [
        (lambda r: "sk-" + r.choice(["proj", "svcacct", "admin"]) + "-" + _mixed(r, B64URL, r.randrange(40, 160)),
         "OPENAI_API_KEY={}"),
        (lambda r: "sk-" + _mixed(r, ALNUM, 48), 'openai.api_key = "{}"'),
    ],
    "anthropic-api-key": [
        (lambda r: "sk-ant-" + r.choice(["api03", "admin01"]) + "-" + _mixed(r, B64URL, 93) + "AA",
         "x-api-key: {}"),
    ],
    "slack-token": [
        (lambda r: "xox" + r.choice("bpa") + "-" + _pick(r, string.digits, 11) + "-" + _pick(r, string.digits, 12)
         + "-" + _mixed(r, ALNUM, 24), "SLACK_TOKEN={}"),
    ],
    "slack-webhook-url": [
        (lambda r: "https://hooks.slack" + ".com/services/T" + _mixed(r, B32, 8) + "/B" + _mixed(r, B32, 10) + "/"
         + _mixed(r, ALNUM, 24), "webhook: {}"),
    ],
    "google-api-key": [(lambda r: "AI" + "za" + _mixed(r, B64URL, 35), "?key={}&q=1")],
    "stripe-secret-key": [
        (lambda r: r.choice(["sk", "rk"]) + "_" + r.choice(["live", "test"]) + "_"
         + _mixed(r, ALNUM, r.choice([24, 99])), 'Stripe.api_key = "{}"'),
    ],
    "huggingface-token": [(lambda r: "hf" + "_" + _mixed(r, ALNUM, 34), "HF_TOKEN={}")],
    "npm-token": [(lambda r: "npm" + "_" + _mixed(r, ALNUM, 36), "//registry.npmjs.org/:_authToken={}")],
    "pypi-token": [
        (lambda r: "pypi-" + "AgEIcHlwaS5vcmc" + _mixed(r, B64URL, r.randrange(60, 160)), "password: {}"),
    ],
    "sendgrid-api-key": [
        (lambda r: "SG." + _mixed(r, B64URL, 22) + "." + _mixed(r, B64URL, 43), "SENDGRID_API_KEY={}"),
    ],
    "twilio-api-key": [(lambda r: "S" + "K" + _mixed(r, HEX, 32), "TWILIO_KEY_SID={}")],
    "azure-storage-account-key": [
        (lambda r: _mixed(r, ALNUM + "+/", 86) + "==",
         "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core.windows.net"),
    ],
    "private-key-block": [(_private_key, "key = '''\n{}\n'''"), (_pgp_key, "{}")],
    "jwt": [(_jwt, "session={}; Path=/")],
    "url-credentials": [
        (lambda r: _pick(r, string.ascii_lowercase, 6) + ":" + _mixed(r, ALNUM, 14),
         "DATABASE_URL=postgres://{}@db.internal:5432/app"),
    ],
    "authorization-header": [(lambda r: _mixed(r, B64URL, 40), 'curl -H "Authorization: Bearer {}" https://api')],
    "generic-secret-assignment": [
        (lambda r: _mixed(r, ALNUM, r.randrange(16, 33)), 'db_password = "{}"'),
        (lambda r: _mixed(r, ALNUM, 24), "client_secret: {}"),
    ],
    "secret-assignment-head": [
        # a secret diluted by what follows it: the whole value's entropy is low, its head's is not
        (lambda r: _mixed(r, ALNUM, 24), "client_secret: {}=" + "0" * 30),
        (lambda r: _mixed(r, ALNUM, 20), 'api_key="{}=' + "ab" * 30 + '"'),
    ],
    "password-assignment": [
        # letters only: no entropy rule sees these, a password key's literal value is still a password
        (lambda r: _pick(r, string.ascii_lowercase, r.randrange(12, 25)), "password: {}"),
        (lambda r: _pick(r, string.ascii_letters, 16), "DB_PASSWORD={}"),
    ],
}

SECRET_RULES = tuple(sorted(_GENERATORS))


def planted(rule_id: str, rng: random.Random) -> Planted:
    generator, context = rng.choice(_GENERATORS[rule_id])
    secret = generator(rng)
    return Planted(rule_id, secret, context.format(secret))


def planted_tokens(seed: int = 0, per_rule: int = 3) -> list[Planted]:
    """``per_rule`` true tokens for every secret rule, deterministic for a seed."""
    rng = random.Random(seed)
    return [planted(rule_id, rng) for rule_id in SECRET_RULES for _ in range(per_rule)]


def near_misses(seed: int = 0) -> list[str]:
    """Texts that look like secrets or sit next to secret keywords but hold none."""
    rng = random.Random(seed)
    return [
        "aws_access_key_id = AK" + "IAIOSFODNN7EXAMPLE",
        "AKIA" + _pick(rng, B32, 15),
        "gh" + "p_" + _pick(rng, ALNUM, 30),
        "sk-" + _pick(rng, ALNUM, 20),
        "from huggingface_hub import hf_hub_download",
        "sk" + "_live_" + "abc",
        f"commit {_pick(rng, HEX, 40)}",
        f"request-id: {_pick(rng, HEX, 8)}-{_pick(rng, HEX, 4)}-{_pick(rng, HEX, 4)}-{_pick(rng, HEX, 12)}",
        f"sha256:{_pick(rng, HEX, 64)}",
        'password = os.environ["DB_PASSWORD"]',
        "token = None",
        "secret_key = settings.SECRET_KEY",
        "AccountKey=<your-account-key>",
        "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
        "eyJub3Rqc29u.eyJzdWIiOiIxMjM0In0.c2ln",
        "https://user@host.example.org/path",
        "postgres://app:${DB_PASSWORD}@db:5432/app",
        "S" + "K" + _pick(rng, "ghijklmnopqrstuvwxyz", 32),
        "Authorization: Bearer ${API_TOKEN}",
        "def get_token(self) -> str: return self._token",
        "password_hash = bcrypt.hashpw(password, salt)",
        "the token expires after 3600 seconds",
        f"data:image/png;base64,{_pick(rng, ALNUM + '+/', 120)}",
        "api_key: your_api_key_here",
    ]
