"""The text the scanner's rules read: evasions undone, in time linear in the input.

``normalise`` decodes HTML entities and percent-escaped runs, folds every character (NFKD with the
combining marks dropped, format characters removed, fillers made spaces, confusables mapped to the
ASCII letter they imitate, full-width brackets to ASCII), drops markdown emphasis and inline tags
inside a word (``I**gnore**``), and joins words hyphenated across a line break (``Ig-\\nnore``).
Line structure is otherwise kept, so line-anchored rules still work. ``cased`` keeps case (for
decoding base64); ``folded`` is case-folded (for matching).
"""

from __future__ import annotations

import bisect
import functools
import html
import itertools
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import cast
from urllib.parse import unquote

from sidecar.scanner.confusables import load_table
from sidecar.scanner.deferred import deferred
from sidecar.scanner.sentences import sentences

__all__ = ["Literals", "Stems", "Views", "fold_char", "literals_of", "normalise"]

# Characters that render as blank space but are letters or symbols: attackers use them as spaces.
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e\u17b4\u17b5")
_LINE_BREAKS = frozenset("\u2028\u2029\x85\x0b\x0c")
_DROPPED_CATEGORIES = frozenset({"Mn", "Me", "Cf"})
_PUNCT = {
    **dict.fromkeys("【〖〔［⟦⦋❲⁅", "["),
    **dict.fromkeys("】〗〕］⟧⦌❳⁆", "]"),
    **dict.fromkeys("〈《⟨‹❬❮＜﹤〈", "<"),
    **dict.fromkeys("〉》⟩›❭❯＞﹥〉", ">"),
    **dict.fromkeys("｜∣ǀ￨⏐│", "|"),
    **dict.fromkeys("‐‑‒–—―−﹣－", "-"),
    **dict.fromkeys("“”„‟″〝〞＂", '"'),
    **dict.fromkeys("‘’‚‛′＇", "'"),
    "：": ":",
    "∶": ":",
    "／": "/",
    "⁄": "/",
    "＿": "_",
}

_ENTITY_HINT = deferred(r"&(?:#[0-9]{1,7}|#x[0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?")
_PERCENT_RUN = deferred(r"(?:%[0-9A-Fa-f]{2}){3,}")
# A word with two or more escapes between its letters ("Please%20disregard%20the"): a URL-encoded
# sentence written as one token. Decoded whole, so its words are read as words.
_PERCENT_WORD = deferred(r"[^\s%]*(?:%[0-9A-Fa-f]{2}[^\s%]*){2,}")
# Emphasis markers (``*``, ``**``, ``~~``, ``__``) touching a letter or digit on either side, and
# backticks or short inline tags inside a word (the callback checks the sides). Literal-first
# patterns, so the regex engine skips ahead fast.
_INWORD_MARKUP = deferred(r"\*{1,3}|~~|__|`|</?[A-Za-z]{1,8}>")
_HYPHEN_BREAK = deferred(r"-[ \t]*\r?\n[ \t>]*(?=[^\W\d_])")
_NON_ASCII = deferred(r"[^\x00-\x7f]+")
_WORD = deferred(r"\w+")
_FENCE_LINE = deferred(r"^[ \t]*(?:```|~~~)", re.MULTILINE)


