"""The endpoint's defences: bearer token, loopback ``Host``, no foreign ``Origin``.

* **Token.** One per install, 32 random bytes, created on first run in
  ``<config dir>/endpoint-token`` with mode 0600 (the folder 0700). The hook
  client reads the same file. A file readable by others is tightened, not
  trusted blindly; a link or anything but a regular file there is refused.
* **Host.** A web page can make a browser send requests to ``127.0.0.1`` under
  a DNS name it controls (DNS rebinding); such a request carries that name in
  ``Host``. Only ``127.0.0.1:PORT``, ``[::1]:PORT`` and ``localhost:PORT`` pass.
* **Origin.** Browsers send ``Origin`` on cross-site requests; anything but the
  endpoint's own loopback origin is refused (CLI clients send none).
* **Open embeddings** (opt-in): the embedding routes without the token, for clients
  that cannot send one; Host and Origin are checked all the same.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import re
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from desktop.service.errors import BadRequest, EndpointError, Forbidden, Unauthorized
from foundation import atomic
from foundation.paths import config_dir

log = logging.getLogger(__name__)

TOKEN_FILE = "endpoint-token"
#: Never follow a link at the token's path (Windows has no such flag).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
LOOPBACK_NAMES = ("127.0.0.1", "[::1]", "localhost")

#: The endpoint proves it holds the token before the hook sends anything: the hook
#: asks ``GET /v1/hello`` with a fresh random nonce in ``X-Antinomy-Nonce`` and checks
#: ``proof`` = HMAC-SHA256(token, "antinomy-endpoint-proof/1 port=<port> nonce=<nonce>").
#: The port is in the message, so a squatter on another port cannot relay the
#: question to the real endpoint and replay its answer. desktop/service/hook.py
#: computes the same (it cannot import this module: it runs without site-packages).
PROOF_PATH = "/v1/hello"
PROOF_SCHEME = "hmac-sha256/1"
NONCE_HEADER = "x-antinomy-nonce"
_NONCE = re.compile(r"[A-Za-z0-9_-]{16,128}")
#: Served without the token when the endpoint runs with ``open_embeddings`` (opt-in:
#: ``antinomy serve --open-embeddings``), for clients that cannot send one — Ollama's
#: own client sends none unless ``OLLAMA_API_KEY`` is set. Embeddings and which model
#: is served only: recall, capture and the guard always need the token.
OPEN_EMBEDDING_PATHS = frozenset(
    {"/v1/embeddings", "/api/embed", "/api/embeddings", "/v1/models", "/api/tags", "/api/version"}
)


def proof_message(port: int, nonce: str) -> bytes:
    return f"antinomy-endpoint-proof/1 port={port} nonce={nonce}".encode("ascii")


class TokenFileUnsafe(EndpointError):
    """The token file is a link or not a regular file: it is neither used nor changed."""


def token_path() -> Path:
    return config_dir() / TOKEN_FILE


def load_or_create_token(path: Path | None = None) -> str:
    """The install's bearer token, created (0600) on first use. Any thread.

    The file is opened without following a link (``O_NOFOLLOW``) and checked on the
    open descriptor: a link or anything but a regular file there is refused
    (:class:`TokenFileUnsafe`), never read, tightened or replaced.
    """
    path = path or token_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):  # a folder we do not own: the file mode still protects
        os.chmod(path.parent, 0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        token = _read_token(path)
        if len(token) >= 32:
            return token
        # An empty or truncated file (a crash mid-write): make a new token. The rename
        # replaces the file checked above, whatever is at the path now; it follows no link.
        token = secrets.token_urlsafe(32)
        atomic.write_text(path, token + "\n", mode=atomic.PRIVATE_MODE)
        return token
    token = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(token + "\n")
    return token


def _read_token(path: Path) -> str:
    """The token in an existing file, tightened to 0600 on the open file; may be short."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        if path.is_symlink():
            raise TokenFileUnsafe(
                f"The endpoint token file {path} is a symbolic link to {os.readlink(path)}."
                " Antinomy keeps its token in a file of its own and does not follow a link"
                " there; nothing was read or changed — remove the link, and a new token is"
                " made on the next start."
            ) from None
        raise
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TokenFileUnsafe(
                f"The endpoint token file {path} is not a regular file — move it away, and a"
                " new token is made on the next start."
            )
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            log.warning("%s was readable by others (mode %o); now 0600", path, mode)
            os.fchmod(fd, 0o600)
        try:
            return f.read(4096).decode("utf-8").strip()
        except UnicodeDecodeError:
            return ""  # not a token this install wrote: replaced like a truncated one


@dataclass(frozen=True)
class Guardrails:
    """Which requests get past the front door. Immutable; safe from any thread."""

    port: int
    token: str
    #: Largest request body accepted (bytes).
    max_body: int = 2 * 1024 * 1024
    #: Most texts in one embeddings request.
    max_batch: int = 256
    #: Serve :data:`OPEN_EMBEDDING_PATHS` without the token.
    open_embeddings: bool = False

    def needs_token(self, path: str) -> bool:
        return not (self.open_embeddings and path in OPEN_EMBEDDING_PATHS)

    @property
    def allowed_hosts(self) -> frozenset[str]:
        return frozenset(f"{name}:{self.port}" for name in LOOPBACK_NAMES)

    @property
    def allowed_origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.allowed_hosts)

    def prove(self, nonce: str) -> str:
        """The answer to the hook's challenge (see :data:`PROOF_PATH`)."""
        if not _NONCE.fullmatch(nonce):
            raise BadRequest(
                f"Send a nonce of 16–128 letters, digits, '-' or '_' in the {NONCE_HEADER} "
                "header to get the endpoint's proof."
            )
        return hmac.new(
            self.token.encode("utf-8"), proof_message(self.port, nonce), hashlib.sha256
        ).hexdigest()

    def check_host(self, headers: Mapping[str, str]) -> None:
        host = headers.get("host", "").strip().lower()
        if not host or host not in self.allowed_hosts:
            shown = host or "(none)"
            raise Forbidden(
                f"Host {shown!r} is refused: this endpoint answers only to "
                f"127.0.0.1:{self.port}, [::1]:{self.port} or localhost:{self.port}."
            )

    def check_origin(self, headers: Mapping[str, str]) -> None:
        origin = headers.get("origin")
        if origin is not None and origin.strip().lower() not in self.allowed_origins:
            raise Forbidden(
                f"Origin {origin!r} is refused: web pages may not call the local endpoint."
            )

    def holds_token(self, authorization: str) -> bool:
        """Does this ``Authorization`` header value carry the endpoint's token?"""
        scheme, _, given = authorization.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode("utf-8", "replace"), self.token.encode()
        )

    def check_token(self, headers: Mapping[str, str]) -> None:
        value = headers.get("authorization", "")
        if not value:
            raise Unauthorized(
                "Missing bearer token: send 'Authorization: Bearer <token>' with the token "
                f"from {token_path()}."
            )
        if not self.holds_token(value):
            raise Unauthorized(f"Wrong bearer token: use the token in {token_path()}.")
