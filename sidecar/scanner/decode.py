"""Encoded runs in a text, decoded for a second look: base64 (also split over lines), hex and ``\\u`` escapes,
URL escapes, bits, spelled-out letters, the NATO alphabet and leetspeak; ROT13, letter shifts, Morse
and reversed text on a cue.

Only runs that decode to printable UTF-8 text come back; binary data (hashes, images, keys) does
not. Every step is one regex pass or one decode, so the cost stays linear.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import re
from collections.abc import Callable
from urllib.parse import unquote

from sidecar.scanner.deferred import deferred

__all__ = [
    "base64_runs",
    "decode_order",
    "decoded_base64",
    "decoded_hex",
    "decoded_transforms",
    "hex_runs",
    "hidden_segments",
    "order_in",
    "other_runs",
    "reads_as_words",
    "url_runs",
]

_B64_RUN = deferred(r"[A-Za-z0-9+/_-]{24,}={0,2}")  # at least 24 base64 characters on one line
_B64_LINE = deferred(r"^[ \t>]*([A-Za-z0-9+/_-]{8,}={0,2})[ \t]*\r?$", re.MULTILINE)
# Hex runs: contiguous (a run found left to right is maximal), ``\x69\x67``, ``0x69, 0x67``, or
# bytes with separators (``69 67 6e``, ``69:67:6e``). No lookbehind, so the engine skips ahead fast;
# the callers check what comes before a run.
_SPACED_BYTES = deferred(r"(?:^|[^0-9A-Za-z])([0-9a-fA-F]{2}(?:[ :,]{1,2}[0-9a-fA-F]{2}){11,})", re.MULTILINE)
_HEX_RUNS = (
    deferred(r"[0-9a-fA-F]{24,}"),
    deferred(r"\\x[0-9a-fA-F]{2}(?:\\x[0-9a-fA-F]{2}){7,}"),
    deferred(r"0x[0-9a-fA-F]{2}(?:[ :,]{1,2}0x[0-9a-fA-F]{2}){7,}"),
    _SPACED_BYTES,
    deferred(r"\\u[0-9a-fA-F]{4}(?:\\u[0-9a-fA-F]{4}){7,}"),  # JSON and source escapes: \u0049\u0067...
)
# Three spaced bytes in a row, which every run of spaced bytes holds: opening on a hex digit, found or
# ruled out in about half the time of a run (whose pattern tries each place a line or a separator ends).
_SPACED_HINT = deferred(r"[0-9a-fA-F]{2}[ :,]{1,2}[0-9a-fA-F]{2}[ :,]{1,2}[0-9a-fA-F]{2}")
_HEX_NOISE = deferred(r"\\x|0x|[ :,]")
_MIN_JOINED = 24
_LETTERS = 0.5  # the share of letters and spaces a decoded run needs to read as text (a command has symbols)
# A note that asks for a transform to be undone ("apply ROT13", "read it backwards") hides its text
# in that transform: the text is read again undone. Only on the cue, so ordinary text pays nothing.
_ROT13_CUE = deferred(r"\brot[ -]?13\b|\bcaesar\b")
_REVERSE_CUE = deferred(r"\b(?:backwards?|reversed?|reversing|in\s+reverse|right\s+to\s+left)\b")


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
        if rx is not _SPACED_BYTES or _SPACED_HINT.search(text)
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
_SHIFT_CUE = deferred(r"\b(?:shift\w*|rot(?:ate)?[ -]?|caesar)\b[^.\n]{0,40}?\b(\d{1,2})\b|\bcaesar\b")
# Morse: eight or more letters of dots and dashes, words parted by " / " (a dotted rule or an ellipsis is
# shorter, or has no dash)
_MORSE_RUN = deferred(r"(?<![\w.-])[.-]{1,6}(?:\s+(?:/\s+)?[.-]{1,6}){7,}(?![\w.-])")
# Three letters of a Morse run in a row: every run holds them, and this pattern, opening on a dot or a
# dash, is found or ruled out far faster than a run (whose first check, a look-behind, runs everywhere).
_MORSE_HINT = deferred(r"[.-]\s+(?:/\s+)?[.-]{1,6}\s+(?:/\s+)?[.-]")
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


@functools.lru_cache(maxsize=16)
def _cues(folded: str) -> tuple[bool, tuple[int, ...], bool]:
    """What ``folded`` asks to undo: ROT13, the letter shifts it names (the two smallest, ROT13 aside),
    reading backwards. Read once for a text, though both ``decoded_transforms`` and ``hidden_segments``
    ask."""
    rot13 = ("rot" in folded or "caesar" in folded) and _ROT13_CUE.search(folded) is not None
    shifts: tuple[int, ...] = ()
    if "shift" in folded or "rot" in folded or "caesar" in folded:
        named = {int(found.group(1) or 3) for found in _SHIFT_CUE.finditer(folded)} - {0, 13, 26}
        shifts = tuple(by for by in sorted(named)[:2] if by < 26)
    backwards = ("backward" in folded or "revers" in folded or "right to left" in folded) and bool(
        _REVERSE_CUE.search(folded)
    )
    return rot13, shifts, backwards


def decoded_transforms(folded: str, cased: str) -> str:
    """``cased`` with ROT13 or a named letter shift undone and read backwards, each only when ``folded``
    asks for it, and every Morse run read as text."""
    out = []
    rot13, shifts, backwards = _cues(folded)
    if rot13:
        out.append(codecs.encode(cased, "rot13"))
    out += [_shifted(cased, by) for by in shifts] + [_shifted(cased, -by) for by in shifts]
    if "-" in folded and "." in folded and _MORSE_HINT.search(folded):
        out += [decoded for found in _MORSE_RUN.finditer(folded) if (decoded := _morse(found.group()))]
    if backwards:
        out.append("\n".join(line[::-1] for line in cased.split("\n")))
    hidden = hidden_segments(folded, cased)
    if hidden:
        out.append("\n\n".join(hidden))  # each undone piece a paragraph of its own: its order opens a sentence
    return "\n".join(out)


_COMMON = frozenset(
    [
        "the",
        "and",
        "to",
        "of",
        "a",
        "in",
        "is",
        "it",
        "you",
        "your",
        "that",
        "for",
        "on",
        "with",
        "as",
        "this",
        "be",
        "are",
        "all",
        "not",
        "no",
        "do",
        "from",
        "at",
        "by",
        "or",
        "an",
    ]
)
_SEGMENT = deferred(r"[^\n:.;!?'\"`\u2018\u2019\u201c\u201d]{12,}")


_LETTER_RUN = deferred(r"[a-z]+")


def _common_words(text: str) -> int:
    return sum(word in _COMMON for word in _LETTER_RUN.findall(text.casefold()))


def _holds_common(text: str) -> bool:
    """Whether ``_common_words(text)`` is above nought, stopping at the first common word."""
    return any(word in _COMMON for word in _LETTER_RUN.findall(text.casefold()))


def hidden_segments(folded: str, cased: str) -> list[str]:
    """The pieces of ``cased`` (between line breaks, colons, sentence ends and quote marks) that a
    transform the text names (ROT13, a letter shift, reading backwards) turns from no common English
    word into two or more: the hidden text itself, undone, one piece each."""
    undo: list[Callable[[str], str]] = []
    rot13, shifts, backwards = _cues(folded)
    if rot13:
        undo.append(lambda piece: codecs.encode(piece, "rot13"))
    for by in shifts:
        undo += [functools.partial(_shifted, by=by), functools.partial(_shifted, by=-by)]
    if backwards:
        undo.append(lambda piece: piece[::-1])
    if not undo:
        return []
    out = []
    for found in _SEGMENT.finditer(cased):
        piece = found.group().strip()
        if len(piece.split()) < 3 or _holds_common(piece):
            continue
        for transform in undo:
            undone = transform(piece)
            if _common_words(undone) >= 2:
                out.append(undone)
                break
    return out


# --- more encodings: each run must decode to words, so an identifier or a URL with a few escapes stays
_URL_RUN = deferred(r"[A-Za-z0-9._~+-]*(?:%[0-9a-fA-F]{2}[A-Za-z0-9._~+-]*){6,}")
_BITS_RUN = deferred(r"(?<![\w])[01]{8}(?:[ ,]{1,2}[01]{8}){5,}(?![\w])")
# letters one at a time: "s-e-n-d / t-h-e / k-e-y-s", "S E N D  T H E  K E Y S" (at least eight letters)
_SPELLED_GAP = r"(?:[ \t]?[-.*_][ \t]?|[ \t]{1,3}|[ \t]+[/|][ \t]+)"
_SPELLED_RUN = deferred(rf"(?<![\w.-])[a-zA-Z](?:{_SPELLED_GAP}[a-zA-Z]){{7,}}(?![\w-])")
# A byte of bits, which every run holds: found or ruled out faster than a run (whose pattern opens on a
# look-behind, tried everywhere).
_BITS_HINT = deferred(r"[01]{8}")
_SPELLED_WORD_BREAK = deferred(r"[ \t]+[/|][ \t]+|[ \t]{2,}")
_NATO = {
    word: word[0]
    for word in [
        "alfa",
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
        "juliett",
        "kilo",
        "lima",
        "mike",
        "november",
        "oscar",
        "papa",
        "quebec",
        "romeo",
        "sierra",
        "tango",
        "uniform",
        "victor",
        "whiskey",
        "whisky",
        "xray",
        "x-ray",
        "yankee",
        "zulu",
    ]
}
_NATO_WORDS = "|".join(sorted(_NATO, key=len, reverse=True))
_NATO_RUN = deferred(
    rf"\b(?:{_NATO_WORDS})(?:[ \t,/-]{{1,3}}(?:{_NATO_WORDS})){{5,}}\b"
)  # on lower case: no IGNORECASE, 4x faster
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"})
# a word written in leetspeak: letters and at least one stand-in digit or sign inside it ("1gn0r3", "s3nd")
# letters on both sides of a stand-in ("s3nd", "k3y5"), or stand-ins opening a word of letters ("1gn0r3")
_LEET_WORD = deferred(
    r"(?<![\w@$#.])(?:[a-zA-Z]+[013457@$!]+[a-zA-Z][a-zA-Z013457@$!]*|[013457@$]+[a-zA-Z]+[013457@$!][a-zA-Z013457@$!]*)"
    r"(?![\w.])"
)
# A letter and a stand-in side by side, which every leetspeak word holds: a line without one has none.
_LEET_HINT = deferred(r"[a-zA-Z][013457@$!]|[013457@$][a-zA-Z]")
_LEET_MIN_WORDS = 3
_LEET_SHARE = 0.3  # of a line's words, so a line of units and versions ("14px", "py3") is not leetspeak
_LEET_MAX_LINE = 400
_WORDLIKE = deferred(r"[a-z]{2,}")


def reads_as_words(decoded: str) -> bool:
    """Whether decoded text reads as words: three or more of them, mostly letters and spaces."""
    low = decoded.casefold()
    letters = sum(ch.isalpha() or ch == " " for ch in low)
    return len(_WORDLIKE.findall(low)) >= 3 and letters >= 0.7 * len(low.strip())


def url_runs(text: str) -> list[tuple[int, int, str]]:
    """Each run of six or more URL escapes in ``text`` (the raw text: ``normalise`` undoes them in the
    views) that decodes to words, with its words."""
    out = []
    for found in _URL_RUN.finditer(text) if "%" in text else ():
        decoded = unquote(found.group(), errors="strict") if _utf8(found.group()) else ""
        if decoded and _is_text(decoded) and reads_as_words(decoded):
            out.append((found.start(), found.end(), decoded))
    return out


def other_runs(text: str) -> list[tuple[int, int, str]]:
    """The span in ``text`` of each run in one of the other encodings (bits, letters spelled one at a
    time, the NATO alphabet, a stretch of leetspeak) that decodes to words, with its words."""
    out: list[tuple[int, int, str]] = []
    if "0" in text and "1" in text and _BITS_HINT.search(text):
        for found in _BITS_RUN.finditer(text):
            raw = bytes(int(bits, 2) for bits in re.findall(r"[01]{8}", found.group()))
            decoded = raw.decode("utf-8", errors="replace")
            if _is_text(decoded) and reads_as_words(decoded):
                out.append((found.start(), found.end(), decoded))
    for found in _SPELLED_RUN.finditer(text):
        words = [re.sub(r"[^a-zA-Z]", "", part) for part in _SPELLED_WORD_BREAK.split(found.group())]
        decoded = " ".join(word for word in words if word)
        if len(decoded.replace(" ", "")) >= 8:
            out.append((found.start(), found.end(), decoded))
    lower = text.lower()
    spelled = lower if len(lower) == len(text) else text
    # A run is made of the alphabet's words: a text that holds none of them has none, and is not searched.
    for found in _NATO_RUN.finditer(spelled) if any(word in spelled for word in _NATO) else ():
        letters = [_NATO[w.casefold()] for w in re.findall(r"[A-Za-z-]+", found.group()) if w.casefold() in _NATO]
        out.append((found.start(), found.end(), "".join(letters)))
    out += _leet(text)
    return out


def _utf8(run: str) -> bool:
    try:
        unquote(run, errors="strict")
    except UnicodeDecodeError:
        return False
    return True


def _leet(text: str) -> list[tuple[int, int, str]]:
    """Stretches of a line with ``_LEET_MIN_WORDS`` or more leetspeak words, each stretch read with the
    stand-ins undone (the whole line, so the plain words between them are kept)."""
    out = []
    start = 0
    for line in text.split("\n"):
        words = _LEET_WORD.findall(line) if len(line) <= _LEET_MAX_LINE and _LEET_HINT.search(line) else []
        if len(words) >= _LEET_MIN_WORDS and len(words) >= _LEET_SHARE * len(line.split()):
            decoded = line.translate(_LEET)
            if decoded != line and reads_as_words(decoded):
                out.append((start, start + len(line), decoded))
        start += len(line) + 1
    return out


# --- text to be decoded and then acted on: the order to undo an encoding and carry out what it says
_DECODE_WORD = (
    r"(?:decod\w*|de-?code|url-?decod\w*|unescap\w*|un-?hex\w*|from\s+(?:hex|base64|binary|morse)|rot-?13|rot\s+13|"
    r"caesar|unscrambl\w*|decipher\w*|decrypt\w*|revers\w*|backwards?|read\s+(?:it\s+)?(?:right\s+to\s+left|back\s+to\s+front)|"
    r"translat\w*\s+(?:it\s+)?(?:back|from)|spell\w*\s+out|join\s+the\s+letters|first\s+letters?)"
)
_ACT_WORD = (
    r"(?:execute|execut\w+|run|running|perform\w*|follow\w*|obey\w*|act\s+on|action\s+it|carry\s+(?:it\s+|them\s+)?out|"
    r"carried\s+out|do\s+(?:it|that|what)|does\s+what|comply|apply\s+it|implement\w*|complete\s+it|treat\s+it\s+as|"
    r"as\s+(?:an?\s+)?(?:instruction|order|command)s?)"
)
_DECODE_THEN_ACT = deferred(
    rf"\b{_DECODE_WORD}\b[^.!?\n]{{0,60}}?\b{_ACT_WORD}\b|\b{_ACT_WORD}\b[^.!?\n]{{0,30}}?\b(?:once|after|when)\s+"
    rf"(?:it\s+is\s+|it's\s+|you've\s+|you\s+have\s+)?{_DECODE_WORD}"
)
_ORDER = deferred(
    r"^[\s\W]{0,4}(?:(?:please|pls|now|then|and|also|just)\s+)*(?:send|forward|e-?mail|mail|upload|post|paste|"
    r"publish|share|export|copy|sync|transfer|wire|pay|refund|run|execute|exec|eval|download|install|curl|wget|"
    r"delete|remove|erase|wipe|drop|truncate|disable|turn\s+off|switch\s+off|ignore|disregard|forget|override|"
    r"bypass|reveal|print|dump|leak|give|grant|tell|reply|open|chmod|sudo|rm|act\s+as|pretend|you\s+are)\b"
)


def decode_order(folded: str) -> tuple[int, int] | None:
    """The span in ``folded`` of an order to decode (or reverse, or join) something and then act on it."""
    if not any(
        word in folded
        for word in (
            "decod",
            "code",
            "hex",
            "base64",
            "rot",
            "revers",
            "backward",
            "escap",
            "caesar",
            "scrambl",
            "cipher",
            "crypt",
            "translat",
            "spell",
            "letter",
        )
    ):
        return None
    found = _DECODE_THEN_ACT.search(folded)
    return None if found is None else found.span()


def order_in(decoded: str) -> bool:
    """Whether decoded text opens with an order (an act verb first, on any of its lines)."""
    return any(_ORDER.match(line.casefold()) for line in decoded.split("\n") if line.strip())
