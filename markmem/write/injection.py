"""The injection guard: spots instruction-override text so it is quarantined, not compiled.

Three readers, cheapest first (it runs on every ``add()``):

1. the rules below, on the unwrapped text (``injection_text.unwrap``: HTML/markdown comments and
   tags opened, base64 payloads decoded, spelled-out letters joined);
2. a lexicon of the same orders in ten other languages (``injection_text.foreign_matches``);
3. when both let the text through and it names the assistant, rules, overriding, revealing or
   limits: a logistic regression over the built-in sentence embeddings (``injection_model``),
   which needs the ``vector`` extra; without it, 1 and 2 work alone.

The rules are pure and dependency-free: fold the text (``injection_fold``: NFKC/NFKD
compatibility folding, casefold, accents, zero-width and tag characters, Cyrillic/Greek
homoglyphs, simple leetspeak and chat slang, whitespace), then run weighted regular expressions.
A rule's regex only runs when the words it cannot match without are present (a set lookup), so
a typical benign message runs none or one or two of them. Weights add up across rules; a text
whose total reaches ``THRESHOLD`` is flagged with the label that contributed most.

Labels: ``override-instructions``, ``role-play-jailbreak``, ``system-prefix``,
``prompt-exfiltration``, ``memory-poisoning``; ``embedded-instructions`` from the classifier.
This is a tripwire that routes text to the human review queue, not a security boundary: a
determined attacker can paraphrase past any regex or classifier.
Cases and numbers: ``tests/data/injection_cases.yaml``, ``tests/data/injection_tuning.jsonl``,
``bench/data/injection_holdout2.jsonl`` (held out), ``bench/injection.py``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .injection_fold import fold, normalize, prepare
from .injection_model import LABEL as CLASSIFIER_LABEL
from .injection_model import load_classifier, may_read
from .injection_text import foreign_matches, letter_words

__all__ = ["CLASSIFIER_LABEL", "THRESHOLD", "detect_injection", "injection_score", "normalize"]

THRESHOLD = 1.0

# Vocabulary shared by the rules; ``<NAME>`` in a rule is replaced by the group below.
_V = {
    "IGN": r"(?:ignor(?:e|ing)|disregard(?:ing)?|forget(?:ting)?|skip(?:ping)?|discard(?:ing)?"
    r"|drop(?:ping)?|abandon(?:ing)?|overrid(?:e|ing)|overrule|bypass(?:ing)?|set aside"
    r"|disobey(?:ing)?|overlook(?:ing)?|neglect(?:ing)?|defy(?:ing)?"
    r"|put aside|throw out|never mind|pay no (?:attention|heed|mind) to"
    r"|(?:do not|don't|stop|no longer) (?:follow(?:ing)?|obey(?:ing)?|listen(?:ing)? to))",
    "PRIOR": r"(?:previous|prior|preceding|above|earlier|former|original|initial|old|past"
    r"|system|default|existing|current)",
    "TGT": r"(?:instructions?|directives?|prompts?|rules|guidelines|guidance|commands"
    r"|programming|training|constraints|restrictions|guardrails|polic(?:y|ies)|safeguards"
    r"|filters|developers|creators|system (?:prompt|message))",
    "W": r"(?:[\w'-]+ )",  # one filler word
    "ROLE": r"(?:pretend|imagine|act as|acting as|act like|roleplay|role-play|simulate|behave like"
    r"|become|you are|you're|you will be)",
    "AI": r"(?:ai|assistant|model|chatbot|bot|llm|language model|version of (?:yourself|you))",
    "LIMITS": r"(?:restrictions|limits|limitations|filters?|rules|guidelines|ethics|morals"
    r"|censorship|boundaries|constraints|guardrails|polic(?:y|ies))",
    "NOLIMIT": r"(?:without|with (?:no|zero)|free (?:of|from)|(?:that|who) (?:has|have) no|has no|no|zero)"
    r" (?:any )?(?:[\w-]+ )?<LIMITS>",
    "LEAK": r"(?:reveal|show|print|output|display|tell|give|share|repeat|leak|dump|expose"
    r"|disclose|write out|recite|quote|paste|copy|reproduce|summari[sz]e|describe"
    r"|what(?:'s| is| are| was| were))",
    "SECRET": r"(?:system|hidden|secret|confidential|developer|internal|pre-?prompt)",
    "MEM": r"(?:remember|memori[sz]e|store|save|record|keep (?:this|it|that) in"
    r"|add (?:a |this )?(?:permanent |new )?(?:note|rule)|make a note|note (?:this|that)"
    r"|write (?:this )?down|update your memory)",
    "CLAUSE": r"(?:^|[:;,.!-] ?|\band |\bto |\bthen )(?:please )?",  # an imperative starts here
    "ACT": r"(?:tell|reply|respond|say|recommend|answer|send|suggest|direct|point|link|give"
    r"|mention|push|steer|sell|promote|warn)",
    "ANYONE": r"(?:anyone|anybody|someone|somebody|everyone|people|users|any user|a user"
    r"|other users|customers|a customer|any customer|clients|a client|visitors|a visitor)",
}


class _Need(NamedTuple):
    words: frozenset[str]  # any of these words present ...
    subs: tuple[str, ...]  # ... or any of these substrings


class _Rule(NamedTuple):
    label: str
    weight: float
    needs: tuple[_Need, ...]  # the pattern runs only when every need is met (cheap prefilter)
    pattern: re.Pattern[str]
    lines: bool  # match against the text with its line breaks (else: flattened to one line)

    def wanted(self, norm: str, words: set[str], skip_first: bool = False) -> bool:
        for need in self.needs[skip_first:]:
            if need.words.isdisjoint(words) and not any(map(norm.__contains__, need.subs)):
                return False
        return True


def _r(label: str, weight: float, needs: str, *template: str, lines: bool = False) -> _Rule:
    """A rule; ``needs`` is "alt alt & alt alt": every &-group must have one alternative present
    (a word, or a substring when it contains punctuation). Each group must be implied by the
    pattern: ``tests/test_injection.py`` checks that the prefilter never changes a verdict."""
    groups = []
    for group in needs.split("&"):
        alts = group.split()
        subs = tuple(a for a in alts if not re.fullmatch(r"[a-z0-9_]+", a))
        groups.append(_Need(frozenset(alts).difference(subs), subs))
    source = "".join(template)
    for key, value in [*_V.items(), ("LIMITS", _V["LIMITS"])]:  # NOLIMIT contains <LIMITS>
        source = source.replace(f"<{key}>", value)
    return _Rule(label, weight, tuple(groups), re.compile(source), lines)


# fmt: off
_O, _J, _S, _P, _M = ("override-instructions", "role-play-jailbreak", "system-prefix",
                      "prompt-exfiltration", "memory-poisoning")
# Hint words: an <IGN>, <PRIOR>, <TGT>... match always contains one of these words.
_IGN = ("ignore ignoring disregard disregarding forget forgetting skip skipping discard discarding"
        " drop dropping abandon abandoning override overriding overrule bypass bypassing aside"
        " throw mind pay follow following obey obeying listen listening disobey disobeying overlook"
        " overlooking neglect neglecting defy defying")
_PRIOR = "previous prior preceding above earlier former original initial old past system default" \
         " existing current"
_TGT = ("instruction instructions directive directives prompt prompts rules guidelines guidance"
        " commands programming training constraints restrictions guardrails policy policies"
        " safeguards filters developers creators message")
_NOLIM = ("restrictions limits limitations filter filters rules guidelines ethics morals"
          " censorship boundaries constraints guardrails policy policies")
_SECRET = "system hidden secret confidential developer internal prompt preprompt"

_RULES: tuple[_Rule, ...] = (
    # override-instructions -----------------------------------------------------------------
    _r(_O, 1.0, f"{_IGN} & {_PRIOR} & {_TGT}", r"\b<IGN> (?:(?:all|any|every|each|of) )*",
       r"(?:(?:the|these|those|this|that|your) )?<PRIOR> <W>{0,2}?<TGT>\b"),
    _r(_O, 1.0, f"{_IGN} & your & {_TGT}",
       r"\b<IGN> (?:(?:all|any|every|of) )*your <W>{0,2}?<TGT>\b"),
    _r(_O, 1.0, f"{_IGN} & everything anything whatever what {_TGT}",
       r"\b<IGN> (?:(?:all|any|of) )*(?:the |these )?",
       r"(?:everything|anything|whatever|what|<TGT>) <W>{0,3}?(?:you(?:'ve| have)? ",
       r"(?:were |was |been |got )?(?:told|given|taught|instructed|programmed|trained)",
       r"|(?:above|before this|so far|until now|up to now)\b)"),
    _r(_O, 1.0, f"above & {_IGN}",
       r"\b<IGN> (?:(?:all|everything|anything) )?(?:(?:of )?the )?above\b",
       r"(?! (?!this\b|and\b(?! below)|instead\b|then\b|text\b|lines?\b|instructions\b",
       r"|prompt\b|messages?\b)\w)"),  # "ignore the above" but not "ignore the above typo"
    _r(_O, 1.0, f"void null cancelled canceled revoked obsolete invalid superseded overridden"
       f" lifted apply applies & {_TGT}",
       r"\b<PRIOR>? ?<TGT> <W>{0,4}?(?:are|is|have been|were|has been) (?:now )?",
       r"(?:void|null|cancell?ed|revoked|obsolete|invalid|superseded|overridden|lifted)\b",
       r"|\b<TGT> <W>{0,2}?no longer appl(?:y|ies)\b"),
    _r(_O, 1.0, "apply applies & your you",
       r"\byour <W>{0,2}?<TGT> <W>{0,2}?(?:don't|do not|doesn't|does not) appl(?:y|ies)\b",
       r"|\b<TGT> <W>{0,3}?(?:don't|do not|doesn't|does not) appl(?:y|ies) to you\b"),
    _r(_O, 1.0, "void null invalid irrelevant cancelled canceled obsolete nonexistent revoked & treat"
       " consider regard told given instructed",
       r"\b(?:treat|consider|regard) (?:all |every |any )?(?:the |your )?<PRIOR> <W>{0,2}?(?:<TGT>",
       r"|messages?|text|conversation) as (?:null|void|invalid|irrelevant|cancell?ed|obsolete",
       r"|nonexistent)\b|\b(?:everything|anything|all|what) you (?:were|have been|'ve been) ",
       r"(?:told|given|instructed)\b[^.!?\n]{0,30}? (?:is|are) (?:now )?(?:void|null|cancell?ed",
       r"|revoked|invalid|obsolete)\b"),
    _r(_O, 1.0, "instructions rules directives orders prompt & new updated revised real actual",
       r"(?:^|[.!?:\n] ?)(?:new|updated|revised|real|actual) (?:instructions|rules|directives",
       r"|orders|system prompt) ?:[^\n]{0,40}?\b(?:you|your|from now|respond|reply|answer",
       r"|obey|ignore)\b", lines=True),
    _r(_O, 1.0, "filter filters guardrails restrictions safeguards censorship safety policy"
       " policies & bypass disable turn deactivate circumvent get",
       r"\b(?:bypass|disable|turn off|deactivate|circumvent|get around) (?:all |any )?(?:of )?",
       r"(?:your (?:[\w-]+ )?|(?:the )?(?:safety|content|ethical|moral|ai) )",
       r"(?:filters?|guardrails|restrictions|safeguards|censorship|safety|polic(?:y|ies))\b"),
    _r(_O, 1.0, "disabled off suspended lifted removed deactivated & safety content security ethical",
       r"\b(?:safety|content|security|ethical) (?:protocols?|filters?|checks|guardrails|rules|polic(?:y|ies)",
       r"|restrictions|mode) (?:are |is |have been |has been |now |hereby )*(?:disabled|off|suspended|lifted",
       r"|removed|deactivated|turned off)\b"),
    _r(_O, 1.0, "skip skipping & safety security",
       r"\bskip(?:ping)? (?:all |any |the |every )?(?:safety|security) (?:checks|confirmations|reviews|rules",
       r"|measures)\b"),
    _r(_O, 1.0, "decode & do follow execute obey run carry",
       r"\bdecode\b[^.!?\n]{0,60}?\b(?:do|follow|execute|obey|run|carry out)\b[^.!?\n]{0,30}?",
       r"(?:what it says|instructions?\b|it as a command|the command|inside\b)"),
    _r(_O, 1.0, "command & execute run", r"\b(?:execute|run) it as an? (?:command|instruction)\b"),
    _r(_O, 1.0, "instrucciones instructions anweisungen instruktionen istruzioni instrucoes regeln reglas"
       " regles & anteriores previas precedentes anterieures vorherigen bisherigen vorigen precedenti",
       r"\b(?:ignora|ignorar|ignorez|ignore|ignoriere|ignorieren|olvida|oublie|oubliez|vergiss",
       r"|dimentica|esquece)\b(?: \w+){0,3}? (?:(?:instrucciones|instructions|anweisungen|instruktionen",
       r"|istruzioni|instrucoes|reglas|regles|regeln) (?:\w+ )?(?:anteriores|previas|precedentes",
       r"|anterieures|precedenti)|(?:vorherigen|bisherigen|vorigen) (?:anweisungen|instruktionen",
       r"|regeln))\b"),
    _r(_O, 1.0, "override supersede take & my", r"\bmy (?:instructions|commands|orders|rules) ",
       r"(?:now )?(?:override|supersede|take precedence)"),
    _r(_O, 0.5, "obey & me", r"\b(?:only )?obey (?:only )?me\b"),
    _r(_O, 0.5, "say tell & what whatever everything as & do",
       r"\bdo (?:what|whatever|everything|as) i (?:say|tell you)\b"),
    _r(_O, 0.5, "instead",
       r"\b(?:follow|obey) (?:mine|my (?:instructions|rules|orders)) instead\b"),
    # role-play-jailbreak -------------------------------------------------------------------
    _r(_J, 1.0, "anything & now", r"\bdo anything now\b"),
    _r(_J, 1.0, "dan stan dude aim antigpt betterdan evilbot",
       r"\b(?:you are|you're|act as|acting as|respond as|answer as|reply as|pretend to be",
       r"|become) (?:now )?(?:going to act as )?(?:an? )?",
       r"(?:dan|stan|dude|aim|antigpt|betterdan|evilbot)\b(?!['-])"),
    _r(_J, 1.0, f"{_NOLIM} & ai assistant model chatbot bot llm language version",
       r"\b<ROLE>\b[^.!?\n]{0,40}?\b<AI>\b,? <NOLIMIT>"),
    _r(_J, 1.0, f"now & {_NOLIM}", r"\byou(?: are|'re) now\b[^.!?\n]{0,30}?<NOLIMIT>"),
    _r(_J, 1.0, f"pretend imagine act suppose assume & {_NOLIM}",
       r"\b(?:pretend|imagine|act as if|suppose|assume) (?:that )?you (?:have|had|are|were",
       r"|exist) (?:no|without) (?:any )?(?:[\w-]+ )?<LIMITS>\b"),
    _r(_J, 1.0, "uncensored unfiltered unrestricted unaligned amoral jailbroken jailbreak",
       r"\b<ROLE> (?:like |as )?(?:an? )?(?:uncensored|unfiltered|unrestricted|unaligned",
       r"|amoral|jailbroken) (?:<AI>|version|persona)\b",
       r"|\bjailbroken (?:<AI>|version|persona|mode)\b|\bjailbreak mode\b"),
    _r(_J, 1.0, "jailbroken unrestricted uncensored unfiltered & act behave pretend respond",
       r"\b(?:act|behave|pretend|respond)(?: like| as if| as though)? you(?:'ve| have| are|'re)? ",
       r"(?:been |now )?(?:jailbroken|unrestricted|uncensored|unfiltered)\b"),
    _r(_J, 1.0, "mode & developer dev god jailbreak dan",
       r"\b(?:enable|enter|activate|switch to|turn on|(?:you are|you're|now) in) (?:the )?",
       r"(?:developer|dev|god|jailbreak|dan) mode\b",
       r"|\bdeveloper mode (?:output|enabled|activated)\b"),
    _r(_J, 1.0, "longer freed abide follow obey comply",
       r"\byou are no longer (?:an? )?(?:ai|assistant|chatbot|language model|chatgpt|claude)\b",
       r"|\b(?:no longer bound by|freed from (?:the )?(?:[\w-]+ )?(?:confines|restrictions",
       r"|rules|limitations))\b",
       r"|\b(?:don't|do not|no longer|never) (?:have to|need to|must) (?:abide by|follow|obey",
       r"|comply with) (?:any|the|your) (?:[\w-]+ )?(?:rules|guidelines|polic(?:y|ies)",
       r"|restrictions)\b"),
    _r(_J, 1.0, "even regardless & goes violates breaks contradicts conflicts",
       r"\b(?:even if|even when|regardless of whether) (?:it |this |that )?(?:goes against",
       r"|violates|breaks|contradicts|conflicts with) (?:your|the|any) (?:[\w-]+ )?",
       r"(?:guidelines|rules|polic(?:y|ies)|programming|principles|ethics)\b"),
    _r(_J, 1.0, "refuse refusing", r"\byou (?:must |will |should |shall |can )?never refuse\b",
       r"|<CLAUSE>(?:never|don't|do not|stop) refus(?:e|ing)\b"),
    _r(_J, 0.5, "character", r"\bstay in character no matter what\b"),
    # system-prefix: chat-template tokens, role headers, fake transcripts -------------------
    _r(_S, 1.0, "<|", r"<\|[a-z_]{2,30}\|>"),
    _r(_S, 1.0, "inst] sys>> </s> _of_turn> system> [system]",
       r"\[/?inst\]|<</?sys>>|</s> ?<s>|<(?:start|end)_of_turn>|</?system>|\[system\]"),
    _r(_S, 1.0, "override & system", r"\bsystem (?:override|prompt override)\b"),
    _r(_S, 1.0, "system assistant developer sys & :",  # a role header followed by an order
       r"(?:^|\n)(?:#{1,4} ?)?(?:system|assistant|developer|sys)",
       r"(?: (?:prompt|message|instructions?))? ?: ?(?:you\b|your\b|the assistant|assistant\b",
       r"|ai\b|ignore|disregard|new\b|obey|respond|answer|reply|always|never|must|comply|grant\b|call\b",
       r"|delete\b|cleanup\b",
       r"|all (?:rules|policies|restrictions))", lines=True),
    _r(_S, 1.0, "end & input prompt message conversation document",
       r"(?:^|\n)[#=*\[ -]*end of (?:the )?(?:user )?(?:input|prompt|message|conversation|document)\b",
       lines=True),
    _r(_S, 1.0, "admin administrator operator openai anthropic & message messages note notes"
       " notice notices override overrides instruction instructions command commands",
       r"\b(?:admin|administrator|operator|openai|anthropic) (?:message|note|notice|override",
       r"|instructions?|command)s? ?:"),
    _r(_S, 1.0, "assistant ai & :", r"(?:^|\n)(?:human|user) ?:[^\n]*\n(?:assistant|ai) ?:",
       r"|\n(?:assistant|ai) ?: ?(?:sure|ok|okay|of course|certainly)\b", lines=True),
    # prompt-exfiltration -------------------------------------------------------------------
    _r(_P, 1.0, f"your & {_SECRET} initial original",
       r"\b<LEAK>(?: me)? <W>{0,3}?your <W>{0,2}?(?:<SECRET>|initial|original)",
       r" (?:prompt|message|instructions?|rules|configuration|directives)\b"),
    _r(_P, 1.0, f"{_SECRET} & the",
       r"\b<LEAK>(?: me)? <W>{0,3}?the <SECRET> (?:prompt|message|instructions?|configuration",
       r"|directives)\b(?=[^.!?\n]{0,40}\byou|[ .!?]*$)"),  # "...you were given" or the end
    _r(_P, 1.0, "above before prior preceding & repeat print output recite copy echo show",
       r"\b(?:repeat|print|output|recite|copy|echo|show)(?: me)? <W>{0,3}?(?:the )?(?:text",
       r"|words|everything|all|content|lines?|messages?) <W>{0,2}?(?:above|before|prior",
       r"|preceding)\b(?! (?:the|a|an|my|our)\b)"),
    _r(_P, 1.0, "instructions prompt directives configuration rules guidelines & you your",
       r"\b(?:output|print|show|reveal|repeat|list|dump|tell me|what (?:are|were))(?: me)? ",
       r"(?:all )?your (?:[\w-]+ )?(?:instructions|prompt|directives|configuration)\b",
       r"|\b(?:repeat|print|output|dump|reveal|recite) (?:all )?your (?:[\w-]+ )?rules\b",
       r"|\bwhat (?:rules|instructions|directives|guidelines) (?:were|have) you (?:been )?",
       r"(?:given|told|programmed)\b"),
    _r(_P, 1.0, "prompt instructions message & you your",
       r"\b(?:prompt|instructions|system message) (?:that|which) (?:configures?|controls?",
       r"|defines?|governs?|programs?|shapes?|instructs?|runs?) you\b",
       r"|\bwhat <W>{0,2}?(?:does|do|did) your <W>{0,2}?(?:prompt|instructions|system message",
       r"|directives) (?:say|contain|tell you)\b"),
    _r(_P, 1.0, "user users & dump show list reveal print give tell respond",
       r"\b(?:dump|show|list|reveal|print|give me|tell me|respond with)\b",
       r"[^.!?\n]{0,40}?\b(?:all|every|other) (?:the )?(?:other )?users?\b(?! (?:in|on|of) (?:an?|the|my|our)\b)"),
    _r(_P, 1.0, "window message prompt instructions & output print dump reveal repeat recite paste display"
       " leak expose",
       r"\b(?:output|print|dump|reveal|repeat|recite|paste|display|leak|expose)\b[^.!?\n]{0,50}?",
       r"\b(?:context window|(?:including|plus|and) the (?:system|hidden|developer) (?:message|prompt",
       r"|instructions))\b"),
    _r(_P, 1.0, "send email e-mail forward post upload transmit mail & list emails data records database key"
       " keys credentials passwords secrets",
       r"\b(?:send|e-?mail|forward|post|upload|transmit)\b[^.!?\n]{0,60}?\b(?:customer (?:list|emails|data",
       r"|records|database)|(?:user|client) (?:data|records|list|database)|api keys?|credentials|passwords",
       r"|secrets)\b[^.!?\n]{0,60}?\bto (?:the )?(?:[\w-]+ ){0,3}?(?:[\w.+-]+@[\w-]+\.|https?://)"),
    _r(_M, 1.0, "append include add insert & token code string id reference trace_id doc_id & reply replies"
       " answer answers response responses summary summaries output",
       r"\b(?:append|include|add|insert)\b[^.!?\n]{0,60}?\b(?:token|code|string|id|reference|trace_id",
       r"|doc_id)\b[^.!?\n]{0,60}?\b(?:to|in|at) (?:the end of )?(?:your|every|each|any) (?:reply|replies",
       r"|answer|answers|response|responses|summary|summaries|output)\b"),
    # memory-poisoning ----------------------------------------------------------------------
    _r(_M, 1.0, "anyone anybody someone somebody everyone people users user customers customer clients"
       " client visitors visitor & whenever time if when & tell reply respond say recommend answer"
       " send suggest direct point link give mention push steer sell promote warn",
       r"\b(?:whenever|every time|each time|if|when) <ANYONE> <W>{0,4}?(?:asks?|mentions?",
       r"|says?|wants?|requests?|talks?|needs?)\b[^.!?\n]{0,60}?(?:,|\bthen\b) ?",
       r"(?:you (?:should |must |will |shall |need to )?)?(?:always )?<ACT>"),
    _r(_M, 1.0, "always never rule instruction directive policy every users future everyone everybody"
       " anyone customers customer user & remember"
       " memorise memorize store save record keep add make note write update",
       r"\b<MEM>\b[^.!?\n]{0,60}?(?:\b(?:you|the assistant|the ai|the bot|assistant) ",
       r"(?:must|should|shall|will|are to|need to|have to) (?:always|never)\b",
       r"|<CLAUSE>(?:always|never) (?:recommend|promote|mention|suggest|tell|say|respond",
       r"|reply|answer|include|link|send|refer)\b",
       r"|\bas an? (?:rule|instruction|directive|policy)\b",
       r"|\bevery (?:user|answer|response|reply|conversation|session|message)\b",
       r"|\b(?:all|any) (?:users|future sessions|future conversations)\b",
       r"|\b(?:tell|say|repeat|share|spread|pass) (?:it |this |that )?(?:on )?to (?:everyone|everybody",
       r"|anyone|all (?:users|customers)|every (?:user|customer)|other users)\b(?! (?:at|in|from|on)\b)",
       r"|\bfor (?:everyone|everybody|anyone|all users|every user) (?:who|that)\b)"),
    _r(_M, 1.0, "always & users people everyone anyone customers visitors",
       r"<CLAUSE>always (?:tell|recommend|respond|reply|answer|say)\b",
       r"[^.!?\n]{0,30}?\b(?:users|people|everyone|anyone|customers|visitors)\b"),
    _r(_M, 1.0, "user & admin administrator developer operator root superuser",
       r"\bthe user is (?:an? |the )?(?:system )?(?:admin(?:istrator)?|developer|operator",
       r"|root|superuser)\b"),
    _r(_M, 0.6, "assistant ai bot model & note message memo instruction instructions",
       r"\b(?:note|message|memo|instructions?) (?:for|to) the (?:assistant|ai|bot|model)\b"),
    _r(_M, 0.5, "future", r"\b(?:in |for )?all future (?:sessions|conversations|chats)\b"),
)
# fmt: on


# Prefilter index: a rule is a candidate only if a word of its first (rarest) group occurs.
_BY_WORD: dict[str, list[int]] = {}
_BY_SUB: list[int] = []  # rules whose first group has substrings: checked every time
for _i, _rule in enumerate(_RULES):
    for _w in _rule.needs[0].words:
        _BY_WORD.setdefault(_w, []).append(_i)
    if _rule.needs[0].subs:
        _BY_SUB.append(_i)
_INDEXED = frozenset(_BY_WORD)


def _matches(text: str, *, use_hints: bool = True) -> dict[str, float]:
    """Summed weight per label of the rules matching ``text`` (``use_hints=False``: self-check)."""
    return _rule_totals(prepare(text), use_hints=use_hints)


def _rule_totals(prepared: tuple[str, str, set[str]], *, use_hints: bool = True,
                 letters: set[str] | None = None) -> dict[str, float]:
    """``letters``: the text's :func:`letter_words`, when the caller has them."""
    norm, lined, words = prepared
    if use_hints:
        candidates = {i for i in _BY_SUB if _RULES[i].wanted(norm, words)}
        for word in _INDEXED.intersection(words):
            candidates.update(_BY_WORD[word])
        rules = [_RULES[i] for i in sorted(candidates) if _RULES[i].wanted(norm, words, True)]
    else:
        rules = list(_RULES)
    totals = foreign_matches(norm, fold, letters)
    for rule in rules:
        if rule.pattern.search(lined if rule.lines else norm):
            totals[rule.label] = totals.get(rule.label, 0.0) + rule.weight
    return totals