@functools.lru_cache(maxsize=8192)
def fold_char(char: str) -> str:
    """What one non-ASCII character reads as: "" for marks and format characters, " " for fillers."""
    if char in _FILLERS:
        return " "
    if char in _LINE_BREAKS:
        return "\n"
    if char in _PUNCT:
        return _PUNCT[char]
    if unicodedata.category(char) in _DROPPED_CATEGORIES:
        return ""
    table = load_table()
    out = []
    for part in unicodedata.normalize("NFKD", char):
        if unicodedata.category(part) in _DROPPED_CATEGORIES:
            continue
        out.append(" " if part in _FILLERS else _PUNCT.get(part) or table.get(part, part))
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Stems:
    """Words a rule needs, ready for ``Views.starts_a_word``: ASCII word stems, and the other
    terms by their first character."""

    words: tuple[str, ...]
    other: dict[str, tuple[str, ...]]
    #: ``words`` by their first word, and the lengths of those first words (ascending): a text of a
    #: few words looks its words' prefixes up instead of searching once for each stem.
    by_first: dict[str, tuple[str, ...]] = field(default_factory=dict)
    lengths: tuple[int, ...] = ()
    #: The first words of ``words`` by their first ``HEAD`` characters (the ones at least that long), and the
    #: lengths of the shorter first words (ascending): a word of the text is looked up by its head, so a
    #: text's words cost a look-up each, however many stems there are (``Views.present``).
    by_head: dict[str, tuple[str, ...]] = field(default_factory=dict)
    short: tuple[int, ...] = ()
    #: ``other`` without the terms holding a character outside ASCII: all an ASCII text can hold.
    other_ascii: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The stems of one word by that word (those of ``by_first`` without a space after their first word).
    alone: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: The stems of several words by their first word (only the first words that have some), each with
    #: its second word and whether a third follows (``_second_word``): what ``Views.present`` looks up
    #: before it searches the text for one.
    joined: dict[str, tuple[tuple[str, str, bool], ...]] = field(default_factory=dict)
    #: The first words each word of a text starts with (``starts``), for the words met so far.
    _starts: _PerWord = field(init=False, compare=False, repr=False)
    #: Every term of ``other``.
    other_terms: frozenset[str] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_starts", _PerWord(self.starts))
        object.__setattr__(self, "other_terms", frozenset(itertools.chain.from_iterable(self.other.values())))

    @classmethod
    def of(cls, terms: Iterable[str]) -> Stems:
        words: list[str] = []
        other: dict[str, list[str]] = {}
        for term in terms:
            if term.isascii() and term[:1].isalnum():
                words.append(term)
            else:
                other.setdefault(term[0], []).append(term)
        by_first: dict[str, list[str]] = {}
        for word in sorted(words):
            by_first.setdefault(word.partition(" ")[0], []).append(word)
        by_head: dict[str, list[str]] = {}
        for first in by_first:
            if len(first) >= HEAD:
                by_head.setdefault(first[:HEAD], []).append(first)
        return cls(
            tuple(sorted(words)),
            {char: tuple(found) for char, found in other.items()},
            {first: tuple(found) for first, found in by_first.items()},
            tuple(sorted({len(first) for first in by_first})),
            {head: tuple(firsts) for head, firsts in by_head.items()},
            tuple(sorted({len(first) for first in by_first if len(first) < HEAD})),
            {char: kept for char, found in other.items() if (kept := tuple(t for t in found if t.isascii()))},
            {first: tuple(stem for stem in found if not stem.partition(" ")[2]) for first, found in by_first.items()},
            {
                first: joined
                for first, found in by_first.items()
                if (joined := tuple((stem, *_second_word(stem)) for stem in found if stem.partition(" ")[2]))
            },
        )

    def firsts(self, words: list[str]) -> set[str]:
        """The first words of ``words`` (``by_first``) that some of ``words`` (a text's) start with."""
        return self._starts.union(words)

    def starts(self, word: str) -> tuple[str, ...]:
        """The first words of ``words`` that ``word`` starts with: the ones shorter than ``HEAD`` and
        those its head holds."""
        found = [word[:size] for size in self.short if size <= len(word) and word[:size] in self.by_first]
        found += [first for first in self.by_head.get(word[:HEAD], ()) if word.startswith(first)]
        return tuple(found)


