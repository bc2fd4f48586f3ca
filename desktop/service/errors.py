"""Errors of the endpoint: each maps to an HTTP status and a JSON body with a clear message."""

from __future__ import annotations

from foundation.errors import AntinomyError


class ServiceError(AntinomyError):
    """A request the endpoint refuses; ``status`` is the HTTP status it answers with.

    ``code`` goes in the error body's ``code`` (the status when None); ``headers`` are
    added to the answer."""

    status = 400
    kind = "invalid_request_error"
    code: str | None = None
    headers: tuple[tuple[str, str], ...] = ()

    def ollama_message(self) -> str:
        """The text of this error in Ollama's shape, ``{"error": "..."}``."""
        return str(self)


class BadRequest(ServiceError):
    """The body is not what the route expects (400)."""


class Unauthorized(ServiceError):
    status = 401
    kind = "authentication_error"


class Forbidden(ServiceError):
    status = 403
    kind = "permission_error"


class NotFound(ServiceError):
    status = 404
    kind = "not_found_error"


class ModelNotFound(NotFound):
    """A model this endpoint does not serve, in OpenAI's words (``code``
    ``model_not_found``) or Ollama's (:meth:`ollama_message`)."""

    kind = "invalid_request_error"
    code = "model_not_found"

    def __init__(self, requested: str, served: str, aliases: tuple[str, ...]) -> None:
        also = f" (also called {', '.join(aliases)})" if aliases else ""
        super().__init__(
            f"The model `{requested}` does not exist or you do not have access to it. "
            f"This endpoint serves {served}{also}."
        )
        self.requested = requested

    def ollama_message(self) -> str:
        return f'model "{self.requested}" not found, try pulling it first'


class MethodNotAllowed(ServiceError):
    status = 405


class PayloadTooLarge(ServiceError):
    status = 413


class UnsupportedMediaType(ServiceError):
    status = 415


class ServiceUnavailable(ServiceError):
    status = 503
    kind = "service_unavailable"

    def __init__(self, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        if retry_after is not None:
            self.headers = (("retry-after", str(retry_after)),)


class EndpointError(AntinomyError):
    """The endpoint cannot start (port taken, no loopback address)."""
