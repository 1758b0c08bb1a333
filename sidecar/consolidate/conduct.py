"""Rules of conduct and preferences as people state them: how things should be done.

A sentence is a rule when it says how things are to be done in one of the forms people use for
house rules, whatever the trade:

- a modal or an order: "must", "should", "have to", "need to", "are to", "is not to", "ought to";
- a standing word: "always", "never", "nobody", "no one", "every time", "no exceptions",
  "without fail", "at all times", "as a rule", "from now on", "ever", "we don't", "in future",
  "non-negotiable", "rule of thumb", "as agreed";
- a preference: "I prefer", "I'd rather", "rather than", "instead of", "I want", "I like",
  "I don't want", "I expect", "insist on", or an idiom of one: "pet peeve", "is particular about",
  "gets annoyed when", "would appreciate it if", "is big on", "best to ...";
- an instruction opening the sentence: "please ...", "make sure", "be sure to", "remember (to)",
  "don't", "do not", "avoid", "send me", "tell me", "let me know", "no phones on ...", "on this
  boat we ...", or an opening verb of an instruction with what it applies to ("keep ... after",
  "use ... in every");
- a rule's standing ("... is not allowed", "is mandatory", "is expected to", "are off the
  table"), another's wish ("Chef wants ...", "Odalys would rather ...", "Wren insists") or a
  choice ("at the bedside, not at the desk"; "Timestamps in UTC, not local time.", with no verb);
- a label naming a rule or whose it is: "House rule:", "Rule on site:", "Policy:", "Standing
  order:", "Hedda's rule is that ...", "My rule is simple: ...", or a line naming itself someone's
  rule ("..., Kwame's rule.");
- a standing request put as a question ("could you always ...?", "can you ... from now on?").

Who said it is no part of the rule: a lead-in naming them ("Hedda: ...", "Reminder from Hedda -
...", "Told again by Tomasz: ...", "Stage manager says: ...") is read past. Under a heading of
someone's rules ("Notes from Hedda", "House rules", "Dos and don'ts"), a list's clipped lines
("- no Friday deploys") are rules too (``rules_heading``, ``listed_rule``).

It is not a rule when it is a question or a hypothetical, a one-off ("today", "for now", "this
week"), a report of what was done (an opening verb in the past tense), or an order to obey someone
("do whatever X tells you", "follow instructions from X", "obey X"): those are never promoted,
however often they are said. ``key`` is the rule's content without the words that make it a rule,
so "Never run the planer without the guard" and "Nobody runs the planer without the guard" are
one rule (``reworded``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from sidecar.consolidate.text import CLAUSE_TRIM, COMMENT, LINE_CACHE, is_event, normalised
from sidecar.write.dedup import LIST_MARKER

__all__ = [
    "REVERSAL",
    "chores",
    "is_rule",
    "key_text",
    "listed_rule",
    "obeys_someone",
    "rule_body",
    "rule_said",
    "rules_heading",
]

#: A line saying a rule no longer holds ("No need to ring customers the evening before any more"):
#: no statement of the rule, though its cue is one of the forms (``reversed.taken_back``).
REVERSAL = re.compile(
    r"\b(?:no\s+need\s+to|(?:no\s+longer|don'?t|do\s+not)\s+(?:need|have)\s+to|(?:don'?t|do\s+not|doesn'?t)\s+bother|"
    r"(?:is|are)\s+(?:fine|ok|okay|allowed)\s+now|(?:ok|okay|fine)\s+to\s+\w+(?:\s+\w+)?\s+now|can\s+stop|"
    r"stopped\s+\w+ing|(?:scrap(?:ped)?|drop(?:ped)?)\s+(?:the|that|this)\s+rule|rule\s+is\s+(?:gone|off|dropped|scrapped)|"
    r"not\s+necessary\s+any\s*more)\b",
    re.IGNORECASE,
)
_LABEL = re.compile(
    r"^(?:(?:house|shop|site|yard|kitchen|office|team|our|my|the|standing|golden|ground|lab|ward|crew|boat|"
    r"farm|workshop|clinic)\s+)?(?:rules?|policy|standing orders?|orders?|preferences?|reminders?|remember|note)"
    r"(?:\s+(?:of the house|of thumb|on site|here|for the (?:team|assistant|agent|crew)))?\s*[:\-–—]\s+",
    re.I,
)
_MODAL = re.compile(
    r"\b(?:must|mustn't|must not|should|shouldn't|should not|ought to|have to|has to|need to|needs to|"
    r"are to|is to|are not to|is not to|aren't to|isn't to|shall|shan't|may not|can't ever|cannot ever)\b"
    r"|\b(?:i\s+am|i'm|we\s+are|we're)\s+(?:not\s+|never\s+|always\s+)?to\b"
    r"|\b(?:is|are|'s|'re)\s+(?:not\s+|never\s+|always\s+)?(?:allowed|permitted|forbidden|banned|mandatory|"
    r"required|compulsory|expected to|essential|important|vital|a must|off limits|not on|off the table|a no-go|"
    r"a no-no|out of bounds|not an option)\b",
    re.I,
)
_STANDING = re.compile(
    r"\b(?:always|never|nobody|no one|no-one|every time|each time|no exceptions?|without (?:fail|exception)|"
    r"at all times|as a rule|under no circumstances|from now on|going forward|on no account|without asking|ever|no excuses|no matter what|whatever happens|"
    r"in (?:the )?future|non-negotiable|full stop|no ifs|every single time|rule of thumb|as agreed|we(?:'ve| have)? agreed (?:that|to))\b"
    r"|\b(?:we|you|i|they|everyone|everybody)\s+(?:do not|don't|never|won't|will not)\b",
    re.I,
)
_PREFERENCE = re.compile(
    r"\b(?:i|we|they|he|she|the (?:user|operator|boss|owner|client|customer))(?:\s+|(?='d\b))(?:really\s+|much\s+|strongly\s+)?"
    r"(?:prefers?|'d rather|would rather|want|wants|like|likes|'d like|would like|expects?|insists? on|"
    r"'d prefer|don't want|do not want|doesn't want|does not want|hate|hates|can't stand|dislikes?)\b"
    r"|\b(?:wants|likes|prefers|expects|insists on|is fussy about|hates|dislikes|can't stand|"
    r"doesn't want|does not want|doesn't like|does not like)\b"
    r"|\b(?:would|'d)\s+(?:much\s+|really\s+)?(?:rather|prefer)\b"
    r"|\b(?:pet peeve|would appreciate it if|(?:is|'s|are|'re)\s+(?:very\s+|really\s+)?(?:big|keen)\s+on|"
    r"(?:very\s+|really\s+)?(?:particular|picky|strict|fussy)\s+about|(?:gets?|is|'s)\s+(?:annoyed|upset|cross|irritated)\s+"
    r"(?:when|if|about)|(?:like|likes|hate|hates)\s+it\s+when|[A-Z][\w-]*'s\s+preference|(?:his|her|their)\s+preference)\b"
    r"|^(?:best|better)\s+to\b"
    r"|\b(?:rather than|instead of|in preference to|preferably|my preference|our preference|suits? (?:me|us)|"
    r"works? best for (?:me|us))\b|^(?:insist on)\b|,\s+not\s+(?:at|in|on|by|with|via|through|the|a|an|my|our)\b",
    re.I,
)
#: A choice that closes a line of no verb ("All timestamps in UTC, not local time."): where the line
#: has a verb it states a fact and corrects it ("The staging db is pg-7, not pg-6.").
_CHOICE = re.compile(
    r"^(?P<chosen>[^,]+),\s+not\s+(?!(?:yet|sure|bad|much|really|quite|exactly|so|too|that|very|even|just|only|"
    r"always|all|ideal|great|good|ok|okay|now|here|there|me|us|him|her|them|it|this|one|many|enough)\b)"
    r"[\"'‘“]?[\w'-]+(?:\s+[\w'’-]+){0,3}[\"'’”]?[.!]?$",
    re.I,
)
_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|'s|'re|has|have|had|do|does|did|can|will|would|could|goes|go|went|gets?|got|"
    r"runs?|ran|lives?|sits?|stays?|uses?|used|takes?|took|makes?|made|comes?|came|looks?|seems?)\b|\w+ed\b",
    re.I,
)
#: An instruction by its marker: an opening word or phrase that orders whatever follows it
#: ("please", "make sure", "don't", "stick to", "no phones on ...", "on this boat we ..."), or what
#: is wanted followed by "please" ("Amounts in minor units please, with the currency code").
_ORDER_MARKED = re.compile(
    r"^(?:please|pls|plz|kindly|make sure|be sure|remember|don't forget|don't|do not|avoid|stick to|nothing\s+(?:\w+\s+){1,5}?without|no\s+(?!one\b)[\w-]+(?:\s+[\w-]+)?\s+(?:on|in|at|near|"
    r"inside|outside|past|before|after|during|without|while|beyond|unless)\b|(?:on|in|at|round|around)\s+(?:this|our)"
    r"\s+[\w-]+,?\s+(?:we|the|you|everyone|nobody)\b)"
    r"|^(?:[\w'/%.-]+\s+){1,6}?(?:please|pls|plz)\b|^(?:[\w'/%.-]+\s+){2,5}[\w'/%.-]+,\s+(?:please|pls|plz)\b",
    re.I,
)
#: An instruction with no marker: a verb asking the operator to be told ("send me", "let me
#: know"), or an opening verb of the forms house rules use with what it applies to ("keep ...
#: after", "use ... in every"). Filled with the day's object, such lines are errands (``chores``).
_ORDER_VERB = re.compile(
    r"^(?:send me|tell me|let me know|ask me|text me|call me|email me|check with me|keep me)\b"
    r"|^(?:keep|use|wear|lock|label|check|put|leave|write|sign|store|clean|wash|wipe|close|shut|turn|"
    r"switch|quote|copy|cc|include|mention|save|confirm|reply|greet|clear|"
    r"park|cover|tidy|wait|stop|send|give|ask|tell|call|bring|take|get|let|show|run|"
    r"double-check|treat|never|always)\s+(?!(?:\w+\s+)?(?:is|are|was|were|has|have|had|goes|gets|runs|needs)\b)"
    r"(?:[\w'-]+,?\s+){0,6}?(?:every|each|any|all|before|after|until|unless|"
    r"whenever|first|only|by|within|under|over|in|on)\b",
    re.I,
)
#: An instruction the writer reports being given: "Dana asked me to ...", "she'd rather we ...",
#: "he told us never to ...", "wants me to".
_REPORTED = re.compile(
    r"\b(?:ask(?:ed|s)?|t(?:old|ells?)|remind(?:ed|s|ing)?|instruct(?:ed|s)?|wants?|wanted|needs?|likes?|prefers?|"
    r"expects?|(?:'d|would)\s+(?:much\s+|really\s+)?(?:like|love|prefer|want))\s+(?:me|us)\s+"
    r"(?:again\s+|always\s+|never\s+|please\s+)?(?:not\s+|never\s+)?to\b"
    r"|\b(?:i|we|you|they|he|she)'d\s+(?:much\s+|really\s+)?rather\b"
    # told without a "me": "I was told not to ...", "I've been asked to ...", "Reminded again to ..."
    r"|^(?:i|we)?\s*(?:(?:was|were|am|'m|are|'re|'ve\s+been|have\s+been|had\s+been|got)\s+)?"
    r"(?:told|asked|reminded|instructed|warned)\s+(?:again\s+|once\s+more\s+)?(?:not\s+|never\s+|always\s+)?to\b"
    # someone's say over what the writer does: "Tobias has me ...", "she was firm that I ..."
    r"|\bhas\s+(?:me|us)\s+(?!to\b)[a-z]+|\b(?:firm|clear|adamant|insists?|insisted)\s+(?:that\s+)?(?:i|we)\s+"
    r"|(?:\b(?-i:[A-Z])[\w'-]*|\b(?:she|he|they))\s+(?:said|says)\s+(?:always\s+|never\s+|not\s+)?to\s+"
    r"(?!(?:be|me|us|him|her|them|the|a|an|expect)\b)[a-z]+"
    r"|\bmade\s+(?:it\s+)?clear\s+that\b",
    re.I,
)
#: What the writer does, told as a habit: "I quote prices including VAT", "so I never ...". A
#: rule once the line says whose wish it is (``_OWNED``).
_HABIT = re.compile(
    r"^(?:(?:so|and|then|but|same as ever|as ever|as always|as usual),?\s+)?(?:i|we)\s+"
    r"(?:always\s+|never\s+|still\s+|only\s+|don't\s+|do\s+not\s+)?(?P<verb>[a-z]+)\b",
    re.I,
)
#: Words of a habit that is no course of action: thinking, feeling, having, helping verbs.
_NO_HABIT = frozenset(
    str.split(
        "am was were have has had do did will would could should can may might must shall think thought hope "
        "guess reckon know knew feel felt see saw wonder believe suppose mean meant need want like love hate "
        "got get found find noticed notice heard hear keep kept forget forgot remember"
    )
)
#: Whose wish a line says it is: "as she wants", "the way Tobias likes it", "per Marguerite",
#: "Tobias insists", "her orders", "Marguerite's standing instruction", "he won't have it".
_OWNED = re.compile(
    r"\b(?:as|the\s+way|how)\s+(?:she|he|they|[A-Z][\w'-]*)\s+(?:wants?|wanted|likes?(?:\s+it)?|asked|prefers?|expects?|says?|"
    r"requires?|asks?)\b"
    r"|\b(?:she|he|they|[A-Z][\w'-]*)\s+(?:insists?|insisted|won't\s+have\s+it)"
    r"|\b(?:[A-Z][\w-]*'s?|her|his|their)\s+(?:standing\s+)?(?:orders?|rules?|instructions?|wish(?:es)?)\b"
    r"|(?:^|[,;(]\s*|\s[-–—]\s+)per\s+[A-Z][\w'-]*"
)
#: An instruction with no marker word: an opening verb and what it acts on ("Ring the client before
#: any reprint", "Put the guard down between cuts"); not a past tense, a gerund or a noun of the
#: words below, which open notes' lines before an article as verbs do.
_IMPERATIVE = re.compile(
    r"^(?P<verb>[a-z]+)\s+(?:the|a|an|every|each|any|all|her|him|them|me|us|my|our|your|their|his|its|no)\s+\w",
    re.I,
)
_NOT_VERBS = frozenset(
    str.split(
        "all half most some many much none both each every any no not only just also still even then now so and "
        "but or if when once after before for from with without about at in on by to of over under into onto as "
        "like unlike same quiet busy good great nice new next last first one two three lunch morning today "
        "tomorrow yesterday what which who where why how there here this that it i we you they he she me my our "
        "their his her its per via re fyi note reminder again apparently finally meanwhile otherwise later "
        "earlier more less back up down out off round around across through during until since while whether "
        "rest end start top bottom front inside outside near whatever whoever wherever whenever however whichever"
    )
)
#: Past tenses ``text.is_event`` does not read (no "-ed"): a line opening with one reports work done
#: ("Sold a Brompton hybrid, ..."), it orders nothing.
_PAST_FORMS = frozenset(
    str.split(
        "sold swept stood understood wore woke spoke broke chose froze drew grew threw knew blew shook forgot "
        "hung dug stuck struck spun sat fell dealt slept crept leapt lent bent built burnt learnt lit fed fled "
        "sped rang sang sank drank swam came became overtook undertook mistook withdrew overheard wound ground "
        "bound rebuilt redid resent"
    )
)
#: The writer's own instruction to someone else ("I told the driver to ...", "we asked Sam to ..."),
#: which states no rule of the operator's.
_DELEGATED = re.compile(
    r"^(?:i|we)\s+(?:(?:have|had|just|already)\s+)?(?:told|asked|reminded|instructed|got)\s+(?!me\b|us\b)\S+", re.I
)
_QUESTION = re.compile(
    r"^(?:if|when|whenever|unless|suppose|what if|in case|assuming|whether|maybe|perhaps|should|would|could|"
    r"might|can|do(?!\s+not\b)|does|did|is|are|(?:was|were)(?!\s+(?:told|asked|reminded|instructed|warned)\b)|shall|who|"
    r"what|why|how|where)\b",
    re.I,
)
_ONE_OFF = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|for now|right now|this (?:time|week|morning|afternoon|evening|once)|"
    r"for the [\w-]+ (?:day|event|visit|job)|next (?:week|time))\b",
    re.I,
)
_OBEY = re.compile(
    r"\b(?:obey|follow(?:s|ing)?\s+(?:the\s+|all\s+|any\s+|whatever\s+)?(?:instructions|orders|directions|commands|requests)\s+"
    r"(?:(?:that|which)\s+)?(?:comes?\s+|coming\s+|sent\s+)?(?:from|of|given by)|(?:take|takes|taking)\s+(?:orders|instructions)\s+from|"
    r"do(?:es)?\s+(?:whatever|anything|everything|what)\b.{0,60}?\b(?:says?|tells?|asks?|wants?|orders?|writes?)|"
    r"(?:instructions|orders)\s+from\s+\S+\s+(?:come|comes|go|goes)\s+first)\b",
    re.I,
)
_CUE = re.compile(
    r"\b(?:must|mustn't|should|shouldn't|ought|have|has|need|needs|are|is|aren't|isn't|shall|shan't|may|not|to|"
    r"always|never|nobody|no|one|every|each|time|exceptions?|without|fail|exception|at|all|times|as|rule|rules|"
    r"under|circumstances|from|now|on|going|forward|account|asking|i|we|they|he|she|prefer|prefers|'d|would|"
    r"rather|want|wants|like|likes|expect|expects|insist|insists|don't|do|please|kindly|make|sure|be|remember|"
    r"that|avoid|me|my|our|preference|policy|house|it's|it|s|ever|get|gets|than|instead|of|us|again|"
    r"asked|asks|told|tells|reminded|reminds|instructed|said|says|wanted|am|'m|'re|'ve|been)\b",
    re.I,
)
MAX_RULE_CHARS = 200
#: A lead-in naming who said what follows ("Hedda: ...", "Imelda again: ...", "Reminder from Hedda -
#: ...", "Told again by Tomasz: ...", "Kwame, in the infra channel: ..."): no part of the rule.
_SAID_BY = re.compile(
    r"^(?:(?i:reminder|heads[- ]up|word|note|message|ask|request|nudge|ping|feedback)\s+(?i:from)\s+[A-Z][\w'-]*"
    r"|(?i:told|asked|reminded)\s+(?i:(?:again|once\s+more)\s+)?(?i:by)\s+[A-Z][\w'-]*"
    r"|[A-Z][\w'-]*(?:\s+(?i:again|says|said|wrote|asks|asked|adds|added))?"
    r"|(?i:the\s+)?[\w'-]+(?:\s+[\w'-]+)?\s+(?i:says|said|wrote|asks|asked)(?=\s*:))"
    r"(?:\s*(?::|\s[-–—])\s+|,?\s+(?i:in|on|at|via|over|during)\s+[^:]{1,40}?:\s+)"  # where, before a colon only
)
#: A rule's label naming whose rule it is: "Hedda's rule is that ...", "My rule is simple: ...",
#: "Saoirse's rule: ...", "Our policy: ...".
_OWNED_LABEL = re.compile(
    r"^(?:[A-Z][\w-]*(?:'s|s')|(?i:my|our|his|her|their))\s+(?:(?i:house|golden|standing|ground|one|first|only|team|"
    r"new|strict|usual|simple)\s+)?(?i:rules?(?:\s+of\s+thumb)?|polic(?:y|ies)|(?:standing\s+)?(?:orders?|instructions?|"
    r"requests?)|asks?|notes?)"
    r"(?:\s+(?i:is|are)(?:\s+(?i:simple|clear|short))?)?(?:\s+(?i:that)\b|\s*[:\-–—])\s*"
)
#: A line that names itself someone's rule ("..., Kwame's rule.", "- Imelda's standing instruction.")
#: or says how firmly someone wants it ("Kwame insists", "Tomasz was firm on that").
_NAMED_RULE = re.compile(
    r"(?:\b[A-Z][\w-]*'s|\b(?i:her|his|their|our|my))\s+(?:(?i:house|standing|golden|strict|usual|one)\s+)?"
    r"(?i:rules?(?:\s+of\s+thumb)?|(?:standing\s+)?requests?|standing\s+(?:orders?|instructions?))\b"
    r"|\b(?:[A-Z][\w'-]*|(?i:she|he|they))\s+(?i:insists|insisted|won't\s+have\s+it|(?:is|was)\s+(?:firm|adamant|strict)"
    r"\s+(?:on|about)\s+(?:that|this|it)\b)"
)
#: A request put as a question that sets a standing course ("can you keep the rota in the calendar
#: from now on?", "Could you always put the ticket number in the subject?").
_REQUEST = re.compile(r"^(?:can|could|would|will)\s+you\s+(?:please\s+)?(?P<ask>.+?)[\s?]*$", re.I)


def rule_body(text: str) -> str | None:
    """The sentence of ``text`` (one line) that states a rule of conduct or a preference, without
    its list marker and label; None when the line states none (module docstring)."""
    read = _rule_read(text)
    return None if read is None else read[1]


def rule_said(text: str) -> str | None:
    """``rule_body`` with the lead-in naming who said it ("Dana again: ..."), as the line says it:
    what tells one line's wording of a rule from another's ("Dana again: please never ..." and
    "reminder: please never ..." are two wordings of the rule "please never ...")."""
    read = _rule_read(text)
    return None if read is None else read[0] + read[1]


@lru_cache(maxsize=LINE_CACHE)
def _rule_read(text: str) -> tuple[str, str] | None:
    """The lead-in naming who said a rule (or "") and the rule's sentence (``rule_body``)."""
    line = LIST_MARKER.sub("", COMMENT.sub(" ", text)).strip().replace("’", "'").replace("**", "")
    if not line or len(line) > MAX_RULE_CHARS or line.startswith(("#", ">", "|")):
        return None
    labelled = _LABEL.match(line) or _OWNED_LABEL.match(line)
    body = line[labelled.end() :] if labelled else line
    said_by = _SAID_BY.match(body)
    lead = said_by.group(0) if said_by and not labelled else ""
    body = body[len(lead) :]
    body = re.sub(r"^(?:and|also|so|ok|okay|but|again|reminder)\b[,:]?\s+", "", body, flags=re.I).strip()
    request = _REQUEST.match(body)
    if request and _STANDING.search(request["ask"]):
        body = request["ask"]  # asked as a question, set as a standing course
    if not body or body.endswith("?") or _QUESTION.match(body) or _ONE_OFF.search(body):
        return None
    if _DELEGATED.match(body):
        return None  # the writer's own instruction to a third party: no rule of the operator's
    if _REPORTED.search(body):
        return lead, body  # "Dana asked me to ...": the operator's instruction, in the writer's words
    if is_event(normalised(body)):
        return None
    cued = labelled is not None and re.search(
        r"rule|polic|order|instruction|request|\bask|preference|remember", labelled.group(0), re.I
    )
    if (
        cued
        or _NAMED_RULE.search(body)
        or _MODAL.search(body)
        or _STANDING.search(body)
        or _PREFERENCE.search(body)
        or _ordered(body)
        or _chose(body)
    ):
        return lead, body
    if _course(body) and (_OWNED.search(body) or _imperative(body)):
        return lead, body  # what the writer does as someone wants it, or an instruction with no marker word
    return None


