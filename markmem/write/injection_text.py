"""What the injection guard reads besides the text itself: unwrapped payloads and other languages.

:func:`unwrap` runs on the raw text, before the guard's folding (``injection.py``):

* HTML and markdown comments (``<!-- x -->``, ``[//]: # (x)``) and HTML tags become line breaks,
  so a hidden note starts its own line, where the role-header rules look;
* base64 runs that decode to readable UTF-8 text are appended, decoded, on their own line;
* letters spelled out with a separator (``i.g.n.o.r.e``, ``F-O-R-G-E-T``, ``I_G_N_O_R_E``) are joined,
  and so are single-spaced letters whose words are set apart by wider gaps
  (``d i s r e g a r d   y o u r   r u l e s``).

:func:`foreign_matches` scores the folded text against a small lexicon of override, reveal,
no-limits and memory-poisoning phrases in Spanish, French, German, Italian, Portuguese, Dutch,
Polish, Russian, Chinese, Japanese and Turkish: a rule fires when the concepts it needs co-occur
within one sentence. The lexicon is folded like the text (accents off, homoglyphs mapped), so
its entries are written naturally here.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
import urllib.parse
from collections.abc import Callable

__all__ = ["ENGLISH", "english_share", "foreign_matches", "letter_words", "unwrap"]

_HTML_TAG = re.compile(
    r"<!--|-->|\[//\]: ?# ?\(|</?(?:div|span|p|a|b|i|em|strong|font|small|section|article|td|tr|li|ul|br"
    r"|img|meta|noscript|template|details|summary|hidden|style|script|iframe|body|html|head)\b[^<>]{0,300}>",
    re.IGNORECASE,
)
_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/]{20,}={0,6}(?![A-Za-z0-9+/=_-])")
_SEPARATED = re.compile(r"(?<![^\W_])[^\W\d_](?:[._-][^\W\d_]){3,}(?![^\W_])")
_SEP_HINT = re.compile(r"[._-][^\W\d_][._-][^\W\d_][._-]")
_SEPARATED_SHORT = re.compile(r"(?<![^\W_])[^\W\d_](?:[._-][^\W\d_])+(?![^\W_])")
_SPACED_WIDE = re.compile(r"(?:(?<=^)|(?<=\s\s))[^\W\d_](?: [^\W\d_]){2,}(?=\s\s|$)")
_MAX_B64 = 8  # decode at most this many runs per text
_SAMPLE = 4000  # a text is checked for reading reversed or in rot13 on its first characters
_HEX = re.compile(r"[0-9a-fA-F]+")
_BASE32 = re.compile(r"[A-Z2-7]+=*")
_BINARY = re.compile(r"(?<![01])(?:[01]{8} ){5,}[01]{8}(?![01])")
_A85 = re.compile(r"<~.{4,}?~>", re.DOTALL)
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_UESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_ASCII_WORD = re.compile(r"[a-z']+")
ENGLISH = frozenset(
    "the a an and or to of in on for with is are was be you your i my me it this that what all any not"
    " from as at by if now then than do don't no so we our they them their he she his her will would"
    " can could should must have has had about before after every only just".split()
)


def unwrap(text: str) -> str:
    """``text`` with hidden markup opened, spelled-out words joined and encoded payloads decoded."""
    if "<" in text or "[//]" in text:
        text = _A85.sub(_replace_a85, text) if "<~" in text else text
        text = _HTML_TAG.sub("\n", text)
    if "  " in text:
        text = _SPACED_WIDE.sub(lambda m: m.group().replace(" ", ""), text)
    if _SEP_HINT.search(text) and len(_SEPARATED.findall(text)) > 1:  # join short ones too ("t.h.e")
        text = _SEPARATED_SHORT.sub(lambda m: re.sub(r"[._-]", "", m.group()), text)
    if "%" in text and len(_PERCENT.findall(text)) > 2:
        text = urllib.parse.unquote(text)
    if "\\u" in text:
        text = _UESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)
    if len(text) > 19:
        if _long_token(text) and _B64_RUN.search(text):
            text = _B64_RUN.sub(_replace, text, count=_MAX_B64)
        if "0" in text and _BINARY.search(text):
            text = _BINARY.sub(_replace_binary, text, count=_MAX_B64)
        sample = text[:_SAMPLE]
        if sample.isascii() and ENGLISH.isdisjoint(sample.lower().split()) and english_share(sample) < 0.08:
            # it may read as English reversed or in rot13
            text = "\n".join([text, *(alt for alt in (text[::-1], codecs.encode(text, "rot13"))
                                      if english_share(alt) >= 0.2)])
    return text


def _long_token(text: str) -> bool:
    """Whether a run of 20 non-space characters exists: a base64 run cannot be found without one
    (a plain split finds it faster than the run's pattern, whose look-behind is tried everywhere)."""
    return max(map(len, text.split()), default=0) >= 20


def english_share(text: str) -> float:
    """The share of the words of ``text`` that are common English function words (0 for < 3 words)."""
    words = _ASCII_WORD.findall(text.lower())
    return sum(w in ENGLISH for w in words) / len(words) if len(words) > 2 else 0.0


def _readable(raw: bytes) -> str | None:
    try:
        out = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    readable = sum(c.isprintable() or c in "\n\t" for c in out)
    return out if readable >= 0.95 * len(out) and " " in out else None


def _replace(match: re.Match[str]) -> str:
    """A decoded run on its own line, in place of the run."""
    decoded = _decode(match.group())
    return f"\n{decoded}\n" if decoded else match.group()


def _replace_binary(match: re.Match[str]) -> str:
    raw = bytes(int(byte, 2) for byte in match.group().split())
    decoded = _readable(raw)
    return f"\n{decoded}\n" if decoded else match.group()


def _replace_a85(match: re.Match[str]) -> str:
    try:
        decoded = _readable(base64.a85decode(match.group(), adobe=True))
    except ValueError:
        return match.group()
    return f"\n{decoded}\n" if decoded else match.group()


def _decode(run: str) -> str | None:
    """The text a hex, base32 or base64 run stands for, if it is readable text."""
    if run.isalpha() and (run.islower() or run.isupper()):
        return None  # a long word, not a payload
    attempts = []
    if len(run) % 2 == 0 and _HEX.fullmatch(run):
        attempts.append(lambda: bytes.fromhex(run))
    if _BASE32.fullmatch(run):
        attempts.append(lambda: base64.b32decode(run + "=" * (-len(run.rstrip("=")) % 8 if "=" not in run else 0)))
    attempts.append(lambda: base64.b64decode(run + "=" * (-len(run) % 4), validate=True))
    for attempt in attempts:
        try:
            decoded = _readable(attempt())
        except (binascii.Error, ValueError):
            continue
        if decoded:
            return decoded
    return None


# Concepts: each a tuple of phrases, folded at import. A phrase of letters and spaces matches at word
# boundaries (a phrase of several words may take a suffix: Turkish, German); CJK matches anywhere.
_C: dict[str, tuple[str, ...]] = {
    "IGNORE": (
        "ignora", "ignorar", "ignores", "ignorad", "olvida", "olvidate", "olvides", "no hagas caso",
        "haz caso omiso", "desconsidera", "ignorez", "ignore", "oublie", "oubliez", "ne tiens plus compte",
        "ne tenez plus compte", "fais abstraction", "ignoriere", "ignorieren", "ignorier", "vergiss",
        "vergesst", "missachte", "dimentica", "dimenticare", "non seguire", "non tenere conto", "trascura",
        "esqueca", "esquece", "desconsidere", "nao siga", "negeer", "vergeet", "zignoruj", "ignoruj",
        "zapomnij", "игнорируй", "проигнорируй", "забудь", "не обращай внимания", "忽略", "无视", "忽视",
        "不要理会", "忘记", "無視", "忘れろ", "忘れてください", "yok say", "unut", "gormezden gel",
        "dikkate alma",
    ),
    "RULES": (
        "sicherheitsrichtlinien", "linee guida", "instrucciones", "reglas", "directrices",
        "indicaciones", "normas", "todo lo que te dijeron",
        "consignes", "instructions", "regles", "directives", "anweisungen", "regeln", "richtlinien",
        "vorgaben", "was man dir", "istruzioni", "regole", "direttive", "indicazioni", "instrucoes",
        "regras", "orientacoes", "diretrizes", "instructies", "opdrachten", "regels", "richtlijnen",
        "polecenia", "instrukcje", "zasady", "инструкции", "правила", "указания", "指令", "指示", "规则",
        "ルール", "命令", "talimatlari", "talimatlar", "kurallari", "kurallar",
    ),
    "PRIOR": (
        "anteriores", "previas", "que te dieron", "al principio", "precedentes", "anterieures",
        "qu'on t'a", "qu'on vous a", "vorherigen", "bisherigen", "vorigen", "fruheren", "vorher",
        "precedenti", "ti hanno dato", "ti sono state date", "que voce recebeu", "que te deram", "eerdere",
        "vorige", "wczesniejsze", "poprzednie", "poprzednich", "wczesniejszych", "предыдущие", "прежние",
        "предыдущих", "之前", "以前", "先前", "これまで", "onceki",
    ),
    "YOUR": (
        "tus", "tu", "vuestras", "tes", "vos", "ton", "deine", "deinen", "dein", "tue", "tuoi", "tua", "suas",
        "seus", "tuas", "teus", "jouw", "je", "swoje", "twoje", "swoich", "свои", "твои", "твоих", "你的",
    ),
    "ALL": (
        "todas", "todos", "toutes", "tous", "alle", "alles", "tutte", "tutti", "wszystkie", "wszystko", "все",
        "всё", "所有", "すべて", "tum",
    ),
    "NEWRULES": (
        "nuevas instrucciones", "nouvelles instructions", "neue anweisungen", "neue regeln",
        "nuove istruzioni", "novas instrucoes", "nieuwe instructies", "nowe instrukcje", "новые инструкции",
        "新指令", "新しい指示", "yeni talimatlar",
    ),
    "VOID": (
        "non valgono", "nicht gelten", "gelten nicht", "ne s'appliquent pas", "no aplican", "no se aplican",
        "nao se aplicam", "nao valem",
        "ya no valen", "ya no aplican", "ya no cuentan", "ne s'appliquent plus", "ne comptent plus",
        "gelten ... nicht mehr", "nicht mehr gultig", "non valgono piu", "non sono piu valide", "nao valem mais",
        "nao se aplicam mais", "gelden ... niet meer", "nie obowiazuja", "больше не действуют", "不再适用",
        "もう無効",
    ),
    "REVEAL": (
        "muestra", "muestrame", "revela", "revelame", "dime", "ensename", "affiche", "montre", "montre-moi",
        "revele", "donne-moi", "dis-moi", "zeig", "zeige", "gib", "verrate", "nenne", "mostra", "mostrami",
        "rivela", "dimmi", "mostre", "revele", "diga", "mostra", "toon", "laat", "vertel", "pokaz",
        "ujawnij", "podaj", "покажи", "раскрой", "выведи", "скажи", "告诉我", "显示", "输出", "透露",
        "表示", "見せて", "教えて", "goster", "soyle",
    ),
    "SECRET": (
        "prompt de sistema", "prompt del sistema", "mensaje del sistema", "instrucciones ocultas",
        "configuracion oculta", "instrucciones secretas", "prompt systeme", "message systeme",
        "configuration cachee", "instructions secretes", "instructions cachees", "systemprompt",
        "systemanweisungen", "geheimen anweisungen", "versteckten anweisungen", "prompt di sistema",
        "istruzioni segrete", "istruzioni nascoste", "istruzioni di sistema", "instructions systeme",
        "instrucciones del sistema", "instrucoes do sistema", "systeeminstructies",
        "prompt do sistema", "instrucoes ocultas",
        "instrucoes secretas", "systeemprompt", "geheime instructies", "prompt systemowy",
        "ukryte instrukcje", "системный промпт", "системные инструкции", "скрытые инструкции", "系统提示",
        "隐藏指令", "システムプロンプト", "隠された指示", "sistem mesaj", "sistem komut", "gizli talimat",
    ),
    "NOLIMIT": (
        "sin ningun tipo de filtro", "sin restricciones", "sin censura", "sin filtro", "sin filtros",
        "sin limites", "sin reglas", "sans regles", "senza regole", "sem regras", "keine regeln",
        "keine richtlinien", "uneingeschrankt", "ohne einschraenkungen", "sans aucune limite",
        "plus aucune restriction", "sans filtre", "sans restriction",
        "sans aucune restriction", "ohne einschrankungen", "ohne filter", "ohne jegliche", "ohne grenzen",
        "senza alcun limite", "senza filtri", "senza restrizioni", "senza alcun filtro", "senza limiti",
        "sem restricoes", "sem filtros", "sem limites", "sem censura", "zonder beperkingen",
        "zonder filter", "bez zadnych ograniczen", "bez ograniczen", "без ограничений", "没有任何限制",
        "不受限制", "无限制", "制限なし", "制限なく", "kisitlaman yok", "kisitlama olmadan", "sinirsiz",
    ),
    "ANSWER": (
        "responde", "contesta", "a partir de ahora", "desde ahora", "eres", "reponds", "a partir de maintenant",
        "desormais", "tu es", "antworte", "ab sofort", "ab jetzt", "du bist", "rispondi", "da ora",
        "da adesso", "sei un", "responda", "a partir de agora", "voce e", "antwoord", "voortaan", "vanaf nu",
        "odpowiadaj", "od teraz", "jestes", "hast du", "gibst du", "du hast", "отвечай", "теперь",
        "ты", "回答", "从现在", "现在开始", "答えて",
        "これから", "cevap", "artik",
    ),
    "MEMO": (
        "guarda como regla", "recuerda para todos", "memoriza", "retiens", "memorise", "merke dir",
        "speichere", "ricorda per tutti", "memorizza", "memorize", "lembre para todos", "onthoud",
        "zapamietaj", "запомни", "记住", "覚えて", "hatirla",
    ),
    "ANYONE": (
        "cualquier usuario", "todos los usuarios", "alguien", "tous les utilisateurs", "quiconque",
        "alle nutzer", "jeden nutzer", "tutti gli utenti", "chiunque", "todos os usuarios", "alguem",
        "alle gebruikers", "iedereen", "wszystkich uzytkownikow", "всех пользователей", "所有用户",
        "全てのユーザー", "tum kullanicilar",
    ),
    "RECOMMEND": (
        "recomienda", "recomendarle", "recomendar", "conseille", "recommande", "empfiehl", "empfehle",
        "consiglia", "recomende", "raad", "polecaj", "рекомендуй", "推荐", "勧めて", "oner",
    ),
}
# label, weight, concepts that must all occur in one sentence
_FOREIGN_RULES: tuple[tuple[str, float, tuple[str, ...]], ...] = (
    ("override-instructions", 1.0, ("IGNORE", "RULES", "PRIOR")),
    ("override-instructions", 1.0, ("IGNORE", "RULES", "YOUR")),
    ("override-instructions", 1.0, ("IGNORE", "RULES", "ALL")),
    ("override-instructions", 1.0, ("NEWRULES", "ANSWER")),
    ("prompt-exfiltration", 1.0, ("REVEAL", "RULES", "YOUR")),
    ("override-instructions", 1.0, ("RULES", "VOID")),
    ("prompt-exfiltration", 1.0, ("REVEAL", "SECRET")),
    ("role-play-jailbreak", 1.0, ("NOLIMIT", "ANSWER")),
    ("memory-poisoning", 1.0, ("MEMO", "ANYONE", "RECOMMEND")),
)
_TRIGGERS = ("IGNORE", "VOID", "REVEAL", "NOLIMIT", "MEMO", "NEWRULES")  # every rule needs one of these
_SENTENCE = re.compile(r"[.!?;\n。！？]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_WORD = re.compile(r"[^\W\d_]+")
_NON_LETTERS = re.compile(r"[0-9_]+")


class _Concept:
    """Single words are looked up in the sentence's word set; a phrase runs its regex only when its
    first word is present; CJK phrases are plain substring tests."""

    def __init__(self, phrases: tuple[str, ...], fold: Callable[[str], str]) -> None:
        folded = {fold(p) for p in phrases}
        self.cjk = tuple(p for p in folded if _CJK.search(p))
        self.words = frozenset(p for p in folded if _WORD.fullmatch(p) and p not in self.cjk)
        by_first: dict[str, list[str]] = {}
        for phrase in folded.difference(self.words, self.cjk):
            body = r"(?: \S+){0,3} ".join(map(re.escape, phrase.split(" ... ")))  # "a ... b": a gap
            by_first.setdefault(_WORD.findall(phrase)[0], []).append(rf"(?<!\w){body}")  # suffixes allowed
        self.phrases = {first: re.compile("|".join(bodies)) for first, bodies in by_first.items()}

    def found(self, text: str, words: set[str], cjk: bool) -> bool:
        if not self.words.isdisjoint(words):
            return True
        if any(self.phrases[first].search(text) for first in words.intersection(self.phrases)):
            return True
        return cjk and any(phrase in text for phrase in self.cjk)


_CONCEPTS: dict[str, _Concept] = {}
_TRIGGER_KEYS: set[str] = set()  # every word a trigger concept looks up: no CJK and none of them, no match


def letter_words(norm: str, tokens: set[str] | None = None) -> set[str]:
    """The runs of letters in ``norm`` (``_WORD``). ``tokens``, the ``[a-z0-9_]+`` runs of the same
    text (``injection_fold.prepare`` has them), give them without another pass over the text when
    it is ASCII and lower-case: there every letter run is a token, or a token's piece between
    digits and underscores (``tests/test_gate_speed.py`` compares with the regex)."""
    if tokens is None or not (norm.isascii() and norm.islower()):
        return set(_WORD.findall(norm))
    if not _NON_LETTERS.search(norm):
        return tokens  # no digit, no underscore: every token is a run of letters (the same set: read it only)
    out = {t for t in tokens if t.isalpha()}
    for t in tokens:
        if not t.isalpha():
            out.update(p for p in _NON_LETTERS.split(t) if p)
    return out


def foreign_matches(norm: str, fold: Callable[[str], str], words: set[str] | None = None) -> dict[str, float]:
    """Summed weight per label of the foreign-language rules matching the folded text ``norm``;
    ``words``: its :func:`letter_words`, when the caller has them."""
    if not _CONCEPTS:
        built = {name: _Concept(phrases, fold) for name, phrases in _C.items()}
        _TRIGGER_KEYS.update(*(built[name].words.union(built[name].phrases) for name in _TRIGGERS))
        _CONCEPTS.update(built)  # last: a thread that sees the concepts sees the keys
    if words is None:
        words = set(_WORD.findall(norm))
    cjk = bool(_CJK.search(norm))
    if not cjk and words.isdisjoint(_TRIGGER_KEYS):
        return {}  # what the test below decides for such a text, in one set lookup
    if not any(_CONCEPTS[name].found(norm, words, cjk) for name in _TRIGGERS):
        return {}
    totals: dict[str, float] = {}
    for sentence in _SENTENCE.split(norm):
        here = set(_WORD.findall(sentence))
        present = {name for name, concept in _CONCEPTS.items() if concept.found(sentence, here, cjk)}
        for label, weight, needs in _FOREIGN_RULES:
            if present.issuperset(needs):
                totals[label] = max(totals.get(label, 0.0), weight)
    return totals
