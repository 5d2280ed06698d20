"""What a search shows once a fact changed, and the ways of saying a change the extractor reads.

End to end with real git, SQLite and spaCy's parser (no mock): one memory repo, a user per
scenario, compiled in one flush. The read side: a turn that names a value memory knows to be past
(the assistant's "Bruges in winter sounds magical!" after the move to Ghent) is marked like a stale
turn, in JSON (``valid_until``, ``superseded_by``) and in the pack ("superseded on <date>"); the
turn that tells of the change is not; other people's facts stay out of a question about the user.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from markmem import Memory
from markmem.model import Claim
from markmem.read import echo
from tests.facts_fixtures import scripted_memory

pytest.importorskip("spacy")

Turn = tuple[str, str, str]  # (role, occurred_at, text)
SCENARIOS: dict[str, list[Turn]] = {
    "echo": [("user", "2026-01-12T09:00:00Z", "I live in Bruges and the canals freeze over some winters."),
             ("assistant", "2026-01-12T09:00:01Z", "Bruges in winter sounds magical! Do you skate on the canals?"),
             ("user", "2026-02-02T09:00:00Z", "My friend Ola thinks Bruges is too touristy, lol"),
             ("user", "2026-07-20T09:00:00Z", "We finally moved to Ghent last month, the flat is bright."),
             ("assistant", "2026-07-20T09:00:01Z", "Congratulations on the move to Ghent!")],
    "ended": [("user", "2026-01-01T09:00:00Z", "I'm vegan, have been for three years."),
              ("user", "2026-07-07T09:00:00Z", "I'm not vegan anymore, I eat fish again.")],
    "back": [("user", "2026-01-01T09:00:00Z", "I live in Cork."),
             ("user", "2026-04-01T09:00:00Z", "I moved to Kilkenny."),
             ("user", "2026-10-01T09:00:00Z", "I moved back to Cork, Kilkenny didn't work out."),
             ("assistant", "2026-10-01T09:00:01Z", "Cork has missed you! Kilkenny is lovely though.")],
    "others": [("user", "2026-02-02T09:00:00Z", "I live in Bath."),
               ("user", "2026-05-05T09:00:00Z", "My brother lives in Swindon and hates the roundabouts."),
               ("assistant", "2026-05-05T09:00:01Z", "Swindon is famous for its Magic Roundabout!")],
    "asof": [("user", "2026-01-10T09:00:00Z", "I live in Vienna."),
             ("user", "2026-06-15T09:00:00Z", "I'm in Split for two weeks on holiday, then back home.")],
    # ways of saying a change
    "moved-up": [("user", "2026-03-05T09:00:00Z", "I live in Hobart with my partner."),
                 ("user", "2026-10-11T09:00:00Z", "Moved up to Brisbane for the warmth, no regrets.")],
    "been-living": [("user", "2024-11-01T09:00:00Z", "I live in Halifax, Nova Scotia."),
                    ("user", "2026-10-01T09:00:00Z", "Been living in Vancouver for a year now, the rain is real.")],
    "set-up-home": [("user", "2026-02-02T09:00:00Z", "I live in Malmö."),
                    ("user", "2026-08-08T09:00:00Z", "I've set up home in Lund, it's a short train away.")],
    "payroll": [("user", "2026-03-01T09:00:00Z", "I'm employed by Tavistock Hotels."),
                ("user", "2026-09-01T09:00:00Z", "I'm on the payroll at Greenway Travel now, doing marketing.")],
    "been-at": [("user", "2024-06-01T09:00:00Z", "I work at Kestrel Labs as a chemist."),
                ("user", "2026-11-01T09:00:00Z", "I've been at Orion Pharma for ages now, running their QA lab.")],
    "last-day": [("user", "2026-02-10T09:00:00Z", "I'm a data analyst at Fernhill Insurance."),
                 ("user", "2026-09-15T09:00:00Z", "Today was my last day at Fernhill.")],
    "freelance": [("user", "2026-02-02T09:00:00Z", "I'm a copywriter at Inkwell Agency."),
                  ("user", "2026-10-10T09:00:00Z", "I went freelance in September.")],
    "swap": [("user", "2026-01-01T09:00:00Z", "I drink oat milk in my coffee."),
             ("user", "2026-04-01T09:00:00Z", "I switched to almond milk."),
             ("user", "2026-09-01T09:00:00Z", "I'm back on oat milk, almond was too thin.")],
    "shift": [("user", "2026-01-01T09:00:00Z", "I work the early shift."),
              ("user", "2026-03-01T09:00:00Z", "I'm on the night shift now, it's rough.")],
    "phone": [("user", "2026-03-03T09:00:00Z", "My phone is a Pixel 6."),
              ("user", "2026-09-09T09:00:00Z", "Got a new phone, an iPhone 15, the old one's battery died.")],
    "gym": [("user", "2026-05-05T09:00:00Z", "My gym is PureFit on King Street."),
            ("user", "2026-06-01T09:00:00Z", "I'm switching to Iron Yard gym from July, PureFit got too crowded.")],
    "from-date": [("user", "2026-01-10T09:00:00Z", "I live in Turin."),
                  ("user", "2026-02-01T09:00:00Z", "From March 1st I'll be living in Bologna, the new job starts.")],
    "wait": [("user", "2026-05-01T09:00:00Z", "I grew up in Lisburn."),
             ("user", "2026-05-01T09:05:00Z", "no wait, it was Lurgan, I always mix them up")],
    "actually": [("user", "2026-06-06T09:00:00Z", "My car is a Honda Jazz."),
                 ("user", "2026-06-07T09:00:00Z", "Actually it's a Honda Civic, the Jazz was my old one.")],
    "divorced": [("user", "2026-01-01T09:00:00Z", "My husband is called Tom."),
                 ("user", "2026-09-01T09:00:00Z", "Tom and I divorced this summer.")],
    "lived-once": [("user", "2026-01-01T09:00:00Z", "I lived in Ghent for two years in college.")],
    "lease": [("user", "2026-01-30T09:00:00Z", "I live in Croydon."),
              ("user", "2026-03-18T09:00:00Z", "signed the lease in Brighton!! moving saturday, pray for me")],
    "cancelled": [("user", "2026-03-01T09:00:00Z", "we pay for netflix and i barely watch it"),
                  ("user", "2026-05-10T09:00:00Z", "took your advice, cancelled netflix.")],
    "sold": [("user", "2026-03-05T09:00:00Z", "I own a Vespa scooter"),
             ("user", "2026-10-05T09:00:00Z", "sold the Vespa, too cold for winter")],
    "plant": [("user", "2026-01-05T09:00:00Z", "I'm pescatarian"),
              ("user", "2026-08-05T09:00:00Z", "I've gone fully plant-based since July")],
    "poached": [("user", "2026-03-17T09:00:00Z", "my employer is Globex, I do their payroll"),
                ("user", "2026-08-08T09:00:00Z", "got poached by Initech, so I'm on their finance team now")],
    "joined": [("user", "2026-05-05T09:00:00Z", "I joined Vantage Bank as a junior analyst this spring")],
    "dropped": [("user", "2026-02-16T09:00:00Z", "doing intermittent fasting 16:8, first meal at noon."),
                ("user", "2026-06-28T09:00:00Z", "dropped the fasting thing tbh, eating breakfast again")],
}


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    root: Path = tmp_path_factory.mktemp("factsfirst") / "memory"
    m = scripted_memory(root, SCENARIOS)
    yield m
    m.close()


def claims(mem: Memory, user: str) -> list[Claim]:
    return [c for p in mem.get_all(user, include_archived=True) for c in p.claims]


def now(mem: Memory, user: str, predicate: str, at: str = "2026-11-30T00:00:00Z") -> set[str]:
    return {c.value.casefold() for c in claims(mem, user) if c.predicate == predicate and c.valid_at(at)
            and c.subject == user}


# -- the read side -------------------------------------------------------------------------------

def test_the_assistant_repeating_an_old_value_is_marked_and_goes_after_the_facts(mem: Memory) -> None:
    hits = mem.search("Where does the user live?", user_id="echo", top_k=8)
    first = hits[0]
    assert first.kind == "claim" and "Ghent" in first.text
    magic = next(h for h in hits if h.text.startswith("Bruges in winter"))
    assert magic.valid_until is not None and magic.valid_until.startswith("2026-07-20")
    assert magic.superseded_by is not None and mem.get(magic.superseded_by, user_id="echo").value == "Ghent"
    turns = [h for h in hits if h.kind == "turn"]
    assert turns.index(magic) == len(turns) - 1 or all(t.valid_until for t in turns[turns.index(magic):])
    pack = mem.search("Where does the user live?", user_id="echo", top_k=8, format="context").text
    line = next(ln for ln in pack.splitlines() if "Bruges in winter" in ln)
    assert line.startswith("- assistant: ") and "(2026-01-12; superseded on 2026-07-20)" in line
    assert pack.index("Ghent") < pack.index("Bruges in winter")


def test_the_users_own_mention_of_an_old_value_is_marked_in_place(mem: Memory) -> None:
    hits = mem.search("Is Bruges touristy?", user_id="echo", top_k=8)
    ola = next(h for h in hits if "Ola" in h.text)
    assert ola.valid_until is not None and ola.superseded_by is not None


def test_the_turn_that_tells_of_the_change_is_not_marked(mem: Memory) -> None:
    hits = mem.search("Is the user vegan?", user_id="ended", top_k=5)
    told = next(h for h in hits if "not vegan anymore" in h.text)
    assert told.valid_until is None and told.superseded_by is None
    said = next(h for h in hits if h.text.startswith("I'm vegan"))
    assert said.valid_until is not None, "the turn of the claim that ended is stale"


def test_a_value_that_is_current_again_is_not_marked(mem: Memory) -> None:
    assert now(mem, "back", "lives_in") == {"cork"}
    hits = mem.search("Cork or Kilkenny?", user_id="back", top_k=8)
    again = next(h for h in hits if h.text.startswith("Cork has missed you"))
    assert again.valid_until is not None, "it names Kilkenny, which was replaced"
    assert hits[0].kind == "claim" and hits[0].text == "I moved back to Cork"


def test_other_peoples_facts_stay_out_of_a_question_about_the_user(mem: Memory) -> None:
    hits = mem.search("Where does the user live?", user_id="others", top_k=8)
    assert hits and "Bath" in hits[0].text
    assert not any("Swindon" in h.text for h in hits)
    pack = mem.search("Where does the user live?", user_id="others", top_k=8, format="context").text
    assert "Bath" in pack and "Swindon" not in pack, pack
    theirs = mem.search("Where does the user's brother live?", user_id="others", top_k=8)
    assert theirs[0].kind == "claim" and "Swindon" in theirs[0].text, "the person asked about comes first"


def test_an_as_of_search_marks_what_had_ended_by_then(mem: Memory) -> None:
    during = mem.search("Split holiday", user_id="asof", top_k=5, as_of="2026-06-20T00:00:00Z")
    split = next(h for h in during if "Split" in h.text)
    assert split.valid_until is None or split.valid_until > "2026-06-20", "valid then: not marked"
    after = mem.search("Split holiday", user_id="asof", top_k=5, as_of="2026-08-01T00:00:00Z")
    split = next(h for h in after if "Split" in h.text and h.kind == "turn")
    assert split.valid_until is not None and split.valid_until <= "2026-08-01"
    pack = mem.search("Split holiday", user_id="asof", top_k=5, as_of="2026-08-01T00:00:00Z",
                      format="context").text
    assert "ended on" in next(ln for ln in pack.splitlines() if "Split" in ln)


def test_claim_book_and_sql_mark_the_same_turns(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    from markmem.index import claimbook

    def seen() -> list[object]:
        return [[(h.id, h.valid_until, h.superseded_by) for h in mem.search(q, user_id=u, top_k=8)]
                for u, q in (("echo", "Where does the user live?"), ("back", "Where does the user live?"),
                             ("ended", "Is the user vegan?"), ("others", "Where does the user live?"))]

    seen()  # the second search of a process reads the book
    fast = seen()
    monkeypatch.setattr(claimbook, "ENABLED", False)
    assert seen() == fast


def test_value_terms() -> None:
    assert echo.terms("on Wednesday") == ("wednesday",)
    assert set(echo.terms("Fernhill Insurance")) == {"fernhill insurance", "fernhill", "insurance"}
    assert echo.terms("the") == ()
    closed = {"id": "c1", "value": "Bruges", "valid_from": "2026-01-01", "valid_until": "2026-07-01",
              "superseded_by": "c2"}
    live = {"id": "c2", "value": "Ghent", "valid_from": "2026-07-01", "valid_until": None, "superseded_by": None}
    terms = echo.closed_terms([closed, live], "2026-08-01")
    assert set(terms) == {"bruges"}
    assert set(echo.echoes({"r1": "Bruges's canals!", "r2": "Ghent is nice", "r3": "brugesque"}, terms)) == {"r1"}
    assert echo.closed_terms([closed, live], "2026-03-01") == {}, "not closed yet then"
    assert echo.closed_terms([closed], "2026-08-01", names=("Bruges",)) == {}, "a person's name is not a value"


# -- ways of saying a change ---------------------------------------------------------------------

@pytest.mark.parametrize(("user", "predicate", "value"), [
    ("moved-up", "lives_in", "brisbane"), ("been-living", "lives_in", "vancouver"),
    ("set-up-home", "lives_in", "lund"), ("payroll", "employer", "greenway travel"),
    ("been-at", "employer", "orion pharma"), ("freelance", "employer", "freelance"),
    ("phone", "phone_model", "iphone 15"), ("from-date", "lives_in", "bologna"),
    ("wait", "hometown", "lurgan"), ("actually", "car", "honda civic"), ("lease", "lives_in", "brighton"),
    ("plant", "diet", "plant-based"), ("poached", "employer", "initech"), ("joined", "employer", "vantage bank"),
])
def test_a_change_in_other_words_replaces_the_old_value(mem: Memory, user: str, predicate: str, value: str) -> None:
    assert now(mem, user, predicate) == {value}


def test_been_living_somewhere_for_a_year_is_not_a_temporary_stay(mem: Memory) -> None:
    home = [c for c in claims(mem, "been-living") if c.value == "Vancouver"]
    assert home and home[0].predicate == "lives_in" and home[0].valid_until is None


def test_a_past_stay_is_not_a_home(mem: Memory) -> None:
    assert now(mem, "lived-once", "lives_in") == set()


def test_a_last_day_ends_the_employer_and_the_job_said_with_it(mem: Memory) -> None:
    assert now(mem, "last-day", "employer") == set() and now(mem, "last-day", "job") == set()
    assert now(mem, "last-day", "job", at="2026-05-01T00:00:00Z") == {"data analyst"}


def test_a_swap_replaces_the_value_of_the_same_kind(mem: Memory) -> None:
    assert now(mem, "swap", "drinks", at="2026-06-01T00:00:00Z") == {"almond milk"}
    assert now(mem, "swap", "drinks") == {"oat milk"}, "back on oat milk ends the almond milk"
    assert now(mem, "shift", "work_pattern") == {"night shift"}  # both shifts read as the work pattern slot


def test_a_dated_switch_starts_on_its_date(mem: Memory) -> None:
    assert now(mem, "gym", "gym", at="2026-06-15T00:00:00Z") == {"purefit on king street"}
    assert now(mem, "gym", "gym") == {"iron yard gym"}
    assert now(mem, "from-date", "lives_in", at="2026-02-15T00:00:00Z") == {"turin"}


def test_a_correction_keeps_its_own_clause_as_text(mem: Memory) -> None:
    civic = [c for c in claims(mem, "actually") if c.value == "Honda Civic"]
    assert civic and civic[0].text == "Actually it's a Honda Civic"


def test_a_divorce_this_summer_ends_the_partner_for_good(mem: Memory) -> None:
    assert now(mem, "divorced", "partner") == set()
    assert not any(c.predicate.endswith("_for_now") for c in claims(mem, "divorced"))


def test_an_ending_after_a_comma_or_in_loose_words_closes_the_fact(mem: Memory) -> None:
    assert now(mem, "cancelled", "subscription", at="2026-04-01T00:00:00Z") == {"netflix"}
    assert now(mem, "cancelled", "subscription") == set()
    assert now(mem, "dropped", "diet", at="2026-03-01T00:00:00Z") == {"intermittent fasting"}
    assert now(mem, "dropped", "diet") == set()
    assert now(mem, "sold", "car") == set(), "'too cold for winter' does not make the sale temporary"