def _chose(body: str) -> bool:
    """Whether ``body`` is a choice said without a verb ("Timestamps in UTC, not local time."); a
    value put right ("Backups at 02:00, not 03:00.") is a fact."""
    chosen = _CHOICE.match(body)
    return (
        chosen is not None
        and _VERB.search(chosen["chosen"]) is None
        and not re.search(r"\d", body[chosen.end("chosen") :])
    )


def _ordered(body: str) -> bool:
    """Whether ``body`` opens as an instruction: by its marker or by its verb and what it applies to."""
    return _ORDER_MARKED.match(body) is not None or _ORDER_VERB.match(body) is not None


def _course(body: str) -> bool:
    """Whether ``body`` opens with a course of action: a habit of the writer's ("I quote ...") or an
    instruction ("Ring the client ...")."""
    habit = _HABIT.match(body)
    if habit:
        verb = habit["verb"].lower()
        return verb not in _NO_HABIT | _PAST_FORMS and not is_event(verb) and not _gerund(verb)
    return _imperative(body)


def _gerund(word: str) -> bool:
    """Whether ``word`` ends in "-ing" after a stem of its own ("checking"; not "ring", "bring")."""
    return word.endswith("ing") and any(ch in "aeiouy" for ch in word[:-3])


def _imperative(body: str) -> bool:
    """Whether ``body`` opens with a verb of an instruction and what it acts on (``_IMPERATIVE``)."""
    found = _IMPERATIVE.match(body)
    if not found:
        return False
    verb = found["verb"].lower()
    plural = verb.endswith("s") and not verb.endswith("ss")
    return (
        verb not in _NOT_VERBS | _PAST_FORMS
        and not is_event(verb)
        and not _gerund(verb)
        and not plural
        and not _adverb(verb)
    )


