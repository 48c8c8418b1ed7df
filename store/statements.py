"""Recognizing statements by their text: which ones only read, and a trailing FORMAT clause."""

from __future__ import annotations

import re

_FORMAT_AT_END = re.compile(r"^(?P<statement>.*?)\s+FORMAT\s+(?P<fmt>\w+)\s*;?\s*$", re.S | re.I)
_READ_ONLY = re.compile(r"^\s*(\(\s*)*(SELECT|WITH|SHOW|DESC|DESCRIBE|EXISTS|EXPLAIN)\b", re.I)
_INSERT = re.compile(r"^\s*INSERT\b", re.I)
_COMMENTS = re.compile(r"(--[^\n]*(\n|$))|(/\*.*?\*/)", re.S)


def strip_comments(sql: str) -> str:
    return _COMMENTS.sub(" ", sql)


def is_read_only(sql: str) -> bool:
    """True for statements that only read (SELECT, WITH, SHOW, DESCRIBE, EXISTS, EXPLAIN)."""
    return bool(_READ_ONLY.match(strip_comments(sql)))


_INTO_OUTFILE = re.compile(r"\bINTO\s+OUTFILE\b", re.I)


def writes_local_file(sql: str) -> bool:
    """``SELECT ... INTO OUTFILE`` writes where the engine runs; a ClickHouse server refuses it
    over HTTP, and so does tracerl's endpoint."""
    return bool(_INTO_OUTFILE.search(strip_comments(sql)))


def is_insert(sql: str) -> bool:
    return bool(_INSERT.match(strip_comments(sql)))


def split_format(sql: str) -> tuple[str, str | None]:
    """``"INSERT INTO t FORMAT Native"`` -> ``("INSERT INTO t", "Native")``; no clause -> (sql, None)."""
    m = _FORMAT_AT_END.match(sql)
    return (m.group("statement"), m.group("fmt")) if m else (sql, None)


_INSERT_WITH_DATA = re.compile(rb"^\s*(?P<statement>INSERT\b.*?)\s+FORMAT\s+(?P<fmt>\w+)[ \t]*(\r?\n)?", re.S | re.I)


def split_insert_body(body: bytes) -> tuple[str, str, bytes] | None:
    """An HTTP body holding ``INSERT ... FORMAT X`` followed by the data, as ClickHouse's HTTP
    interface accepts it -> (statement, format, data); None for any other body. Works on bytes
    so binary data (Native, RowBinary) is never decoded."""
    m = _INSERT_WITH_DATA.match(body)
    if not m:
        return None
    return m.group("statement").decode(), m.group("fmt").decode(), body[m.end():]
