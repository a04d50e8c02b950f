"""Standing statements recognised by their shape, without "always", "never" or "prefer".

People say how an assistant should work with them in many forms besides "always ..." or "I
prefer ...": "Bullet points work best for me.", "We don't eat meat at home.", "My budget is
tight, so free tools only.", "When I ask about taxes, give me the risks first.", "Keep answers
under 200 words.". The rules here read such a sentence by its shape:

* **works for me**: something said to work, help, suit, matter, or not, for the speaker
  ("X works best for me", "X is what I need", "X helps me", "X is easier for me", "X means
  nothing to me", "X loses me", "I learn best by ...");
* **a constraint**: "we don't eat / I can't have / I don't drive", "I only use ...",
  "free tools only", "no oven", "nothing spicy", "X is a no-go", "kilograms, not pounds";
* **a consequence for the assistant**: a statement about the speaker followed by "so" and a
  directive ("I'm colorblind, so avoid ...", "I have a bad knee, so no jumping");
* **a condition**: "When I ask about X, <directive>", "If I share code, <directive>";
* **an imperative with a standing scope**: a sentence opening with an instruction verb whose
  object is every later answer rather than this one ("Keep answers under 200 words", "Use SI
  units for everything", "Stick to Python in any code you write", "Give me the summary
  first", "Avoid recommending Amazon", "Treat me like an expert");
* **a reminder about the speaker**: "Remember that I use Windows", "Let's keep things casual",
  "I'd rather you ask than guess", "I need answers I can read in a minute".

A one-off request says what it is about ("this", "below", "for now", "just this once",
"tonight"): those words keep a sentence out, and so do questions (the caller's check) and
sentences about someone else ("My boss never ...", "He is a visual person").
:func:`standing_shape` is a pure function of one sentence; the instruction reader
(:mod:`sagewai.extraction._instructions`) calls it for a user's sentences only.
"""

from __future__ import annotations

import re

__all__ = ["MAX_CLAUSE_CHARS", "embedded_standing_clause", "standing_shape"]

