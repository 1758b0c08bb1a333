"""Turn user text into an FTS5 MATCH expression that can never be FTS5 syntax.

Every whitespace-separated token becomes a double-quoted FTS5 string (quotes doubled), so
``AND``, ``NEAR(a b)``, ``col:x``, ``hel*`` and ``"hello`` are all searched as literal text.
Tokens are OR-ed: BM25 ranks chunks that hold more of the words first, and a natural-language
question still finds the chunk that holds only its key terms. Stopwords are dropped when other
words remain.
"""

from __future__ import annotations

import re

from sidecar.errors import BadRequest

__all__ = [
    "MAX_QUERY_BYTES",
    "MAX_QUERY_TERMS",
    "MAX_QUERY_TOKENS",
    "STOPWORDS",
    "build_match",
    "check_query",
    "quote_word",
    "terms",
]

MAX_QUERY_TERMS = 64  # distinct words searched; the rest of a long query is ignored
MAX_QUERY_BYTES = 4096  # longer is a 400 query_too_long: a query is a question, not a document
MAX_QUERY_TOKENS = 256  # whitespace-separated tokens, the same
_WORD = re.compile(r"\w", re.UNICODE)
_SPLIT = re.compile(r"\s+")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)


def check_query(query: object) -> str:
    """Validate a client's query: a non-empty string without NUL bytes, at most
    ``MAX_QUERY_BYTES`` of UTF-8 and ``MAX_QUERY_TOKENS`` tokens (checked first, and cheaply: a
    megabyte of query must not cost the event loop what searching it would)."""
    if not isinstance(query, str):
        raise BadRequest("query must be a string", code="invalid_query")
    if len(query) > MAX_QUERY_BYTES or (
        not query.isascii() and len(query.encode("utf-8", "replace")) > MAX_QUERY_BYTES
    ):
        raise BadRequest(f"query is over {MAX_QUERY_BYTES} bytes", code="query_too_long")
    if len(query.split(None, MAX_QUERY_TOKENS)) > MAX_QUERY_TOKENS:
        raise BadRequest(f"query has over {MAX_QUERY_TOKENS} words", code="query_too_long")
    if "\x00" in query:
        raise BadRequest("query must not contain NUL bytes", code="invalid_query")
    if not query.isascii():
        try:
            query.encode("utf-8")
        except UnicodeEncodeError:
            raise BadRequest("query is not valid Unicode (a lone surrogate)", code="invalid_query") from None
    if not query.strip():
        raise BadRequest("query must not be empty", code="empty_query")
    return query


def terms(query: str) -> list[str]:
    """The distinct searchable tokens of ``query``, in order, stopwords dropped if others remain."""
    seen: dict[str, None] = {}
    for raw in _SPLIT.split(query):
        token = raw.strip()
        if token and _WORD.search(token) and token.lower() not in seen:
            seen[token.lower()] = None
    words = list(seen)
    content = [w for w in words if _bare(w) not in STOPWORDS]
    return (content or words)[:MAX_QUERY_TERMS]


def _bare(token: str) -> str:
    return "".join(ch for ch in token if ch.isalnum())


def build_match(query: str) -> str | None:
    """The MATCH expression for ``query``, or None when it holds nothing searchable."""
    words = terms(query)
    if not words:
        return None
    return " OR ".join(quote_word(w) for w in words)


def quote_word(word: str) -> str:
    """One user word as an FTS5 string: literal text, never syntax."""
    return '"' + word.replace('"', '""') + '"'


# English irregular verbs (base, past, past participle) and irregular plurals, from the standard
# lists of English grammar, each group's forms the ones porter stemming does not bring together
# (``came`` is not stemmed to ``come``, nor ``children`` to ``child``). A query word also matches
# the other forms of its group (:func:`sidecar.index.tokens.with_forms`). Left out: the forms of
# ``be``, ``have`` and ``do`` (stopwords), verbs whose forms are all one word (``put``, ``cut``),
# and forms that are more often another common word (``bit`` of bite, ``ground`` of grind,
# ``wound`` of wind, ``bound`` of bind, ``bore``/``born`` of bear, ``lay`` of lie, ``dice``).
_IRREGULAR = """
arise arose arisen | awake awoke awoken | bear borne | beat beaten | become became
begin began begun | bend bent | bite bitten | bleed bled | blow blew blown | break broke broken
breed bred | bring brought | build built | burn burnt | buy bought | catch caught
choose chose chosen | cling clung | come came | creep crept | deal dealt | dig dug
draw drew drawn | dream dreamt | drink drank drunk | drive drove driven | eat ate eaten
fall fell fallen | feed fed | feel felt | fight fought | find found | flee fled | fling flung
fly flew flown | forbid forbade forbidden | forget forgot forgotten | forgive forgave forgiven
freeze froze frozen | get got gotten | give gave given | go went gone | grow grew grown
hang hung | hear heard | hide hid hidden | hold held | keep kept | kneel knelt | know knew known
lay laid | lead led | lean leant | leap leapt | learn learnt | leave left | lend lent | lie lain
light lit | lose lost | make made | mean meant | meet met | pay paid | prove proven
ride rode ridden | ring rang rung | rise rose risen | run ran | say said | see saw seen
seek sought | sell sold | send sent | sew sewn | shake shook shaken | shine shone | shoot shot
show shown | shrink shrank shrunk | sing sang sung | sink sank sunk | sit sat | sleep slept
slide slid | sling slung | speak spoke spoken | speed sped | spend spent | spill spilt
spin spun | spit spat | spring sprang sprung | stand stood | steal stole stolen | stick stuck
sting stung | stink stank stunk | strike struck stricken | string strung | strive strove striven
swear swore sworn | sweep swept | swell swollen | swim swam swum | swing swung | take took taken
teach taught | tear tore torn | tell told | think thought | throw threw thrown
tread trod trodden | understand understood | wake woke woken | wear wore worn | weave wove woven
weep wept | win won | withdraw withdrew withdrawn | wring wrung | write wrote written
child children | man men | woman women | person people | mouse mice | goose geese | foot feet
tooth teeth | louse lice | ox oxen
"""


def irregular_groups() -> list[tuple[str, ...]]:
    """The groups of :data:`_IRREGULAR`: each a word's forms that porter stemming keeps apart."""
    return [tuple(group.split()) for line in _IRREGULAR.split("\n") for group in line.split("|") if group.strip()]