def _adverb(word: str) -> bool:
    """Whether ``word`` is an adverb in "-ly" ("mostly", "usually"; not "reply", "supply", "tally")."""
    return word.endswith("ly") and len(word) > 5 and not word.endswith(("ply", "fly"))


#: Words by which a bare instruction says when or to what it always applies ("... before any
#: reprint", "... between cuts", "quote every price ..."): a standing course, not one errand.
_GENERAL = re.compile(r"\b(?:any|every|each|all|whenever|unless|between)\b", re.I)
#: A mould of errands: bare instructions that open with the same words and go on to as many
#: different things as this ("Update the log for Bay 3", "... for Bay 5", "... for the yard").
CHORE_FILLS = 3
_CHORE_HEAD = 3


def _bare(text: str) -> str | None:
    """The body of ``text`` when it is a rule only as an instruction with no marker word and no word
    of a standing course (``_GENERAL``), its words normalised; None otherwise."""
    body = rule_body(text)
    if body is None or _GENERAL.search(body) or _ORDER_MARKED.match(body) or "please" in body.lower():
        return None
    if _MODAL.search(body) or _STANDING.search(body) or _PREFERENCE.search(body) or _REPORTED.search(body):
        return None
    if _OWNED.search(body) or _LABEL.match(LIST_MARKER.sub("", text).strip()):
        return None
    return normalised(body)


