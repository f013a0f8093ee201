"""Reading JSON that came from somewhere else (a saved recording, an exported graph), strictly.

One place for the checks every loader of untrusted files needs, in the order that keeps each
one cheap and safe: that the path is a regular file (a FIFO, ``/dev/zero`` or ``/dev/stdin``
would block or never end) and its size, both before reading, then at most that many bytes read
(memory in proportion to the file, not to the limit); pickle / npy / npz files refused outright
(dyngraph never unpickles); UTF-8; the nesting depth before parsing (so a deep file cannot cause
a RecursionError); then, while parsing, NaN / Infinity tokens, duplicate keys and numbers too
large to mean anything. Every refusal is a ValueError naming the JSON path (``$.nodes[3]``).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from typing import Any

MAX_INT_DIGITS = 20  # uint64's largest value (a preview of one is saved) has 20 digits

_STRING = re.compile(r'"[^"]*"')  # a JSON string once its escapes are gone (see check_depth)
_BRACKET = re.compile(r"[\[\]{}]")


def read(path: Any, what: str, max_bytes: int, max_depth: int) -> Any:
    """The parsed JSON document in the file at ``path`` (``what`` names the kind of file)."""
    path = os.fspath(path)
    return parse(read_bytes(path, what, max_bytes), what, max_depth, source=path)


def read_bytes(path: Any, what: str, max_bytes: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_bytes`` of them, read without
    ever blocking: a device, a pipe or a directory is refused before it is read (checked again
    on the opened file, which may not be the one first looked at), and the read asks for the
    file's own size, plus one byte to notice a file that grew meanwhile."""
    path = os.fspath(path)
    _check_regular(os.stat(path).st_mode, path, what)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        _check_regular(info.st_mode, path, what)
        if info.st_size > max_bytes:
            raise ValueError(f"{path} is {info.st_size} bytes, over the {max_bytes}-byte limit "
                             f"for {what}s")
        raw = f.read(info.st_size + 1)
    if len(raw) > max_bytes:
        raise ValueError(f"{path} grew past the {max_bytes}-byte limit for {what}s while it "
                         "was read")
    return raw


def _check_regular(mode: int, path: str, what: str) -> None:
    if not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "a device, a pipe or a socket"
        raise ValueError(f"{path} is {kind}, not a file: not a {what}")


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate (``"\\ud800"``: JSON allows one, UTF-8 cannot encode
    it) replaced by U+FFFD, so a name from a file renders wherever text is encoded."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


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
    # NOTE: the escapes go first (escaped backslashes, then escaped quotes), so that a string is
    # a plain run between two quotes, which the regex engine matches keeping no state per
    # character; a pattern with the escapes as an alternative took ~120 bytes of memory per
    # character of a long string. Outside strings a backslash is invalid JSON, which the
    # parser refuses where it stands, before any bracket this could hide.
    bare = _STRING.sub('""', text.replace("\\\\", "").replace('\\"', ""))
    depth = 0
    for match in _BRACKET.finditer(bare):
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