class _PerWord:
    """An answer about each word (a tuple of strings), remembered for up to ``_KNOWN_WORDS`` words: a
    word's answer never changes, and the words of a tier's texts repeat, so most are looked up once.
    Safe to share between threads: a word's answer lost while another thread clears is found again."""

    def __init__(self, answer: Callable[[str], tuple[str, ...]]) -> None:
        self.answer = answer
        self.known: dict[str, tuple[str, ...]] = {}

    def union(self, words: list[str]) -> set[str]:
        """Every string the answers about ``words`` hold."""
        known = list(map(self.known.get, words))
        if None in known:
            known = [self._answer(word) if found is None else found for word, found in zip(words, known, strict=True)]
        return set(itertools.chain.from_iterable(cast("list[tuple[str, ...]]", known)))

    def _answer(self, word: str) -> tuple[str, ...]:
        if len(self.known) >= _KNOWN_WORDS:
            self.known.clear()
        found = self.known[word] = self.answer(word)
        return found


def _second_word(stem: str) -> tuple[str, bool]:
    """The second word of a stem of several words when it is made of word characters ("" when not),
    and whether another word follows it."""
    parts = stem.split(" ")
    return (parts[1] if _WORD.fullmatch(parts[1]) else ""), len(parts) > 2


HEAD = 3  # characters of a stem's first word it is looked up by (``Stems.by_head``)


@dataclass(frozen=True, slots=True)
class Literals:
    """Strings a rule looks for in a text (``Views.held``): those made of word characters only
    (``words``), looked up in what the text's words hold (``_Lexicon``), and the others (``rest``),
    searched for in the text."""

    words: frozenset[str]
    rest: tuple[str, ...]


@functools.lru_cache(maxsize=1024)
def literals_of(strings: frozenset[str]) -> Literals:
    """``strings`` ready for ``Views.held`` (built once per set); its words join the ``_Lexicon``."""
    words = frozenset(s for s in strings if _WORD.fullmatch(s))
    _Lexicon.learn(words)
    return Literals(words, tuple(sorted(strings.difference(words))))


class _Lexicon:
    """Every word literal a rule looks for (``literals_of``), and for each word of a text met so far,
    the literals it holds: a literal made of word characters occurs in a text exactly when one of the
    text's words holds it (an occurrence cannot cross a character that is not a word character), so a
    text's literals are the union of its words', each word's found once in the process. A new set of
    literals makes a new lexicon (what a word holds is then found again): rules' sets are made as the
    rules are first used, so this settles within a process's first texts."""

    current: _Lexicon | None = None
    _lock = threading.Lock()

    def __init__(self, literals: frozenset[str]) -> None:
        self.literals = literals
        self.by_head: dict[str, list[str]] = {}  # the literals at least ``GRAM`` long, by their first characters
        for literal in sorted(literals):
            if len(literal) >= GRAM:
                self.by_head.setdefault(literal[:GRAM], []).append(literal)
        self.short = frozenset(literal for literal in literals if len(literal) < GRAM)
        self.sizes = sorted({len(literal) for literal in self.short})
        self.held = _PerWord(self._held)

    @classmethod
    def learn(cls, words: frozenset[str]) -> None:
        with cls._lock:
            if cls.current is None or not words <= cls.current.literals:
                cls.current = _Lexicon(words | (cls.current.literals if cls.current else frozenset()))

    def _held(self, word: str) -> tuple[str, ...]:
        """The literals ``word`` holds: at each of its places, the short ones there and the longer ones
        whose first characters are there."""
        found = []
        for index in range(len(word)):
            found += [short for size in self.sizes if (short := word[index : index + size]) in self.short]
            found += [lit for lit in self.by_head.get(word[index : index + GRAM], ()) if word.startswith(lit, index)]
        return tuple(found)


GRAM = 3  # characters of a literal it is looked up by in a word (``_Lexicon.by_head``)
# Words a per-word memo keeps answers for (``_PerWord``): a tier's warm-up judges every file, and at
# 16,384 a first start's idle sidecar held some 5 MB more (28 memos), for a 9% faster warm-up.
_KNOWN_WORDS = 4_096