def chores(lines: Iterable[str]) -> set[str]:
    """The lines of ``lines`` that are errands, not rules: bare instructions (no marker word, no word
    of a standing course) whose first words open at least ``CHORE_FILLS`` different wordings among
    ``lines`` ("Order a new fob for Flat 9", "Order a new fob for No 12", "Order a new fob for the
    office"), or whose words but one, past the first, are those of as many wordings that each say
    another word there ("Refactor the billing-api config loader", "... the ui-kit config loader",
    "... the db-utils config loader"): one mould filled with the day's object, as a routine line
    is, however often each fill comes back. A rule said again keeps its object and changes its
    verb or small words ("ring" / "phone the client before any reprint"), so it fills no such
    mould."""
    words = {line: body.split() for line in dict.fromkeys(lines) if (body := _bare(line))}
    fills: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for said in words.values():
        if len(said) > _CHORE_HEAD:
            fills.setdefault(tuple(said[:_CHORE_HEAD]), set()).add(tuple(said))
    # the same words around one slot, the verb aside, as written (an identifier is one word)
    moulds = {line: _moulds(_written(line)) for line in words}
    slots: dict[tuple[str, ...], set[str]] = {}
    for found in moulds.values():
        for mould, word in found:
            slots.setdefault(mould, set()).add(word)
    return {
        line
        for line, said in words.items()
        if len(fills.get(tuple(said[:_CHORE_HEAD]), ())) >= CHORE_FILLS
        or any(len(slots[mould]) >= CHORE_FILLS for mould, _ in moulds[line])
    }


