"""Secret masking: applied to every captured turn before anything is written.

A tested pattern set rather than a library. ``detect-secrets`` (the obvious
candidate on PyPI) was looked at: its last release is from 2024-05, it pulls in
``requests``, and it is a line scanner for source files that reports findings
rather than masking spans; its entropy detectors would also mask ordinary git
hashes and checksums that people talk about. The patterns below cover what
conversations with coding assistants actually carry (tests/data/memory/
secrets.txt holds a realistic sample, and the tests grep the disk for each).

Each match is replaced by ``[secret:<kind>]``; for assignments and URLs only the
secret part is replaced, so the line still reads ("DB_PASSWORD=[secret:…]").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

_KEY_NAMES = (
    r"[A-Za-z0-9_.-]*(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|"
    r"access[_-]?key|private[_-]?key|client[_-]?secret|auth|credentials?|mot[_ ]de[_ ]passe)"
    r"[A-Za-z0-9_.-]*"
)

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
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+")),
    ("stripe-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("huggingface-token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36,}")),
    ("pypi-token", re.compile(r"\bpypi-[A-Za-z0-9_-]{50,}")),
    ("sendgrid-key", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}")),
    ("twilio-key", re.compile(r"\bSK[0-9a-f]{32}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("bearer-token", re.compile(r"(?i)(?<=bearer )[A-Za-z0-9._~+/=-]{16,}")),
    ("basic-auth", re.compile(r"(?i)(?<=authorization: basic )[A-Za-z0-9+/=]{12,}")),
    # scheme://user:password@host — only the password goes.
    ("url-password", re.compile(r"(?<=://)([^\s:/@\[\]]*:)[^\s@/\[\]]+(?=@)")),
    # KEY=value, key: value, "key": "value" (the value goes).
    (
        "assignment",
        re.compile(
            r"(?i)(?<![\[\w])(" + _KEY_NAMES + r")(\"?\s*[:=]\s*[\"']?)(?!\[)([^\s\"',;]{6,})"
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


#: An AWS access key id, as written or as already masked.
_AWS_KEY_ID = re.compile(
    r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b|\[secret:aws-access-key\]"
)
#: A bare 40-character token of the AWS secret-key alphabet (base64 without padding).
_BARE_40 = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
#: How far from the key id (characters, either side) its secret is looked for.
AWS_PAIR_WINDOW = 300


def mask_secrets(text: str) -> Masked:
    """``text`` with every recognised secret replaced by ``[secret:<kind>]``."""
    kinds: list[str] = []
    for kind, pattern in _PATTERNS:
        text = pattern.sub(_replacer(kind, kinds), text)
    text = _mask_bare_aws_secrets(text, kinds)
    return Masked(text, tuple(kinds))


def _mask_bare_aws_secrets(text: str, kinds: list[str]) -> str:
    """A secret access key written without its name ("my aws key is AKIA… and secret
    wJalr…", a console CSV line): 40 characters of high-entropy key material near an
    access key id. Only next to an id, so git hashes and checksums people talk about
    stay as they are (they are hex, lower case, and fail the mixed-case test anyway)."""
    ids = [m.span() for m in _AWS_KEY_ID.finditer(text)]
    if not ids:
        return text

    def near_id(start: int, end: int) -> bool:
        return any(
            start - AWS_PAIR_WINDOW <= id_end and id_start <= end + AWS_PAIR_WINDOW
            for id_start, id_end in ids
        )

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if not near_id(*match.span()) or not looks_random(token):
            return token
        kinds.append("aws-secret-key")
        return "[secret:aws-secret-key]"

    return _BARE_40.sub(replace, text)


def looks_random(token: str) -> bool:
    """Key material rather than a word or a hash: upper, lower case and digits mixed,
    and close to the entropy of random base64 (a random 40-character key scores ~4.9
    bits per character; English words and hex digests far less)."""
    if not (
        any(c.isupper() for c in token)
        and any(c.islower() for c in token)
        and any(c.isdigit() for c in token)
    ):
        return False
    counts = Counter(token)
    entropy = -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())
    return entropy >= 4.0


def _replacer(kind: str, found: list[str]) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        found.append(kind)
        if kind == "url-password":
            return f"{match.group(1)}[secret:{kind}]"
        if kind == "aws-secret-key":
            return f"{match.group(1)}[secret:{kind}]"
        if kind == "assignment":
            value = match.group(3)
            if _looks_like_placeholder(value):
                found.pop()
                return match.group(0)
            return f"{match.group(1)}{match.group(2)}[secret:password]"
        return f"[secret:{kind}]"

    return replace


_PLACEHOLDER = re.compile(
    r"(?i)^(?:<[^>]*>|\$\{?[A-Z_]+\}?|x+|\*+|\.\.\.|changeme|none|null|true|false|bearer|basic)$"
)


def _looks_like_placeholder(value: str) -> bool:
    """``PASSWORD=${DB_PASSWORD}`` or ``token: <your token>`` carry no secret."""
    return bool(_PLACEHOLDER.match(value))