@dataclass(slots=True)
class Views:
    """The forms of one text the rules read, with the code-fence spans of ``folded`` and which
    literal needles occur in it."""

    raw: str
    cased: str
    folded: str
    _fences: list[int] | None = field(default=None, repr=False)
    _sentences: list[tuple[int, int]] | None = field(default=None, repr=False)
    _words: list[str] | None = field(default=None, repr=False)
    _chars: frozenset[str] | None = field(default=None, repr=False)
    _seen: dict[tuple[bool, str], bool] = field(default_factory=dict, repr=False)
    _pieces: list[str] | None = field(default=None, repr=False)
    _holding: dict[str, frozenset[int]] = field(default_factory=dict, repr=False)
    _present: dict[int, tuple[Stems, frozenset[str]]] = field(default_factory=dict, repr=False)
    _ascii: bool | None = field(default=None, repr=False)
    _word_set: frozenset[str] | None = field(default=None, repr=False)
    _lexicon: _Lexicon | None = field(default=None, repr=False)
    _lexicon_words: set[str] | None = field(default=None, repr=False)
    _holding_all: dict[int, tuple[Literals, frozenset[str]]] = field(default_factory=dict, repr=False)
    _others: dict[int, tuple[Stems, frozenset[str]]] = field(default_factory=dict, repr=False)

    def has(self, needle: str, *, raw: bool = False) -> bool:
        """Whether ``needle`` occurs in ``folded`` (or ``raw``); remembered, as rules share needles."""
        key = (raw, needle)
        found = self._seen.get(key)
        if found is None:
            found = self._seen[key] = needle in (self.raw if raw else self.folded)
        return found

    def held(self, wanted: Literals) -> list[str]:
        """The strings of ``wanted`` that occur in ``folded``: its words among the literals the text's
        words hold (``_lexicon_held``), the others searched for."""
        out = list(wanted.words.intersection(self._lexicon_held()))
        if wanted.rest:
            out += [other for other in wanted.rest if other in self.folded]
        return out

    def holding(self, wanted: Literals) -> frozenset[str]:
        """``held(wanted)`` as a set, remembered for the text per ``wanted``: the needles of every rule
        looked up at once, each rule then asking whether one of its own is among them."""
        known = self._holding_all.get(id(wanted))
        if known is None or known[0] is not wanted:
            known = self._holding_all[id(wanted)] = (wanted, frozenset(self.held(wanted)))
        return known[1]

    def _lexicon_held(self) -> set[str]:
        """The word literals of the ``_Lexicon`` that the text's words hold (every literal of a
        ``Literals`` made so far), found again if the lexicon has grown since."""
        lexicon = _Lexicon.current
        if lexicon is None:
            return set()
        if self._lexicon is not lexicon or self._lexicon_words is None:
            self._lexicon, self._lexicon_words = lexicon, lexicon.held.union(self._sorted_words())
        return self._lexicon_words

    def starts_a_word(self, stems: Stems) -> bool:
        """Whether some word of ``folded`` starts with one of ``stems.words`` (a stem of several
        words must then occur whole), or one of ``stems.other`` occurs anywhere (terms of other
        scripts, or ones that do not start with a letter). A binary search per word stem in the
        text's sorted distinct words, and only the other terms whose first character the text
        holds: hundreds of substring scans of the whole text would cost a hundred times more."""
        words = self._sorted_words()
        if len(words) * len(stems.lengths) < len(stems.words):  # a few words: their prefixes looked up
            for word in words:
                for size in stems.lengths:
                    if size > len(word):
                        break
                    for stem in stems.by_first.get(word[:size], ()):
                        if not stem.partition(" ")[2] or self.has(stem):
                            return True
        else:
            for stem in stems.words:
                first, _, rest = stem.partition(" ")
                index = bisect.bisect_left(words, first)
                if index < len(words) and words[index].startswith(first) and (not rest or self.has(stem)):
                    return True
        return self._holds_other(stems)

    def present(self, stems: Stems) -> frozenset[str]:
        """The word stems of ``stems`` (``stems.words``) that ``starts_a_word`` would find here, each as
        written in ``stems``: one look-up for the words of many rules together. Remembered for the
        text, per ``stems``."""
        known = self._present.get(id(stems))
        if known is not None and known[0] is stems:
            return known[1]
        found: set[str] = set()
        for first in stems.firsts(self._sorted_words()):  # the stems' first words that start a word here
            found.update(stems.alone[first])
            if first in stems.joined:
                found.update(self._joined_here(stems.joined[first]))
        out = frozenset(found)
        self._present[id(stems)] = (stems, out)
        return out

    def holds_any(self, every: Stems, mine: Stems) -> bool:
        """``starts_a_word(mine)``, with the word stems and the other terms of ``every`` (which holds
        all of ``mine``'s) looked up once for all the rules that ask (``present``, ``others_held``)."""
        if not self.present(every).isdisjoint(mine.words):
            return True
        return bool(mine.other) and not self.others_held(every).isdisjoint(mine.other_terms)

    def others_held(self, stems: Stems) -> frozenset[str]:
        """The terms of ``stems.other`` that occur in ``folded``, remembered for the text per ``stems``."""
        known = self._others.get(id(stems))
        if known is None or known[0] is not stems:
            found = frozenset(term for term in self._other_terms(stems) if term in self.folded)
            known = self._others[id(stems)] = (stems, found)
        return known[1]

    def _holds_other(self, stems: Stems) -> bool:
        """Whether one of ``stems.other`` occurs in ``folded``."""
        return any(self.has(term) for term in self._other_terms(stems))

    def _other_terms(self, stems: Stems) -> Iterator[str]:
        """The terms of ``stems.other`` that may occur in ``folded``: those whose first character the
        text holds, and in an ASCII text only the ASCII ones (no other can occur there)."""
        if not stems.other:
            return
        if self._ascii is None:
            self._ascii = self.folded.isascii()
        other = stems.other_ascii if self._ascii else stems.other
        if not other:
            return
        if self._chars is None:
            self._chars = frozenset(self.folded)
        for char in other.keys() & self._chars:
            yield from other[char]

    def sentences(self) -> list[tuple[int, int]]:
        """The sentence spans of ``folded`` (``sentences.sentences``), split once for every rule."""
        if self._sentences is None:
            self._sentences = list(sentences(self.folded))
        return self._sentences

    def pieces(self) -> list[str]:
        """The text of each sentence span (``sentences``), cut once for every rule: a sentence said
        again is then one string whose hash is computed once, whichever rule looks it up."""
        if self._pieces is None:
            folded = self.folded
            self._pieces = [folded[begin:end] for begin, end in self.sentences()]
        return self._pieces

    def sentences_holding(self, literals: frozenset[str]) -> list[int]:
        """The indices of the sentences (``sentences``) whose text holds one of ``literals``, in
        order: each literal's places found by substring search over the whole text, once per text
        whichever rules ask for it. The literals the text holds at all are picked first (``held``): a
        rule has up to a hundred, and few of them occur."""
        held_here = self.held(literals_of(literals))
        if not held_here:
            return []
        spans = self.sentences()
        begins: list[int] = []
        found: set[int] = set()
        for literal in held_here:
            held = self._holding.get(literal)
            if held is None:
                begins = begins or [begin for begin, _ in spans]
                held = self._holding[literal] = self._holding_one(literal, spans, begins)
            found |= held
        return sorted(found)

    def _holding_one(self, literal: str, spans: list[tuple[int, int]], begins: list[int]) -> frozenset[int]:
        text, size = self.folded, len(literal)
        count = text.count(literal)
        if count == 0:
            return frozenset()
        if count * 4 >= len(spans):  # in many sentences: asked of each
            return frozenset(index for index, piece in enumerate(self.pieces()) if literal in piece)
        out = set()
        pos = text.find(literal)
        while pos >= 0:
            index = bisect.bisect_right(begins, pos) - 1
            while index >= 0 and spans[index][1] >= pos + size:  # windows of a long sentence overlap
                out.add(index)
                index -= 1
            pos = text.find(literal, pos + 1)
        return frozenset(out)

    def _joined_here(self, joined: tuple[tuple[str, str, bool], ...]) -> list[str]:
        """The stems of several words (``Stems.joined``) that occur in ``folded``. A stem's second word,
        made of word characters, stands between two spaces when a third word follows: it is then one
        of the text's words; last, it starts one. Either is a look-up in the text's words, much
        cheaper than searching the whole text, which is done only for the stems that pass it."""
        words = self._sorted_words()
        if self._word_set is None:
            self._word_set = frozenset(words)
        out = []
        for stem, second, middle in joined:
            if second:
                if middle:
                    if second not in self._word_set:
                        continue
                else:
                    index = bisect.bisect_left(words, second)
                    if index == len(words) or not words[index].startswith(second):
                        continue
            if stem in self.folded:
                out.append(stem)
        return out

    def _sorted_words(self) -> list[str]:
        if self._words is None:
            self._words = sorted(set(_WORD.findall(self.folded)))
        return self._words

    def in_fence(self, pos: int) -> bool:
        """Whether ``pos`` in ``folded`` lies inside a fenced code block (an unclosed fence runs to the end)."""
        if self._fences is None:
            self._fences = [m.start() for m in _FENCE_LINE.finditer(self.folded)]
        return bisect.bisect_right(self._fences, pos) % 2 == 1