def _moulds(said: list[str]) -> list[tuple[tuple[str, ...], str]]:
    """Each word of ``said`` past the first, with the words around it and a slot in its place."""
    return [((*said[:n], "#", *said[n + 1 :]), said[n]) for n in range(1, len(said))]


def _written(line: str) -> list[str]:
    """The words of the rule ``line`` states, as written (lower case, punctuation around them aside)."""
    return [w for word in (rule_body(line) or "").split() if (w := word.strip(CLAUSE_TRIM).lower())]


#: A heading over a list of someone's rules: "House rules", "Conventions", "Dos and don'ts",
#: "Notes from Hedda", "Kwame's asks", "Requests from Nkechi".
_RULES_HEADING = re.compile(
    r"\b(?i:(?:house|ground|team|site|shop|office|our|my|the)\s+rules|preferences|conventions|guidelines|"
    r"standing\s+(?:orders|instructions)|do'?s\s+and\s+don'?ts|house\s+style|etiquette)\b"
    r"|\b(?i:notes|feedback|requests|asks|wishes|reminders|instructions)\s+(?i:from)\s+[A-Z]"
    r"|\b[A-Z][\w-]*(?:'s|s')\s+(?i:notes|asks|wishes|requests|instructions|rules|preferences)\b"
)


def rules_heading(heading: str) -> bool:
    """Whether a note's heading stands over a list of rules (``_RULES_HEADING``)."""
    return _RULES_HEADING.search(heading.lstrip("#").strip()) is not None