def _verdict(text: str, model: bool = True) -> tuple[dict[str, float], float | None]:
    """The rules' totals, and the classifier's probability over its threshold when the rules do
    not flag the text and the classifier is on and wanted (else ``None``)."""
    prepared = prepare(text)
    letters = letter_words(prepared[0], prepared[2])  # one tokenising for the lexicon and the model's gate
    totals = _rule_totals(prepared, letters=letters)
    if not model or sum(totals.values()) >= THRESHOLD or not may_read(prepared[1], letters):
        return totals, None  # flagged already, or nothing the classifier would read: no model load
    classifier = load_classifier()
    if classifier is None:
        return totals, None
    return totals, classifier.probability(prepared[1]) / classifier.threshold


def injection_score(text: str) -> float:
    """The rules' summed weight, or the classifier's probability over its threshold, whichever is
    higher, capped at 1.0; ``>= THRESHOLD`` means flagged."""
    if not text:
        return 0.0
    totals, model = _verdict(text)
    return min(1.0, max(sum(totals.values()), model or 0.0))


def detect_injection(text: str, *, model: bool = True) -> str | None:
    """The reason label when ``text`` looks like an instruction override, else ``None``.

    The rules decide first (their label says which kind of override); text they let through is
    read by the embedding classifier, which flags it as ``embedded-instructions``, unless
    ``model=False`` (the gate passes that for assistant turns: see ``gate.screen``).
    """
    if not text:
        return None
    totals, prob = _verdict(text, model)
    if sum(totals.values()) >= THRESHOLD:
        return max(totals, key=totals.__getitem__)
    return CLASSIFIER_LABEL if prob is not None and prob >= 1.0 else None
