"""The multilingual layer: the override, leak and concealment intents in other languages.

Per sentence, the same conjunctions the English rules ask for, from the words of ``lexicon``: an
order to set aside with the instructions it sets aside and a word that makes them the earlier
ones ("ignora las instrucciones anteriores"); the system prompt with a verb that reveals it; a
secret with a verb that sends it; hiding with the user as the one kept out. A sentence that names
an attack, an injection or an example in any of these languages is a mention, not a use.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sidecar.scanner.context import BLOCK, FLAG
from sidecar.scanner.lexicon import KEYS, LEXICON, NEGATIONS
from sidecar.scanner.normalise import normalise
from sidecar.scanner.rule import Rule, per_sentence

__all__ = ["MULTILINGUAL_RULES"]

_UNSPACED = frozenset(("zh", "ja", "ko"))


def _folded(term: str) -> str:
    return normalise(term).folded.strip()


def _compile(key: str) -> re.Pattern[str]:
    """One pattern for a key over every language. The word-start check is factored out of the
    alternation (one lookbehind, not one a term), which keeps a search about fifteen times faster."""
    spaced: set[str] = set()
    unspaced: set[str] = set()
    for lang, words in LEXICON.items():
        for term in words[key].split("|"):
            (unspaced if lang in _UNSPACED else spaced).add(re.escape(_folded(term)).replace(r"\ ", r"\s+"))
    return re.compile(rf"(?<!\w)(?:{_longest_first(spaced)})|{_longest_first(unspaced)}")


def _longest_first(terms: set[str]) -> str:
    return "|".join(sorted(terms, key=len, reverse=True))


_RX = {key: _compile(key) for key in KEYS if key != "negation"}
# A negation ending in a space is a word of its own: it must start a word too ("না " is not the
# end of "নির্দেশনা ").
_NEGATION = re.compile(
    "(?:"
    + "|".join(
        (r"(?<!\w)" if t.endswith(" ") else "") + re.escape(_folded(t) + (" " if t.endswith(" ") else ""))
        for t in NEGATIONS.split("|")
    )
    + r")\s*$"
)
_NEGATABLE = frozenset(("null", "reveal", "send"))


def _needles(*keys: str) -> tuple[str, ...]:
    """The first word of each folded term: a rule runs only when one occurs in the text."""
    terms = {_folded(t).split()[0] for words in LEXICON.values() for key in keys for t in words[key].split("|")}
    return tuple(sorted(terms))


def _all_of(level: int, *keys: str) -> Callable[[str], tuple[int, int, int] | None]:
    """A sentence judge: ``level`` when a term of every key occurs, unless the sentence names an
    attack or an example."""

    def judge(sentence: str) -> tuple[int, int, int] | None:
        found = []
        for key in keys:
            match = _RX[key].search(sentence)
            if match is None:
                return None
            if key in _NEGATABLE and _NEGATION.search(sentence, max(0, match.start() - 12), match.start()):
                return None
            found.append(match.span())
        if _RX["described"].search(sentence):
            return None
        return level, min(s for s, _ in found), max(e for _, e in found)

    return judge


def _set_aside(sentence: str) -> tuple[int, int, int] | None:
    return _all_of(BLOCK, "null", "target", "prior")(sentence) or _all_of(BLOCK, "null", "told")(sentence)


def _conceal(sentence: str) -> tuple[int, int, int] | None:
    return _all_of(BLOCK, "hide", "user", "null")(sentence) or _all_of(FLAG, "hide", "user")(sentence)


def _rule(
    category: str, name: str, needles: tuple[str, ...], judge: Callable[[str], tuple[int, int, int] | None]
) -> Rule:
    return Rule(category, f"multilingual.{name}", needles, "folded", per_sentence(judge), "multilingual")


MULTILINGUAL_RULES: tuple[Rule, ...] = (
    _rule("instruction_override", "set_aside", _needles("null"), _set_aside),
    _rule("exfiltration", "reveal_prompt", _needles("sysprompt"), _all_of(BLOCK, "sysprompt", "reveal")),
    _rule("exfiltration", "send_secret", _needles("send"), _all_of(BLOCK, "send", "secret")),
    _rule("tampering", "conceal", _needles("hide"), _conceal),
)