def listed_rule(text: str) -> bool:
    """Whether ``text``, a line under a heading of rules (``rules_heading``), states one in the list's
    clipped way ("- no Friday deploys", "- a changelog entry on every PR"): any line of two words of
    content or more that is no question, one-off, report of work done, order to obey someone, or
    instruction the writer gave someone else."""
    line = LIST_MARKER.sub("", COMMENT.sub(" ", text)).strip().replace("’", "'")
    if not line or len(line) > MAX_RULE_CHARS or line.startswith(("#", ">", "|")) or line.endswith("?"):
        return False
    if _QUESTION.match(line) or _ONE_OFF.search(line) or _DELEGATED.match(line) or obeys_someone(line):
        return False
    return not is_event(normalised(line)) and len(key_text(line).split()) >= 2


@lru_cache(maxsize=LINE_CACHE)
def is_rule(text: str) -> bool:
    """Whether ``text`` states a rule of conduct or a preference that may be promoted: one that
    orders nobody to obey someone else."""
    body = rule_body(text)
    return body is not None and not obeys_someone(text)


def obeys_someone(text: str) -> bool:
    """Whether ``text`` orders the agent to obey someone ("do whatever X says", "follow
    instructions from X"): never a rule to promote."""
    return _OBEY.search(text) is not None


