"""Secret masking: applied to every captured turn before anything is written.

Two layers. **Provider formats** first (the kind is named in the mask):
OpenAI, Anthropic, AWS, GitHub, GitLab, Slack, Stripe, Google, Hugging Face,
npm, PyPI, SendGrid, Mailgun, Twilio, Heroku, DigitalOcean, Discord, Telegram,
Shopify, Square, Databricks, Azure (``AccountKey=``, ``SharedAccessKey=``,
``sig=``), JWTs, bearer and basic credentials, private key blocks, passwords in
URLs and ``.env``-style assignments. Then **the generic rules** of
:mod:`.secret_rules`, for what no prefix names: a value after a secret-naming
word, Luhn-valid card numbers, mod-97-valid IBANs, long hex outside hash labels,
and high-entropy tokens.

A tested pattern set rather than a library. ``detect-secrets`` (the obvious
candidate on PyPI) was looked at: its last release is from 2024-05, it pulls in
``requests``, and it is a line scanner for source files that reports findings
rather than masking spans; its entropy detectors would also mask ordinary git
hashes and checksums that people talk about. tests/data/memory/secret_kinds.json
holds one realistic sample of each of 40 kinds, and the tests capture each through
the real capture paths and grep the disk for it.

Each match is replaced by ``[secret:<kind>]``; for assignments and URLs only the
secret part is replaced, so the line still reads ("DB_PASSWORD=[secret:…]").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from desktop.flows.memory.secret_rules import looks_random, mask_generic

__all__ = ["Masked", "looks_random", "mask_secrets"]

_KEY_NAMES = (
    r"[A-Za-z0-9_.-]*(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|"
    r"access[_-]?key|account[_-]?key|private[_-]?key|signing[_-]?key|client[_-]?secret|auth|"
    r"credentials?|mot[_ ]de[_ ]passe)"
    r"[A-Za-z0-9_.-]*"
)
_B64URL = r"[A-Za-z0-9_-]"

#: (kind, pattern). Order matters: whole-token formats first, then the generic ones.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private-key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.DOTALL,
        ),
    ),
    ("anthropic-key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b")),
    (
        "aws-secret-key",
        re.compile(r"(?i)(?<=aws_secret_access_key)(\s*[:=]\s*[\"']?)[A-Za-z0-9/+]{30,}"),
    ),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("gitlab-token", re.compile(r"\bgl(?:pat|dt|rt|ptt|soat)-[A-Za-z0-9_-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abeprs]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+")),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36,}")),
    ("pypi-token", re.compile(r"\bpypi-[A-Za-z0-9_-]{50,}")),
    ("sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}")),
    ("twilio-key", re.compile(r"\b(?:SK|AC)[0-9a-fA-F]{32}\b")),
    ("mailgun-key", re.compile(r"\bkey-[0-9a-zA-Z]{32}\b")),
    ("heroku-key", re.compile(r"\bHRKU-[A-Za-z0-9_-]{20,}")),
    ("digitalocean-token", re.compile(r"\bdo[opr]_v1_[0-9a-f]{64}\b")),
    (
        "discord-token",
        re.compile(rf"\b[MNO]{_B64URL}{{23,27}}\.{_B64URL}{{6}}\.{_B64URL}{{27,40}}(?!{_B64URL})"),
    ),
    ("telegram-token", re.compile(rf"\b\d{{8,10}}:AA{_B64URL}{{33}}(?!{_B64URL})")),
    ("shopify-token", re.compile(r"\bshp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}\b")),
    ("square-token", re.compile(rf"\bEAAA{_B64URL}{{60}}|\bsq0(?:atp|csp|idp)-{_B64URL}{{22,}}")),
    ("databricks-token", re.compile(r"\bdapi[0-9a-f]{32}(?:-\d+)?\b")),
    ("vault-token", re.compile(r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}")),
    ("age-key", re.compile(r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    # Azure storage and service-bus connection strings; SAS signatures in URLs.
    ("azure-key", re.compile(r"(?i)(?<=AccountKey=)[A-Za-z0-9+/]{16,}={0,2}")),
    ("azure-key", re.compile(r"(?i)(?<=SharedAccessKey=)[A-Za-z0-9+/]{16,}={0,2}")),
    ("url-signature", re.compile(r"(?i)(?<=[?&;\s]sig=)[A-Za-z0-9%+/=_-]{16,}")),
    ("url-signature", re.compile(r"(?i)(?<=-signature=)[A-Za-z0-9%]{16,}")),
    ("bearer-token", re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/=-]{16,}")),
    ("basic-auth", re.compile(r"(?i)(?<=authorization: basic )[A-Za-z0-9+/=]{12,}")),
    # scheme://user:password@host — only the password goes.
    ("url-password", re.compile(r"(?<=://)([^\s:/@\[\]]*:)[^\s@/\[\]]+(?=@)")),
    # KEY=value, key: value, "key": "value", ?password=… (the value goes).
    (
        "assignment",
        re.compile(
            r"(?i)(?<![\[\w])(" + _KEY_NAMES + r")(\"?\s*[:=]\s*[\"']?)(?!\[)([^\s\"',;&]{6,})"
        ),
    ),
    # "my password is hunter22", "le mot de passe est …", "la password è …".
    (
        "assignment",
        re.compile(
            r"(?i)\b(pass(?:word|phrase)|mot de passe|pwd)(\s+(?:is|est|è|was|=)\s+[\"']?)"
            r"(?!\[)([^\s\"',;]{6,})"
        ),
    ),
)


@dataclass(frozen=True)
class Masked:
    text: str
    #: How many secrets were replaced, by kind.
    kinds: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.kinds)


def mask_secrets(text: str) -> Masked:
    """``text`` with every recognised secret replaced by ``[secret:<kind>]``."""
    kinds: list[str] = []
    for kind, pattern in _PATTERNS:
        text = pattern.sub(_replacer(kind, kinds), text)
    text = mask_generic(text, kinds)
    return Masked(text, tuple(kinds))


def _replacer(kind: str, found: list[str]) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        if kind in ("url-password", "aws-secret-key"):
            if kind == "url-password" and _looks_like_placeholder(match.group(0).split(":")[-1]):
                return match.group(0)
            found.append(kind)
            return f"{match.group(1)}[secret:{kind}]"
        if kind == "assignment":
            key, sep, value = match.group(1), match.group(2), match.group(3)
            if not _holds_secret(key, sep, value):
                return match.group(0)
            found.append(kind)
            return f"{key}{sep}[secret:password]"
        found.append(kind)
        return f"[secret:{kind}]"

    return replace


_PLACEHOLDER = re.compile(
    r"(?i)^(?:<[^>]*>|\$\{?[A-Z_]+\}?|x+|\*+|\.\.\.|changeme|none|null|true|false|bearer|basic)$"
)
_SECRET_WORD = re.compile(
    r"(?i)pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"account[_-]?key|private[_-]?key|signing[_-]?key|auth|credentials?|mot[_ ]de[_ ]passe"
)
#: "the password is …" followed by one of these is prose about a password, not one.
_NOT_A_PASSWORD = frozenset(
    re.findall(
        r"\w+",
        """expired incorrect wrong required invalid correct missing empty reset changed weak
        strong stored hashed encrypted optional mandatory different shared compromised leaked
        rejected accepted protected needed ignored""",
    )
)


def _looks_like_placeholder(value: str) -> bool:
    """``PASSWORD=${DB_PASSWORD}`` or ``token: <your token>`` carry no secret."""
    return bool(_PLACEHOLDER.match(value))


def _holds_secret(key: str, sep: str, value: str) -> bool:
    """Whether ``key<sep>value`` gives a secret away.

    The key must name a secret as a word of it (``DB_PASSWORD``, ``apiKey``,
    ``Co-Auth``; not "passing" or "Co-Authored-By"); the value is not a placeholder
    nor a variable named after the key (``password=hashed_password``); and in prose,
    a plain word followed by a colon and a word of letters ("credentials: Cookies,
    headers", "tokens: `YYYY`") is a list, not an assignment.
    """
    bare = value.strip("`*_~()[]{}.,!?")
    if _looks_like_placeholder(bare) or not _names_a_secret(key):
        return False
    if _SECRET_WORD.search(bare) and re.fullmatch(r"[A-Za-z0-9_.]+", bare):
        return False  # a variable: password=hashed_password, token=self.token
    if key.lower() in ("password", "passphrase", "mot de passe", "pwd") and "=" not in sep:
        return bare.lower() not in _NOT_A_PASSWORD
    plain_key = re.fullmatch(r"[a-z]+", key) is not None
    return not (plain_key and ":" in sep and "=" not in sep and bare.isalpha())


def _names_a_secret(key: str) -> bool:
    for m in _SECRET_WORD.finditer(key):
        before, after = key[: m.start()], key[m.end() :]
        starts = (
            not before
            or before[-1] in "_.-"
            or key.isupper()
            or ((before[-1].islower() or before[-1].isdigit()) and key[m.start()].isupper())
        )
        ends = (
            not after
            or after[0] in "_.-0123456789"
            or key.isupper()
            or after[0].isupper()
            or re.fullmatch(r"e?s(?:[_.-].*|[A-Z].*)?", after) is not None
        )
        if starts and ends:
            return True
    return False