_UNDERSTANDING = (
    r"(?:understand|grasp|learn|follow|remember|focus|read|see|digest|stay on (?:task|track)|"
    r"concentrate|decide|compare|visuali[sz]e|picture|retain|absorb|keep track)\b"
)
"""What help in an answer helps with: "Analogies help me grasp ideas" is a way to be answered,
"Painting helps me express my feelings" is a pastime."""
_DIETS = (
    r"(?:vegan|vegetarian|kosher|halal|gluten-free|dairy-free|nut-free|pescatarian|meat-free|"
    r"alcohol-free|plant-based)"
)
_VERBS = (
    r"keep|skip|stick|give|use|assume|avoid|include|mention|tell|lead|write|explain|treat|"
    r"match|round|describe|walk|show|make|suggest|recommend|leave|put|list|start|end|focus|"
    r"limit|drop|add|format|cite|be|point|jump|get|go|cut|offer|provide|flag|warn|remind|"
    r"check|double-check|ask|break|split|number|label|highlight|bold|spell|convert|quote|"
    r"link|stop|prioriti[sz]e|favou?r|default|respond|reply|answer|speak|talk|address|refer|"
    r"factor|translate|summari[sz]e|structure|present|compare|mark|sign|spare|cap|restrict|"
    r"stay|steer|err|phrase|simplify|define|clarify|draft|plan|pick|choose|"
    r"reference|express|state|frame|play|take|consider|bear|tailor|adapt|aim"
)
_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|so|also|and|but|oh|well|anyway|anyhow|actually|one more thing|one thing|"
    r"btw|by the way|just so you know|for the record|fyi|heads up|note|hey|hi|thanks|"
    r"alright|right|sure|yes|then|please|in general|generally|as a rule|as a general rule|"
    r"one thing|one more thing)\s*[,:;!.\-–—]+\s*)+",
    re.IGNORECASE,
)
_ONE_OFF = re.compile(
    r"\b(?:this|these|those|that one|right now|at the moment|today|tonight|tomorrow|"
    r"yesterday|for now|this time|just this once|below|above|attached|the following|"
    r"here's|here is|so far|last (?:night|week|month|year)|next (?:week|month|year)|"
    r"if you can|if possible|if you could|if you don't mind|when you get a chance|"
    r"when you have (?:a )?(?:time|moment|minute)|(?:when|whenever) you can|when you're ready)\b",
    re.IGNORECASE,
)
_OTHER_PERSON = re.compile(
    r"^(?:my|our)\s+(?:\w+\s+)?(?:boss|manager|partner|wife|husband|son|daughter|kids?|"
    r"children|sister|brother|mother|mom|mum|father|dad|friend|colleague|coworker|"
    r"neighbou?rs?|team lead|teacher|doctor|parents?)\s+(?!(?:are|is)\s+(?:picky|allergic))"
    r"|^(?:he|she|they|it|this|that|there)\b",
    re.IGNORECASE,
)
_WORKS_FOR_ME = re.compile(
    r"\b(?:works?|worked)\s+(?:best|better|well|great)\s+for\s+me\b"
    r"|\b(?:is|are)\s+(?:what|all)\s+i\s+(?:need|want|can\s+(?:afford|handle|manage|use))\b"
    r"|\ball\s+i\s+can\s+(?:afford|handle|manage)\b"
    r"|\bsuits?\s+me\b"
    r"|\b(?:is|are)\s+(?:(?:much|far|a lot|way)\s+)?(?:easier|harder|clearer|simpler|"
    r"better|more (?:useful|helpful|relevant|readable))\s+for\s+me\b"
    r"|\b(?:is|are)\s+(?:most\s+|more\s+|really\s+|not\s+)?(?:relevant|useful|helpful|ideal)"
    r"\s+(?:for|to)\s+me\b"
    r"|\b(?:aren't|isn't|are not|is not|don't|doesn't|do not|does not)\s+(?:really\s+)?"
    r"(?:useful|helpful|relevant|work)\s+(?:for|to)\s+me\b"
    r"|\bmakes?\s+more\s+sense\s+(?:to|for)\s+me\b"
    r"|\bmeans?\s+nothing\s+to\s+me\b"
    r"|\bkeeps?\s+me\s+(?:sane|focused|on track)\b"
    r"|\b(?:loses?|confuses?|overwhelms?|bores?|stresses)\s+me\b(?!\s+out\s+(?:today|now))"
    r"|\bruins?\s+\w+\s+for\s+me\b"
    r"|\bi\s+(?:learn|work|think|read|focus|concentrate|understand)\s+(?:best|better)\b"
    r"|\b(?:is|are)\s+my\s+only\b"
    r"|\bis\s+my\s+(?:first|native|mother|main)\s+(?:language|tongue)\b"
    r"|\b(?:is|are)\s+(?:a\s+waste\s+of\s+(?:time|money)|(?:easier|harder|kinder|better|worse|"
    r"easy|hard)\s+on\s+(?:me|my\s+\w+))\b"
    r"|\b(?:lands?|lands|goes?|go down|sits?)\s+well\s+with\s+me\b"
    rf"|\bhelps?\s+me\s+(?:(?:far\s+)?more\b|{_UNDERSTANDING})",
    re.IGNORECASE,
)
_CONSTRAINT = re.compile(
    r"^(?:we|i)\s+(?:(?:really|just|simply|generally)\s+)?(?:don't|do not|never|can't|"
    r"cannot|can not|won't)\s+(?:eat|drink|drive|own|use|shop|fly|cook|watch|buy|smoke|"
    r"celebrate|travel|work|have|handle|stand|tolerate|digest|afford|read|do)\b"
    r"(?!\s+(?:a|an|any)\s+(?:idea|clue|time|chance|minute|problem)\b)"
    r"|^(?:we|i)\s+only\s+(?:use|eat|read|buy|shop|drink|watch|work|cook|fly|travel|take|"
    r"have|speak|listen|wear|code|write|run)\b"
    r"|^(?:i(?:'m| am)|we(?:'re| are))\s+on\s+an?\s+(?:[\w-]+\s+){1,2}(?:diet|plan|budget)\b"
    r"|^i(?:'m| am)\s+(?:more of|kind of|very much|definitely|really)\s+an?\b"
    r"|^(?:we(?:'re| are)|(?:our|my)\s+(?:household|home|family|house|kitchen)\s+is)\s+"
    rf"(?:strictly\s+|fully\s+)?{_DIETS}\b"
    r"|^(?:any|every|all|each)\s+(?!help\b)[\w-]+\s+you\s+(?!can\b|could\b|might\b|have\b)\w+"
    r"|^(?!(?:the|this|that|these|those|a|an|another|one|more|some|next|same)\b)"
    r"[a-z][\w -]{2,50},?\s+please$"
    r"|^(?:i(?:'m| am)|we(?:'re| are))\s+(?:not\s+)?(?:hopeless|useless|terrible|bad|"
    r"not good|hard of|new to|clumsy|slow)\s+(?:with|at|to|of|hearing)\b"
    r"|^(?:i(?:'m| am)|we(?:'re| are))\s+not\s+an?\s+[\w-]+\s+(?:person|fan|learner)\b"
    r"|^(?:i(?:'m| am))\s+(?:based|located)\s+in\s+[A-Z]"
    r"|\b(?:is|are)\s+(?:a\s+no-go|off-limits|off\s+(?:the\s+)?limits|off\s+the\s+table|out$|"
    r"out of the question|a deal-?breaker)\b"
    r"|^[\w\s$.,'-]{3,60}\s+only$"
    r"|^(?:no|nothing)\s+(?!(?:problem|problems|worries|thanks|way|idea|rush|clue|wonder|"
    r"doubt|matter|kidding|one|time|luck|need|reason|longer|more|sooner|comment|"
    r"offense|offence|pressure|big deal|hard feelings)\b)[\w-]+(?:\s+[\w-]+)?"
    r"\s+(?:in|at|for|with|on|please|ever|whatsoever)\b"
    r"|^[a-z][\w -]{1,30},\s*not\s+[\w -]{2,30}$",
    re.IGNORECASE,
)
_REMINDER = re.compile(
    r"^(?:please\s+)?(?:remember|keep in mind|bear in mind|note|don't forget)\s+(?:that\s+)?"
    r"(?:i|we|i'm|i've)\b(?!\s+(?:said|told|mentioned)\b)"
    r"|^let's\s+(?:always\s+)?(?:stick to|avoid|keep\s+(?:things|it|everything|our|"
    r"conversations|answers)\s+(?!up\b|going\b|coming\b)\w+)"
    r"|^i(?:'d| would)\s+rather\s+(?:you|not|have|get|see|keep|use)\b"
    r"|^i(?:'d like|\s+would like|\s+want|\s+need|\s+like)\s+(?:(?:my|your|the|all|each|every)\s+)?"
    r"(?:[\w-]+\s+)?(?:answers?|repl(?:y|ies)|responses?|explanations?|summar(?:y|ies)|"
    r"examples?|code snippets)\b(?!\s+(?:about|on|for)\b)",
    re.IGNORECASE,
)
_DIRECTIVE = re.compile(
    rf"^(?:please\s+)?(?:(?:just|only|also|always|never|and)\s+)?(?:{_VERBS})\b"
    r"|^(?:please\s+)?(?:don't|do not|never|make sure|be sure|no more)\b"
    r"|^(?:no|nothing)\s+[\w-]+"
    r"|^[\w\s$'-]{3,60}\s+only$"
    r"|\b(?:is|are)\s+(?:a\s+no-go|off-limits|off the table|out of the question|out$)"
    r"|\bkeep (?:that|this|it) in mind\b"
    r"|^(?!(?:i|we|they|he|she)\b)[\w\s-]+\s+(?:should|must|need to|have to)\s+"
    r"(?:be|use|include|stay|come|go|start)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(rf"^(?:only\s+|just\s+|also\s+)?(?:{_VERBS})\b", re.IGNORECASE)
_INHERENT = re.compile(
    r"^(?:only\s+(?:suggest|recommend|use|include|give|show|list|cite|answer|reply)|"
    r"stick\s+to|avoid\s+\w+ing|assume\s+(?:i|i'm|we|that i)|treat\s+me|lead\s+with|"
    r"default\s+to|err\s+on|don't\s+bother|prioriti[sz]e|tailor|spare\s+me|"
    r"skip\s+the\s+(?:pleasantries|small talk|fluff|filler|preamble|basics|intros?|"
    r"disclaimers|caveats|jargon))\b",
    re.IGNORECASE,
)
_SCOPE = re.compile(
    r"\b(?:whenever|when(?:ever)?\s+(?:you|i|we)|if\s+(?:you|i|we)\s+(?!can\b|could\b)|"
    r"any\s?time|every\s?time|each\s+time|everything|by default|in general|at most|at least|"
    r"no more than|under\s+\d+\s+\w+|where(?:ver)?\s+(?:you can|possible)|from (?:now|here) "
    r"on|going forward|in future|things|"
    r"(?:all|every|each|any)\s+(?:your\s+|future\s+|of your\s+)?(?:answers?|repl(?:y|ies)|"
    r"responses?|examples?|facts?|code|snippets?|recipes?|images?|charts?|suggestions?|"
    r"recommendations?|emails?|messages?|drafts?|plans?|explanations?|summar(?:y|ies)|"
    r"lists?|links?|sources?|prices?|dates?|times?|numbers?|units?|measurements?)|"
    r"\w+\s+you\s+(?:give|write|draft|suggest|recommend|send|make|share|produce|show|create|"
    r"generate|provide|propose|offer)\b|"
    r"(?:answers|replies|responses|explanations|drafts)\b|"
    r"first(?=\s*(?:[,;.]|$|then\b|and then\b))|straight to the (?:point|answer)|"
    r"to the point|the basics|as (?:you|we) go|one \w+ at a time|that way)",
    re.IGNORECASE,
)
_SCOPED_LEAD = re.compile(
    r"^(?:one (?:more )?thing\s+)?(?:for|in|with)\s+(?:all|any|every|anything|everything)\b"
    r"[^,:;]{0,80}[,:;]\s*(?P<rest>.+)$",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"\b(?:can|could|would|will)\s+you\b|\bdo you (?:think|know)\b|\bwondering\b|"
    r"\bhow (?:can|do|should|could) i\b|\bi(?:'m| am) (?:hoping|curious)\b",
    re.IGNORECASE,
)
_REASON = re.compile(
    r"^i\s+(?:(?:really|just|usually|always|often|rarely|never|easily)\s+)?(?:don't|do not|"
    r"never|rarely|always|usually|get|can't|cannot|hate|find|prefer|like|have|read|use|work|"
    r"live|am\s+(?!in\s+an?\b|at\b))\b",
    re.IGNORECASE,
)
_CONDITION = re.compile(
    r"^(?:when(?:ever)?|if|each time|every time|any\s?time)\s+(?:i|you|we)\s+"
    r"(?!(?:was|were|had|got|get home|can|could|have time|win|did)\b)[^,]{2,120},\s*(?P<rest>.+)$",
    re.IGNORECASE,
)
_CLAUSES = re.compile(r"\s*(?:;|,\s*so\b|,|\bso\s+(?=(?:no|don't|never|please)\b)|—|–| - )\s*")
_SO_DIRECTIVE = re.compile(r"(?:,|;)?\s*\bso\s+(?P<rest>.+)$", re.IGNORECASE)
_FIRST_PERSON = re.compile(
    r"^(?:i|i'm|i've|i'd|i am|my|we|we're|our|me)\b|\b(?:i|i'm|my|we|our|me)\b", re.IGNORECASE
)
_DISLIKE = re.compile(
    r"^i\s+(?:really\s+)?(?:hate|can't stand|dislike|don't like|don't need|don't care about|"
    r"can't deal with)\b[^,;]+[,;]\s*(?P<rest>.+)$",
    re.IGNORECASE,
)


def _works_for_me(clause: str) -> bool:
    """Something said to work for the speaker ("X works best for me", "X helps me") in
    general, not a guess at what will help ("I think the reviews will help me") nor feedback
    on this answer ("it helps me", "thanks for the help")."""
    for found in _WORKS_FOR_ME.finditer(clause):
        before = [
            word
            for word in re.findall(r"[\w']+", clause[: found.start()].lower())
            if word not in _ADVERBS
        ]
        opened = before
        while before and before[0] in _OPENERS:
            before = before[1:]
        if before and (before[0] in _HEDGES or any(w.endswith("'ll") for w in before)):
            continue
        if "help" in found.group(0).lower() and _OPENERS.intersection(opened):
            continue  # "Yeah, I think X really helps": taking this advice, not a standing way
        if not before and found.group(0).lower().startswith(("help", "really", "always")):
            return False  # "Help me ..." is a request, "Thanks for the help" small talk
        if before and (before[-1] in _HEDGES or before[0] in _HEDGES):
            continue
        if before and before[-1] in _DETERMINERS:
            continue  # "thanks for the help", "with your help"
        return True
    return False


_ADVERBS = frozenset(
    "really definitely truly also actually probably surely certainly so".split()  # noqa: SIM905
)
_OPENERS = frozenset("yeah yes ok okay well i think feel guess believe".split())  # noqa: SIM905
_HEDGE_WORDS = (
    "will 'll it'll that'll can could might may would should to gonna going it this that "
    "which hopefully maybe perhaps overall plus they these those please you your their his her"
)
_HEDGES = frozenset(_HEDGE_WORDS.split())
"""Words before "helps me" that make it a guess about what will help, or feedback on this."""
_DETERMINERS = frozenset("the for your of her his their my our its with".split())  # noqa: SIM905
"""A word before "help" that makes it a noun ("thanks for the help", "grateful for her help")."""
_NEGATIVE = re.compile(
    r"^(?:please\s+)?(?:don't|do not|never|no|nothing|avoid|skip|leave|only|stick|drop)\b"
    r"|\bonly$|\bout$",
    re.IGNORECASE,
)


def _directive(clause: str, *, strict: bool = False) -> bool:
    """``clause`` tells the assistant what to do; ``strict``: and for good (a negative, a
    standing scope, an inherently standing verb), not "so please provide an example"."""
    clause = clause.strip(" ,;:.!")
    if _works_for_me(clause):
        return True
    if not _DIRECTIVE.search(clause):
        return False
    return not strict or bool(
        _NEGATIVE.search(clause)
        or _SCOPE.search(clause)
        or _INHERENT.match(clause)
        or re.search(r"\bkeep (?:that|it) in mind\b|\b(?:should|must|need to)\b|no-go", clause)
    )


def _standing_imperative(clause: str) -> bool:
    clause = clause.strip(" ,;:.!")
    if _INHERENT.match(clause):
        return True
    return bool(_IMPERATIVE.match(clause) and _SCOPE.search(clause))


def standing_shape(sentence: str) -> bool:
    """True when ``sentence`` (one sentence of a user's message, not a question) states, by
    its shape, how the speaker wants to be answered from now on.

    Example:
        >>> standing_shape("Bullet points work best for me.")
        True
        >>> standing_shape("We don't eat meat at home, so keep that in mind.")
        True
        >>> standing_shape("When I ask about taxes, give me the risks first.")
        True
        >>> standing_shape("Keep answers under 200 words."), standing_shape("Keep going.")
        (True, False)
        >>> standing_shape("Make this email shorter."), standing_shape("My boss never eats.")
        (False, False)
    """
    body = _LEAD.sub("", _TAIL.sub("", sentence).strip().strip("\"'“”")).strip().rstrip(".!;")
    if (
        not body
        or len(body) > 400
        or _ONE_OFF.search(body)
        or _OTHER_PERSON.match(body)
        or _REQUEST.search(body)
    ):
        return False
    condition = _CONDITION.match(body) or _SCOPED_LEAD.match(body)
    if condition is not None:
        rest = condition.group("rest")
        return _directive(rest) or standing_shape(rest)
    clauses = [part for part in _CLAUSES.split(body) if part.strip()]
    if any(_works_for_me(part) or _CONSTRAINT.search(part.strip()) for part in [body, *clauses]):
        return True
    if _REMINDER.match(body) or _standing_imperative(body):
        return True
    if _FIRST_PERSON.search(body):
        so = _SO_DIRECTIVE.search(body)
        if so is not None and _directive(so.group("rest"), strict=True):
            return True
        dislike = _DISLIKE.match(body)
        if dislike is not None and _IMPERATIVE.match(dislike.group("rest")):
            return True
        # "I'm a senior developer, skip the basics": a statement about the speaker, then an
        # instruction with a standing scope after a comma.
        if any(_standing_imperative(part) for part in body.split(",")[1:]):
            return True
    if _IMPERATIVE.match(body) and any(
        _REASON.match(part.strip()) for part in re.split(r"[,;]", body)[1:]
    ):
        return True  # "Avoid wide tables, I read on my phone": a way, and why it lasts
    return any(_standing_imperative(part) for part in clauses[1:])


_TAIL = re.compile(r"\s*->->.*$", re.DOTALL)
_EMBEDDED_SPLIT = re.compile(
    r"\s*(?:[,;:]|\s-\s|—|–)\s*(?:(?:and|but|so|because|since|as)\s+)?"
    r"|\s+(?:and|but|so|because|since)\s+(?=(?:i|i'm|i've|we|we're|my|our)\b)",
    re.IGNORECASE,
)
MAX_CLAUSE_CHARS = 160
"""A longer clause inside a request is not read as one standing statement."""


def embedded_standing_clause(sentence: str) -> str | None:
    """The clause of a longer request or question that states a lasting preference or
    constraint, or ``None``.

    "I'm planning meals for the week and we don't eat meat at home, can you suggest some
    dinners?" asks for something now and says something for good: the clause "we don't eat
    meat at home" is read (by the works-for-me and constraint shapes only; an instruction
    inside a request is this request's). Clauses that ask, or are about this one time, or
    about someone else, are skipped.

    Example:
        >>> embedded_standing_clause("I'm planning meals and we don't eat meat at home, "
        ...                          "can you suggest some dinners?")
        "we don't eat meat at home"
        >>> embedded_standing_clause("Can you suggest some dinners for tonight?") is None
        True
    """
    text = _TAIL.sub("", sentence).strip().rstrip(".!?;")
    for part in _EMBEDDED_SPLIT.split(text):
        if len(part) > 2 * MAX_CLAUSE_CHARS:
            continue
        clause = _LEAD.sub("", part.strip()).strip(" \"'“”")
        if (
            len(clause) < 8
            or len(clause) > MAX_CLAUSE_CHARS
            or _ONE_OFF.search(clause)
            or _REQUEST.search(clause)
            or _OTHER_PERSON.match(clause)
        ):
            continue
        if _works_for_me(clause) or _EMBEDDED_CONSTRAINT.search(clause):
            return clause
    return None


_EMBEDDED_CONSTRAINT = re.compile(
    r"^(?:we|i)\s+(?:(?:really|just|simply|generally)\s+)?(?:don't|do not|never|can't|"
    r"cannot|can not|won't)\s+(?:eat|drink|drive|own|use|shop|fly|cook|smoke|celebrate|"
    r"tolerate|digest)\b"
    r"|^(?:we|i)\s+only\s+(?:use|eat|read|buy|shop|drink|watch|cook|fly|travel|speak|wear|"
    r"code|write|run)\b"
    r"|^(?:i(?:'m| am)|we(?:'re| are))\s+on\s+an?\s+(?:[\w-]+\s+){1,2}(?:diet|budget)\b"
    r"|^(?:i(?:'m| am)|we(?:'re| are))\s+(?:not\s+)?(?:hopeless|useless|terrible|hard of|"
    r"not good)\s+(?:with|at|of|hearing)\b"
    r"|^i(?:'m| am)\s+(?:more of|very much)\s+an?\b"
    r"|^(?:we(?:'re| are)|(?:our|my)\s+(?:household|home|family|house|kitchen)\s+is)\s+"
    rf"(?:strictly\s+|fully\s+)?{_DIETS}\b"
    r"|\b(?:is|are)\s+(?:a\s+no-go|off-limits|off the table|out of the question)\b",
    re.IGNORECASE,
)
