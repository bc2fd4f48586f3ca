"""The generic secret rules: what a secret looks like when no provider prefix names it.

:mod:`.secrets` masks the known provider formats first; these rules catch the
rest, by shape rather than by name:

- **a secret-naming word before a value** ("datadog api key 6dfd…", "the heroku
  api key 01c8…-…", "password Blu3…"): up to three small words ("is", "for
  the", ":") between them; after "password" the value needs 6+ characters with a
  digit, after the other words it must look like key material (a UUID, 16+ hex,
  or 12+ random-looking letters and digits); never a date, a version or a URL;
- **checksummed numbers**: 13–19 digits starting 2–6 (card networks), plain or in
  groups of four (or 4-6-5), that pass the Luhn check; IBANs (two letters, two
  check digits, 11–30 letters and digits, grouped or not) that pass mod-97;
- **long hex**: 32+ hex digits holding letters and digits — unless a hash label
  comes in the 40 characters before it ("commit 3f2a…", "sha256:…", "the md5 of the
  tarball is …") and no secret-naming word does, so the commit hashes and checksums
  people talk about stay; short hashes ("commit abc1234") and hex that makes up a
  part of a link's path (``…/commit/3f2a…``, a shared video's id) are not touched;
- **high-entropy tokens**: 24+ characters of the base64 alphabet with the mix of
  classes, the entropy and the absence of words of random key material
  (:func:`looks_random`; camelCase names fail it), judged part by part in paths
  and URLs, so only the random part of a link is masked.

UUIDs written in prose ("request 3f9c2b7e-…") are left alone: they name things
more often than they unlock them; after a secret-naming word they are masked.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable

#: A masked span, left as it is by every rule.
MASK = re.compile(r"\[secret:[a-z0-9-]+\]")

_SMALL_WORDS = (
    r"is|was|are|were|=|:|for|of|the|my|our|your|a|an|its|it's|now|here|being|to|be|set|as|"
    r"api|app|bot|auth|access|account|prod|production|staging|dev|test|new|old|live|value|"
    r"string|id|in|this|that|which|-|->|=>|equals"
)
_PASSWORD_WORDS = r"pass(?:word|wd|phrase)s?|pwd|mot de passe|passwort|contraseña"
#: A secret-naming word, small words, then the value (group 3).
_NAMED_VALUE = re.compile(
    r"(?i)\b(" + _PASSWORD_WORDS + r"|secrets?|tokens?|keys?|api[_-]?keys?|apikeys?|"
    r"credentials?|creds|auth)\b"
    r"((?:\s*(?:" + _SMALL_WORDS + r")\b|\s*[:=]|\s*->|\s*=>){0,3}[\s:=\"'`]+)"
    r"(?!\[secret:)([^\s\"'`,;<>()\[\]{}]{6,})"
)
_PASSWORD_WORD = re.compile(r"(?i)" + _PASSWORD_WORDS)
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_DATE_OR_VERSION = re.compile(
    r"(?i)^(?:v?\d+(?:[.-]\d+)+(?:[-+.]?[a-z]+\.?\d*)*|\d{4}-\d{2}-\d{2}(?:[t ][\d:.]+)?z?"
    r"(?:[+-]\d{2}:?\d{2})?|\d{1,2}[:/.]\d{2}(?:[:/.]\d{2,4})?)$"
)
_PLACEHOLDER = re.compile(
    r"(?i)^(?:<[^>]*>|\$\{?[A-Z_]+\}?|\{\{[^}]*\}\}|%[A-Z_]+%|x+|\*+|\.\.\.|changeme|"
    r"none|null|true|false|bearer|basic|redacted|hidden|example|placeholder)$"
)

_CARD = re.compile(
    r"(?<![\w.,/-])(?:[2-6]\d{3}(?:[ -]\d{4}){2}[ -]\d{1,7}|[2-6]\d{3}[ -]\d{6}[ -]\d{5}|"
    r"[2-6]\d{12,18})(?![\w/-]|[.,]\d)"
)
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b")
_HEX = re.compile(r"(?<![A-Za-z0-9+/])[0-9a-fA-F]{32,}(?![A-Za-z0-9+/_-])")
#: Words that say a hex string is a hash, not a credential (in the 40 characters before it).
_HASH_LABEL = re.compile(
    r"(?i)(?:\b(?:commits?|sha(?:1|224|256|384|512)?|md5|hash(?:es)?|checksums?|digests?|"
    r"rev(?:ision)?s?|tree|blob|objects?|merge|cherry-pick|revert|fixup|squash|tag|etag|"
    r"fingerprint|integrity|build|release|snapshot|image|layer|manifest|git|diff)\b)"
)
_SECRET_NEAR = re.compile(r"(?i)pass|pwd|secret|token|key|auth|credential|login|bearer")
_WORD_PART = re.compile(r"[A-Z]?[a-z]{2,}")
_VOWEL = re.compile(r"[aeiouy]")
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9+/=_.-])[A-Za-z0-9+/_-][A-Za-z0-9+/_.-]{22,}[A-Za-z0-9+/_-]={0,2}"
)


def looks_random(token: str) -> bool:
    """Key material rather than a word, a name, a path or a hash.

    Mixed case (20+ letters and digits): not made of words (camelCase parts of 4+
    letters with a vowel hold under 65 % of its letters — ``ConvertOneNote2MarkDown``
    has 83 %, random key material rarely over 60 %); classes (upper, lower, digit)
    changing every 3 characters or sooner on average; the Shannon entropy of random
    text of its length. Without digits, stricter: under 40 % in word parts, a class
    change every 2.5 characters. Lower case and digits only (no separators): 32+
    characters, digits in four or more places, under 40 % vowels among the letters
    (words have more). Hex (85 % of it or more) is the hex rule's to judge.
    """
    core = token.strip("=")
    alnum = "".join(c for c in core if c.isalnum())
    n = len(alnum)
    hex_share = sum(c in "0123456789abcdefABCDEF" for c in alnum) / max(n, 1)
    if n < 20 or hex_share >= 0.85:
        return False  # hex, or nearly (a diff anchor): the hex rule decides
    if _entropy(core) < min(4.0, 0.8 * math.log2(len(core))):
        return False
    upper = any(c.isupper() for c in alnum)
    lower = any(c.islower() for c in alnum)
    digits = sum(c.isdigit() for c in alnum)
    if upper and lower:
        if digits == 0:  # letters only: no word in it at all
            return _wordy(core) < 0.4 and _mean_run(alnum) <= 2.5
        return _mean_run(alnum) <= 3.0 and _wordy(core) < 0.65
    if lower and not upper and n >= 32 and core.isalnum():
        letters = [c for c in core if c.isalpha()]
        vowels = sum(c in "aeiouy" for c in letters) / len(letters)
        return len(re.findall(r"\d+", core)) >= 4 and vowels < 0.4
    return False


def token_like(word: str) -> bool:
    """A word that is a credential or an id, never a name: masked text, long hex, key
    material, or 12+ characters with digits in three or more places ("Zp3Kq8Lm2N…")."""
    w = word.strip(".,;:!?'\"()")
    if "[secret" in w or "secret:" in w:
        return True
    if len(w) >= 16 and re.fullmatch(r"[0-9a-fA-F-]+", w) and re.search(r"\d", w):
        return True
    if len(w) >= 12 and len(re.findall(r"\d+", w)) >= 3 and re.search(r"[A-Za-z]", w):
        return True
    return looks_random(w)


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def iban_valid(iban: str) -> bool:
    compact = iban.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def mask_generic(text: str, found: list[str]) -> str:
    """Apply the generic rules, in order, outside spans already masked."""
    for rule in (_named_values, _cards, _ibans, _long_hex, _random_tokens):
        text = _outside_masks(text, rule, found)
    return text


def _named_values(text: str, found: list[str]) -> str:
    def replace(m: re.Match[str]) -> str:
        word, gap, value = m.group(1), m.group(2), m.group(3)
        value = value.rstrip(".!?")
        tail = m.group(3)[len(value) :]
        if not _secret_value(value, password=bool(_PASSWORD_WORD.fullmatch(word))):
            return m.group(0)
        found.append("password" if _PASSWORD_WORD.fullmatch(word) else "named-secret")
        kind = found[-1]
        return f"{word}{gap}[secret:{kind}]{tail}"

    return _NAMED_VALUE.sub(replace, text)


def _secret_value(value: str, *, password: bool) -> bool:
    bare = value.strip("*_~")
    if _PLACEHOLDER.match(bare) or "://" in bare or MASK.search(bare):
        return False
    if _DATE_OR_VERSION.match(bare):
        return False
    if _UUID.fullmatch(bare):
        return True
    if password:
        # "the password is hunter22", "password Blu3Fl4mingo!" (a word alone is prose).
        return len(bare) >= 6 and any(c.isdigit() for c in bare)
    return _keyish(bare)


def _keyish(value: str) -> bool:
    """Shorter key material after a secret-naming word: 12+ letters and digits, random-looking."""
    alnum = "".join(c for c in value if c.isalnum())
    if len(alnum) < 12:
        return False
    if re.fullmatch(r"[0-9a-fA-F]+", alnum):
        return len(alnum) >= 16 and not alnum.isdigit() and not alnum.isalpha()
    digits = sum(c.isdigit() for c in alnum)
    return (
        digits >= 2
        and any(c.isalpha() for c in alnum)
        and _wordy(value) < 0.65
        and _entropy(value) >= 3.3
    )


def _cards(text: str, found: list[str]) -> str:
    def replace(m: re.Match[str]) -> str:
        digits = re.sub(r"[ -]", "", m.group(0))
        if not 13 <= len(digits) <= 19 or not luhn_valid(digits):
            return m.group(0)
        found.append("payment-card")
        return "[secret:payment-card]"

    return _CARD.sub(replace, text)


def _ibans(text: str, found: list[str]) -> str:
    def replace(m: re.Match[str]) -> str:
        if not iban_valid(m.group(0)):
            return m.group(0)
        found.append("iban")
        return "[secret:iban]"

    return _IBAN.sub(replace, text)


def _long_hex(text: str, found: list[str]) -> str:
    def replace(m: re.Match[str]) -> str:
        token = m.group(0)
        if not (re.search(r"\d", token) and re.search(r"[a-fA-F]", token)):
            return token
        before = text[max(0, m.start() - 40) : m.start()]
        if _HASH_LABEL.search(before) and not _SECRET_NEAR.search(before):
            return token
        found.append("hex-token")
        return "[secret:hex-token]"

    return _HEX.sub(replace, text)


def _random_tokens(text: str, found: list[str]) -> str:
    def replace(m: re.Match[str]) -> str:
        token = m.group(0)
        # Key material may hold a few / + - _ (base64); a path or a URL holds many.
        if len(re.findall(r"[./]", token)) <= max(2, len(token) // 10) and looks_random(token):
            found.append("high-entropy")
            return "[secret:high-entropy]"
        # A path or a dotted name: each part is judged alone, and only it is masked.
        parts = re.split(r"([./])", token)
        for i in range(0, len(parts), 2):
            if looks_random(parts[i]):
                found.append("high-entropy")
                parts[i] = "[secret:high-entropy]"
        return "".join(parts)

    return _TOKEN.sub(replace, text)


def _outside_masks(text: str, rule: Callable[[str, list[str]], str], found: list[str]) -> str:
    out: list[str] = []
    last = 0
    for m in MASK.finditer(text):
        out.append(rule(text[last : m.start()], found))
        out.append(m.group(0))
        last = m.end()
    out.append(rule(text[last:], found))
    return "".join(out)


def _entropy(token: str) -> float:
    counts = Counter(token)
    n = len(token)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def _wordy(token: str) -> float:
    """The share of its letters in word-like parts: 4+ letters, a vowel after the first."""
    letters = sum(c.isalpha() for c in token)
    in_words = sum(
        len(w) for w in _WORD_PART.findall(token) if len(w) >= 4 and _VOWEL.search(w[1:])
    )
    return in_words / max(letters, 1)


def _mean_run(token: str) -> float:
    """Average length of runs of one character class (upper, lower, digit, other)."""

    def cls(c: str) -> int:
        return 0 if c.isupper() else 1 if c.islower() else 2 if c.isdigit() else 3

    runs = 1 + sum(1 for a, b in itertools.pairwise(token) if cls(a) != cls(b))
    return len(token) / runs
