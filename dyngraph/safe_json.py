"""Reading JSON that came from somewhere else (a saved recording, an exported graph), strictly.

One place for the checks every loader of untrusted files needs, in the order that keeps each
one cheap and safe: the file size before reading; pickle / npy / npz files refused outright
(dyngraph never unpickles); UTF-8; the nesting depth before parsing (so a deep file cannot cause
a RecursionError); then, while parsing, NaN / Infinity tokens, duplicate keys and numbers too
large to mean anything. Every refusal is a ValueError naming the JSON path (``$.nodes[3]``).
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

MAX_INT_DIGITS = 18

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def read(path: Any, what: str, max_bytes: int, max_depth: int) -> Any:
    """The parsed JSON document in the file at ``path`` (``what`` names the kind of file)."""
    path = os.fspath(path)
    size = os.path.getsize(path)
    if size > max_bytes:
        raise ValueError(f"{path} is {size} bytes, over the {max_bytes}-byte limit for {what}s")
    with open(path, "rb") as f:
        raw = f.read(max_bytes + 1)
    return parse(raw, what, max_depth, source=path)


def parse(raw: bytes | str, what: str, max_depth: int, source: str = "<string>") -> Any:
    """Parse JSON text with every check but the size (see the module docstring)."""
    if isinstance(raw, bytes):
        if raw[:1] == b"\x80" or raw[:4] == b"PK\x03\x04" or raw[:6] == b"\x93NUMPY":
            raise ValueError(
                f"{source} is not a {what} (it looks like a pickle, npy or npz file; dyngraph "
                "never loads pickles)"
            )
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{source} is not a {what}: not UTF-8 ({exc})") from None
    check_depth(raw, max_depth, what)
    try:
        document = json.loads(
            raw,
            object_pairs_hook=_mark_duplicate_keys,
            parse_constant=_refuse_constant,
            parse_int=_parse_int,
            parse_float=_parse_float,
        )
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source} is not a {what}: invalid JSON ({exc})") from None
    _reject_marked_values(document)
    return document


def check_depth(text: str, max_depth: int, what: str) -> None:
    """Refuse nesting deeper than ``max_depth`` before the parser recurses into it."""
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub('""', text)):
        if match.group() in "[{":
            depth += 1
            if depth > max_depth:
                raise ValueError(f"$: nesting deeper than {max_depth} levels: not a {what}")
        else:
            depth -= 1


# The parser's hooks do not know where they are in the document, so they mark what they refuse
# and _reject_marked_values reports it with its JSON path.


class _Refused:
    """A value the parser refused (a NaN token, a huge number), with the reason."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


_DUPLICATE = object()  # a key of the dict a duplicate key was found in (JSON keys are strings)


def _mark_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[Any, Any]:
    result: dict[Any, Any] = {}
    for key, value in pairs:
        if key in result:
            result.setdefault(_DUPLICATE, key)
        result[key] = value
    return result


def _refuse_constant(token: str) -> _Refused:
    return _Refused(f"the token {token} is not allowed (write non-finite numbers as strings)")


def _parse_int(text: str) -> int | _Refused:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        return _Refused(f"the number {text[:24]}... is too large")
    return int(text)


def _parse_float(text: str) -> float | _Refused:
    value = float(text)
    if not math.isfinite(value):
        return _Refused(f"the number {text[:24]} is too large")
    return value


def _reject_marked_values(document: Any) -> None:
    """Walk the parsed document (iteratively) and report the first refused value by path."""
    stack = [("$", document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, _Refused):
            raise ValueError(f"{path}: {value.reason}")
        if isinstance(value, dict):
            if _DUPLICATE in value:
                raise ValueError(f"{path}: duplicate key {value[_DUPLICATE]!r}")
            stack.extend((f"{path}.{key}", item) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((f"{path}[{i}]", item) for i, item in reversed(list(enumerate(value))))