def normalise(text: str) -> Views:
    """Undo the evasions above; linear in ``len(text)`` (every step is one pass or one regex)."""
    cased = text
    if "&" in cased:
        cased = _unescape(_unescape(cased))
    if "%" in cased:
        cased = _PERCENT_RUN.sub(_unquote_run, cased)
        if "%" in cased:
            cased = _PERCENT_WORD.sub(_unquote_run, cased)
    if not cased.isascii():
        cased = _fold(cased)
    if "*" in cased or "~~" in cased or "__" in cased or "`" in cased or "<" in cased:
        cased = _INWORD_MARKUP.sub(_markup, cased)
    if "-\n" in cased or "- " in cased or "-\r" in cased or "-\t" in cased:
        cased = _HYPHEN_BREAK.sub(_after_letter, cased)
    return Views(raw=text, cased=cased, folded=cased.casefold())


def _unescape(text: str) -> str:
    return html.unescape(text) if _ENTITY_HINT.search(text) else text


def _unquote_run(found: re.Match[str]) -> str:
    try:
        decoded = unquote(found.group(), errors="strict")
    except UnicodeDecodeError:
        return found.group()
    return decoded if decoded.isprintable() else found.group()


def _markup(found: re.Match[str]) -> str:
    """Drop emphasis touching a word, and code marks or tags inside one; keep anything else."""
    text, start, end, mark = found.string, found.start(), found.end(), found.group()
    before = text[start - 1].isalnum() if start else False
    after = text[end].isalnum() if end < len(text) else False
    if mark[0] in "*~_":
        return "" if before or after else mark
    return "" if before and after else mark


def _after_letter(found: re.Match[str]) -> str:
    start = found.start()
    return "" if start and found.string[start - 1].isalpha() else found.group()


def _fold(text: str) -> str:
    """Replace each non-ASCII character that reads as something else; others stay as they are."""
    changes = {char: fold_char(char) for char in set("".join(_NON_ASCII.findall(text)))}
    changes = {char: out for char, out in changes.items() if out != char}
    if not changes:
        return text
    if len(text) < _LONG_FOLD:  # a short text: a table, not a pattern compiled for its characters
        return text.translate({ord(char): out for char, out in changes.items()})
    pattern = "[" + "".join(re.escape(char) for char in changes) + "]"
    return re.sub(pattern, lambda m: changes[m.group()], text)


_LONG_FOLD = 4096  # characters from which one pattern of the characters to replace beats a per-character table
