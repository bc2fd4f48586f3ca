"""Errors of the endpoint: each maps to an HTTP status and a JSON body with a clear message."""

from __future__ import annotations

from inference.errors import AntinomyError


class ServiceError(AntinomyError):
    """A request the endpoint refuses; ``status`` is the HTTP status it answers with."""

    status = 400
    kind = "invalid_request_error"


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


class MethodNotAllowed(ServiceError):
    status = 405


class PayloadTooLarge(ServiceError):
    status = 413


class UnsupportedMediaType(ServiceError):
    status = 415


class ServiceUnavailable(ServiceError):
    status = 503
    kind = "service_unavailable"


class EndpointError(AntinomyError):
    """The endpoint cannot start (port taken, no loopback address)."""
