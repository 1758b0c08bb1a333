"""Encoded runs in a text, decoded for a second look: base64 (also split over lines), hex and ``\\u`` escapes.

Only runs that decode to printable UTF-8 text come back; binary data (hashes, images, keys) does
not. Every step is one regex pass or one decode, so the cost stays linear.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re

__all__ = ["base64_runs", "decoded_base64", "decoded_hex", "decoded_transforms", "hex_runs"]

_B64_RUN = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")  # at least 24 base64 characters on one line
_B64_LINE = re.compile(r"^[ \t>]*([A-Za-z0-9+/_-]{8,}={0,2})[ \t]*\r?$", re.MULTILINE)
# Hex runs: contiguous (a run found left to right is maximal), ``\x69\x67``, ``0x69, 0x67``, or
# bytes with separators (``69 67 6e``, ``69:67:6e``). No lookbehind, so the engine skips ahead fast;
# the callers check what comes before a run.
_HEX_RUNS = (
    re.compile(r"[0-9a-fA-F]{24,}"),
    re.compile(r"\\x[0-9a-fA-F]{2}(?:\\x[0-9a-fA-F]{2}){7,}"),
    re.compile(r"0x[0-9a-fA-F]{2}(?:[ :,]{1,2}0x[0-9a-fA-F]{2}){7,}"),
    re.compile(r"(?:^|[^0-9A-Za-z])([0-9a-fA-F]{2}(?:[ :,]{1,2}[0-9a-fA-F]{2}){11,})", re.MULTILINE),
    re.compile(r"\\u[0-9a-fA-F]{4}(?:\\u[0-9a-fA-F]{4}){7,}"),  # JSON and source escapes: \u0049\u0067...
)
_HEX_NOISE = re.compile(r"\\x|0x|[ :,]")
_MIN_JOINED = 24
_LETTERS = 0.5  # the share of letters and spaces a decoded run needs to read as text (a command has symbols)
# A note that asks for a transform to be undone ("apply ROT13", "read it backwards") hides its text
# in that transform: the text is read again undone. Only on the cue, so ordinary text pays nothing.
_ROT13_CUE = re.compile(r"\brot[ -]?13\b|\bcaesar\b")
_REVERSE_CUE = re.compile(r"\b(?:backwards?|reversed?|reversing|in\s+reverse|right\s+to\s+left)\b")


def decoded_base64(text: str) -> str:
    """Every base64 run, and every run of base64-only lines joined, that decodes to text; one a line."""
    return "\n".join(decoded for _, _, decoded in base64_runs(text))


def base64_runs(text: str) -> list[tuple[int, int, str]]:
    """The span in ``text`` of each base64 run that decodes to text (a joined run: from its first
    line to its last), with what it decodes to; single runs first."""
    out = [(m.start(), m.end(), decoded) for m in _B64_RUN.finditer(text) if (decoded := _b64(m.group()))]
    for start, end, joined in _joined_lines(text):
        decoded = _b64(joined)
        if decoded:
            out.append((start, end, decoded))
    return out


def decoded_hex(text: str) -> str:
    """Every hex run (``69676e...``, ``\\x69\\x67``, ``69 67 6e``) that decodes to text; one a line."""
    return "\n".join(decoded for _, _, decoded in hex_runs(text))


def hex_runs(text: str) -> list[tuple[int, int, str]]:
    """The span in ``text`` of each hex run that decodes to text, with what it decodes to."""
    out: list[tuple[int, int, str]] = []
    runs = [
        (m.start(m.lastindex or 0), m.end(m.lastindex or 0), m.group(m.lastindex or 0))
        for rx in _HEX_RUNS
        for m in rx.finditer(text)
        if not _inside_word(text, m.start(m.lastindex or 0))
    ]
    for start, end, run in runs:
        if run.startswith("\\u"):
            decoded = "".join(chr(int(run[i + 2 : i + 6], 16)) for i in range(0, len(run), 6))
            if _is_text(decoded) and sum(ch.isalpha() or ch == " " for ch in decoded) >= _LETTERS * len(decoded):
                out.append((start, end, decoded))
            continue
        digits = _HEX_NOISE.sub("", run)
        if len(digits) % 2:
            continue
        try:
            decoded = bytes.fromhex(digits).decode("utf-8")
        except ValueError:
            continue
        if _is_text(decoded) and sum(ch.isalpha() or ch == " " for ch in decoded) >= _LETTERS * len(decoded):
            out.append((start, end, decoded))
    return out


def _inside_word(text: str, start: int) -> bool:
    return start > 0 and text[start - 1].isalnum()


def _joined_lines(text: str) -> list[tuple[int, int, str]]:
    """Runs of two or more consecutive lines that hold nothing but base64, joined, with their span."""
    groups: list[tuple[int, int, str]] = []
    current: list[str] = []
    first = last_end = -2
    for found in _B64_LINE.finditer(text):
        if found.start() != last_end + 1:
            if len(current) > 1 and sum(map(len, current)) >= _MIN_JOINED:
                groups.append((first, last_end, "".join(current)))
            current, first = [], found.start(1)
        current.append(found.group(1))
        last_end = found.end()
    if len(current) > 1 and sum(map(len, current)) >= _MIN_JOINED:
        groups.append((first, last_end, "".join(current)))
    return groups


def _b64(run: str) -> str:
    body = run.rstrip("=").replace("-", "+").replace("_", "/")
    body = body[: len(body) - len(body) % 4] if len(body) % 4 == 1 else body
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return ""
    return decoded if _is_text(decoded) else ""


def _is_text(decoded: str) -> bool:
    return bool(decoded) and decoded.replace("\n", "").replace("\r", "").replace("\t", "").isprintable()


# "shift each letter back by 3", "rot-5", "caesar": a letter shift named with its size (3 for a bare "caesar")
_SHIFT_CUE = re.compile(r"\b(?:shift\w*|rot(?:ate)?[ -]?|caesar)\b[^.\n]{0,40}?\b(\d{1,2})\b|\bcaesar\b")
# Morse: eight or more letters of dots and dashes, words parted by " / " (a dotted rule or an ellipsis is
# shorter, or has no dash)
_MORSE_RUN = re.compile(r"(?<![\w.-])[.-]{1,6}(?:\s+(?:/\s+)?[.-]{1,6}){7,}(?![\w.-])")
_MORSE = dict(
    zip(
        [
            ".-",
            "-...",
            "-.-.",
            "-..",
            ".",
            "..-.",
            "--.",
            "....",
            "..",
            ".---",
            "-.-",
            ".-..",
            "--",
            "-.",
            "---",
            ".--.",
            "--.-",
            ".-.",
            "...",
            "-",
            "..-",
            "...-",
            ".--",
            "-..-",
            "-.--",
            "--..",
            "-----",
            ".----",
            "..---",
            "...--",
            "....-",
            ".....",
            "-....",
            "--...",
            "---..",
            "----.",
            ".-.-.-",
            "--..--",
            "..--..",
            "-..-.",
            ".--.-.",
        ],
        "abcdefghijklmnopqrstuvwxyz0123456789.,?/@",
        strict=True,
    )
)


def _shifted(text: str, by: int) -> str:
    """``text`` with every Latin letter moved ``by`` places back in the alphabet."""
    out = []
    for ch in text:
        if "a" <= ch <= "z":
            out.append(chr((ord(ch) - 97 - by) % 26 + 97))
        elif "A" <= ch <= "Z":
            out.append(chr((ord(ch) - 65 - by) % 26 + 65))
        else:
            out.append(ch)
    return "".join(out)


def _morse(run: str) -> str:
    """A Morse run as text, or "" when one of its letters is not Morse."""
    words = []
    for word in re.split(r"\s+/\s+", run.strip()):
        letters = [_MORSE.get(code) for code in word.split()]
        if None in letters:
            return ""
        words.append("".join(letter or "" for letter in letters))
    return " ".join(words)


def decoded_transforms(folded: str, cased: str) -> str:
    """``cased`` with ROT13 or a named letter shift undone and read backwards, each only when ``folded``
    asks for it, and every Morse run read as text."""
    out = []
    if ("rot" in folded or "caesar" in folded) and _ROT13_CUE.search(folded):
        out.append(codecs.encode(cased, "rot13"))
    if "shift" in folded or "rot" in folded or "caesar" in folded:
        shifts = {int(found.group(1) or 3) for found in _SHIFT_CUE.finditer(folded)} - {0, 13, 26}
        out += [_shifted(cased, by) for by in sorted(shifts)[:2] if by < 26] + [
            _shifted(cased, -by) for by in sorted(shifts)[:2] if by < 26
        ]
    if "-" in folded and "." in folded:
        out += [decoded for found in _MORSE_RUN.finditer(folded) if (decoded := _morse(found.group()))]
    if ("backward" in folded or "revers" in folded or "right to left" in folded) and _REVERSE_CUE.search(folded):
        out.append("\n".join(line[::-1] for line in cased.split("\n")))
    return "\n".join(out)