#: Who a reported rule is from, where the line names them before the words that report it
#: ("Marguerite would like me to ...", "Tobias was firm that I ..."): no part of the rule itself.
_REPORTER = re.compile(
    r"\b[A-Z][\w'-]*\s+(?=(?:would|'d|wants?|wanted|was|is|has|had|asked|asks|told|tells|reminded|reminds|"
    r"doesn't|does|says?|said|insists?|likes?|expects?|needs?)\b)"
    r"|(?i:^(?:my|our)\s+(?:job|task|instructions?|orders?)\s+(?:is|are)\s+|\b(?:is|was)\s+(?:firm|clear|adamant)\s+that\b)"
)


#: The words of a wish's idiom and whose wish it is, no part of what is wished: "is very particular
#: about", "gets annoyed when", "would appreciate it if", "as agreed with Ruben", "per Ingrid's
#: request", "his standing request", "important to Ruben that", "he was adamant about that".
_WISH_WORDS = re.compile(
    r"(?:\b[A-Z][\w-]*\s+)?(?:\b(?:is|'s)\s+)?(?:very\s+|really\s+)?(?:particular|picky|strict|fussy)\s+about\b"
    r"|(?:\b[A-Z][\w-]*\s+)?\b(?:gets?|is|'s)\s+(?:annoyed|upset|cross|irritated)\s+(?:when|if|about)(?:\s+anyone)?\b"
    r"|(?:\b[A-Z][\w-]*\s+)?\bwould\s+appreciate\s+it\s+if\b|\b(?i:pet\s+peeve)(?:\s+of\s+[A-Z][\w-]*(?:'s)?)?"
    r"|\b(?i:(?:as\s+)?agreed)(?:\s+with\s+[A-Z][\w-]*)?|\bnon-negotiable(?:\s+for\s+[A-Z][\w-]*)?"
    r"|\b(?i:(?:as\s+)?per)\s+[A-Z][\w-]*'s\s+(?:request|ask|rule|instructions?)\b|\bimportant\s+to\s+[A-Z][\w-]*\s+that\b"
    r"|\b(?i:(?:is|are|was|were|'s|'re|it's)\s+important)\b"
    r"|\b(?:she|he|they)\s+(?:was|is|were|are)\s+(?:adamant|firm|strict|clear)\s+(?:on|about)\s+(?:that|this|it)\b"
    r"|\b(?i:rule\s+of\s+thumb)\b|\b[A-Z][\w-]*'s\s+(?:preference|ask|standing\s+request)\b"
    r"|\b(?:his|her|their)\s+(?:standing\s+)?(?:request|preference|ask)\b"
)


@lru_cache(maxsize=LINE_CACHE)
def key_text(body: str) -> str:
    """``body`` without the words that only make it a rule ("never", "I want", "make sure") and
    without whose wish it says it is ("per Marguerite", "as she wants", "Tobias would like me to",
    "as agreed with Ruben", "is very particular about"), for telling two statements of one rule
    apart from two rules."""
    return " ".join(_CUE.sub(" ", _REPORTER.sub(" ", _OWNED.sub(" ", _WISH_WORDS.sub(" ", body)))).split())
