"""The one redaction of secrets in text that replan records or prints.

API keys and tokens reach error messages (a provider echoing the key), configurations (a key
inside ``--base-url http://user:sk-...@host/v1``) and logs (a client logging the URL it calls).
:func:`redact` masks them all: values of environment variables named like keys, the known key
shapes, ``Bearer``/``api_key=`` labels, and the credentials of any URL: its userinfo
(``user:key@``) and every query parameter named like a secret (``?key=``,
``?subscription-key=``, ``&sig=`` ...). Everything that
stores or prints a model spec, a configuration or an error goes through it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from replan.core import linre

#: the user:password part of a URL (``scheme://user:key@host``), whatever the key looks like
_URL_CREDENTIALS = linre.compile(r"(?i)\b([a-z][a-z0-9+.\-]{0,15}://)[^\s/@?#\"'<>]+@")

_SECRET_PATTERNS = [
    _URL_CREDENTIALS,
    linre.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{8,}"),
    linre.compile(r"\blsv2_[A-Za-z0-9_]{8,}"),
    linre.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    linre.compile(r"\b(?:gh[pousr]|hf)_[A-Za-z0-9]{16,}"),
    linre.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{8,}"),
    linre.compile(
        r"(?i)((?:api[_-]?key|token|secret|password)[\"']?\s*[:=]\s*[\"']?)[^\s\"',}]{6,}"
    ),
]
_SECRET_ENV = linre.compile(r"(?i)(KEY|TOKEN|SECRET|PASSWORD)")
#: a URL query parameter (``?name=value`` or ``&name=value``): the name is bounded, the value
#: runs to the next separator, so the scan is linear in the text
_QUERY_PARAM = linre.compile(r"([?&;][A-Za-z0-9_.\-\[\]%]{1,64}=)([^&#;\s\"'<>]+)")
#: a query parameter name that suggests a secret (``key``, ``subscription-key``, ``sig``,
#: ``access_token``, ``client_secret``, ``pwd``, ``X-Amz-Credential`` ...)
_SECRET_PARAM = linre.compile(r"(?i)key|token|secret|pass|pwd|auth|sig|credential|session")


def redact(text: str) -> str:
    """``text`` with API keys and other secrets masked (environment values and known shapes)."""
    if not text:
        return text
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_ENV.search(name) and value in text:
            text = text.replace(value, "***")
    for pat in _SECRET_PATTERNS:
        text = pat.sub(_mask, text)
    return _QUERY_PARAM.sub(_mask_query_param, text)


def redact_url(text: str) -> str:
    """``text`` with only the credentials inside URLs masked (the userinfo, and the value of
    every query parameter named like a secret): unlike :func:`redact` it does not depend on the
    environment, so what it returns can be hashed into a stable identity."""
    if not text:
        return text
    return _QUERY_PARAM.sub(_mask_query_param, _URL_CREDENTIALS.sub(_mask, text))


def redact_value(value: Any, redactor: Callable[[str], str] = redact) -> Any:
    """``value`` (a config: dicts, lists, strings) with ``redactor`` applied to every string."""
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, dict):
        return {k: redact_value(v, redactor) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, redactor) for v in value]
    return value


#: loggers of the HTTP clients under the model and LangSmith clients, which log the URLs they call
URL_LOGGERS = (
    "httpx",
    "httpx2",  # the fork recent openai clients use
    "httpcore",
    "httpcore2",
    "openai._base_client",
    "anthropic._base_client",
    "urllib3.connectionpool",
    "langsmith.client",
)


class RedactingFilter(logging.Filter):
    """A logging filter that passes every record on with :func:`redact` applied to its text."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            text = record.getMessage()
        except Exception:  # a malformed record is logging's business, not ours
            return True
        masked = redact(text)
        if masked != text:
            record.msg, record.args = masked, None
        return True


_FILTER = RedactingFilter()


def redact_logs(names: tuple[str, ...] = URL_LOGGERS) -> None:
    """Install :class:`RedactingFilter` on the loggers that print URLs (once; idempotent), so a
    key inside a ``base_url`` never reaches a log, whoever configures the handlers."""
    for name in names:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


def _mask_query_param(match: linre.Match) -> str:
    """``?key=***``: the value of a query parameter whose name suggests a secret."""
    name = match.group(1)
    if not _SECRET_PARAM.search(name) or match.group(2) == "***":
        return match.group(0)
    return name + "***"


def _mask(match: linre.Match) -> str:
    """Keep a pattern's label group (``Bearer ``, ``api_key=``, ``https://``), mask the secret."""
    masked = (match.group(1) if match.re.groups else "") + "***"
    return masked + "@" if match.group(0).endswith("@") else masked


__all__ = ["URL_LOGGERS", "RedactingFilter", "redact", "redact_logs", "redact_url", "redact_value"]
