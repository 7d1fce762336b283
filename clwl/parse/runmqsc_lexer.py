"""The runmqsc attribute lexer: ``KEY(value)`` text and bare keywords tokenised with a balanced-parenthesis
scanner, one line at a time. Shared by the runmqsc parser (:mod:`clwl.parse.mqsc`, for the lines its fast pattern
does not take) and the z/OS one (:mod:`clwl.parse.zos`, whose records print the same attributes). Standard
library only.

The rules (docs/formats.md, "runmqsc captures"): keys and bare keywords at any column, any number per line;
nested parentheses; empty values (``DESCR( )`` -> ``""``); quoted values (``''`` inside quotes is one quote, a
quote is only special as the first non-blank character of a value); keys upper-cased, values stripped of their
surrounding blanks; a value still open at the end of a line continues on the next (see :meth:`Scanner.feed`).
"""

from __future__ import annotations

import re

__all__ = ["Scanner", "attribute_map", "clean_attribute_line", "clip_line"]

_KEY_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_TOKEN_RE = re.compile(r"[^ \t]+")
_VALUE_CHUNK = re.compile(r"[^()']+")
_QUOTED_CHUNK = re.compile(r"[^']+")


def clip_line(text: str, limit: int = 80) -> str:
    """``text`` as a problem's reason quotes it: blanks collapsed to one, at most ``limit`` characters (``...``
    when cut). (:func:`clwl.parse.common.clip` cuts without collapsing and gives the length instead.)"""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Scanner:
    """Balanced-parenthesis tokeniser fed one line at a time; keeps an open value across lines.

    After :meth:`feed`: ``pairs`` (key, value or ``None`` for a bare keyword), in order; ``error``, the first
    problem (the line is not read further); ``open``, a value still open at the end of the line.
    """

    __slots__ = ("pairs", "error", "key", "buf", "depth", "mode", "token", "token_at", "token_line", "mark",
                 "started", "spaced")

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str | None]] = []
        self.error: str | None = None
        self.key: str | None = None  # key whose value is open
        self.buf: list[str] = []
        self.depth = 0
        self.mode = 0  # 0 before the value's first non-blank, 1 literal, 2 inside quotes, 3 after closing quote
        # Raw text of the open token, for messages: the line it starts on (from token_at), then the lines that
        # continue it. Kept as pieces and joined only for a message: copying the rest of the line for each key
        # made a line of many keys quadratic.
        self.token: list[str] = []
        self.token_at = 0
        self.token_line = 0
        # What the pieces of the value so far hold (buf[:mark] looked at): a non-blank (started), then a blank
        # after it (spaced). Kept up to date line by line instead of joining the whole value at each line.
        self.mark = 0
        self.started = False
        self.spaced = False

    @property
    def open(self) -> bool:
        return self.key is not None

    def token_text(self) -> str:
        if not self.token:
            return ""
        return " ".join([self.token[0][self.token_at:].rstrip()] + self.token[1:])

    def unclosed_reason(self) -> str:
        """The problem of a value still open where its record ends."""
        what = "unclosed quote:" if self.mode == 2 else "unbalanced parenthesis: unclosed '(' in"
        return f"{what} {clip_line(self.token_text())!r} at line {self.token_line}"

    def truncated_reason(self) -> str:
        """The problem of a value still open at the end of the file: ``record truncated at end of file: ...``."""
        return "record truncated at end of file: " + self.unclosed_reason().replace(
            "unbalanced parenthesis: ", "").replace("unclosed quote:", "unclosed quote in")

    def feed(self, line: str, lineno: int) -> None:
        n = len(line)
        i = 0
        if self.key is not None:  # the value goes on: join the two pieces
            content = line.lstrip(" \t")
            i = n - len(content)
            self.token.append(content.rstrip())
            if self.mode in (1, 2, 3):
                # The value so far ("prev") without its trailing blanks (not inside quotes), then one blank unless
                # prev ends with "(", content starts with ")" or ",", or prev ends with "," and has no blank
                # (" " in prev.strip()). Worked out from the last pieces, never by joining the whole value.
                buf = self.buf
                if self.mode != 2:
                    while buf and not buf[-1].strip(" \t"):
                        buf.pop()
                    if buf:
                        buf[-1] = buf[-1].rstrip(" \t")
                if len(buf) <= self.mark:  # no new piece (at most once per value): look at them all again
                    self.mark, self.started, self.spaced = 0, False, False
                for index in range(self.mark, len(buf)):
                    piece = buf[index]
                    if not self.started:
                        piece = piece.lstrip()
                        if not piece:
                            continue
                        self.started = True
                    if " " in piece:
                        self.spaced = True
                self.mark = len(buf)
                if buf and content and buf[-1][-1] != "(" and content[0] not in "),":
                    if buf[-1][-1] != "," or self.spaced:
                        buf.append(" ")
        while i < n:
            if self.key is None:
                c = line[i]
                if c == " " or c == "\t":
                    i += 1
                    continue
                m = _KEY_RE.match(line, i)
                if m is None:
                    if c == ")":
                        self.error = f"unbalanced parenthesis: stray ')' in {clip_line(line)!r} at line {lineno}"
                    else:
                        token = _TOKEN_RE.match(line, i).group()
                        self.error = (f"not KEY(value) or a keyword: {clip_line(token, 40)!r} in {clip_line(line)!r}"
                                      f" at line {lineno}")
                    return
                j = m.end()
                if j < n and line[j] == "(":
                    self.key = m.group().upper()
                    self.buf = []
                    self.depth = 0
                    self.mode = 0
                    self.token = [line]
                    self.token_at = i
                    self.token_line = lineno
                    self.mark = 0
                    self.started = self.spaced = False
                    i = j + 1
                    continue
                if j < n and line[j] not in " \t":
                    token = _TOKEN_RE.match(line, i).group()
                    self.error = (
                        f"not KEY(value) or a keyword: {clip_line(token, 40)!r} in {clip_line(line)!r} at line {lineno}"
                    )
                    return
                self.pairs.append((m.group().upper(), None))
                i = j
                continue
            # inside a value
            mode = self.mode
            c = line[i]
            if mode == 2:  # quoted
                if c == "'":
                    if i + 1 < n and line[i + 1] == "'":
                        self.buf.append("'")
                        i += 2
                    else:
                        self.mode = 3
                        i += 1
                    continue
                m = _QUOTED_CHUNK.match(line, i)
                self.buf.append(m.group())
                i = m.end()
                continue
            if mode == 3:  # after the closing quote: blanks, then ')'
                if c == " " or c == "\t":
                    i += 1
                    continue
                if c == ")":
                    self._close()
                    i += 1
                    continue
                self.error = (
                    f"not KEY(value) or a keyword: text after the closing quote in {clip_line(self.token_text())!r}"
                    f" at line {lineno}"
                )
                return
            if mode == 0:
                if c == " " or c == "\t":
                    i += 1
                    continue
                if c == "'":
                    self.mode = 2
                    i += 1
                    continue
                self.mode = 1
            if c == "(":
                self.depth += 1
                self.buf.append(c)
                i += 1
            elif c == ")":
                if self.depth == 0:
                    self._close()
                else:
                    self.depth -= 1
                    self.buf.append(c)
                i += 1
            else:
                m = _VALUE_CHUNK.match(line, i)
                if m is None:  # a quote inside a literal value is literal
                    self.buf.append(c)
                    i += 1
                else:
                    self.buf.append(m.group())
                    i = m.end()

    def _close(self) -> None:
        self.pairs.append((self.key, "".join(self.buf).strip()))  # type: ignore[arg-type]
        self.key = None
        self.buf = []
        self.token = []


def clean_attribute_line(line: str) -> list[tuple[str, str | None]] | None:
    """Pairs of a line that is complete, clean KEY(value) text with at least one valued pair, else None."""
    scanner = Scanner()
    scanner.feed(line, 0)
    if scanner.error or scanner.open:
        return None
    for _key, value in scanner.pairs:
        if value is not None:
            return scanner.pairs
    return None


def attribute_map(pairs: list[tuple[str, str | None]]) -> tuple[dict[str, str | None], str | None]:
    """``(attributes, problem)`` of a record's ``pairs``: a key given twice with the same value is one attribute;
    given twice with different values, the problem ``duplicate attribute: ...`` (the attributes are then those
    read before it)."""
    attrs: dict[str, str | None] = {}
    for key, value in pairs:
        if key in attrs and attrs[key] != value:
            return attrs, f"duplicate attribute: {key} given twice with different values ({attrs[key]!r}, {value!r})"
        attrs[key] = value
    return attrs, None
