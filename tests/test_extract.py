"""The heuristic extractor on real sentences: what it reads, what it skips, whose fact it is."""

from __future__ import annotations

import pytest

from markmem.model import Candidate, RawEntry
from markmem.write.extract import HeuristicExtractor, clauses, facts_in, norm_value

EXTRACT = HeuristicExtractor()


def turn(text: str, role: str = "user", speaker: str | None = None, user: str = "alice") -> RawEntry:
    return RawEntry(id="r-000000000001", user_id=user, role=role, content=text,
                    recorded_at="2026-01-01T00:00:00.000000Z", speaker=speaker, path="raw/u/alice/x.jsonl")


def cands(text: str, **kw: object) -> list[Candidate]:
    return EXTRACT.extract([turn(text, **kw)]).candidates  # type: ignore[arg-type]


def pairs(text: str, **kw: object) -> set[tuple[str, str]]:
    return {(c.predicate, norm_value(c.value)) for c in cands(text, **kw) if not c.negated}


FACTS = [
    ("I live in Paris.", "lives_in", "paris"),
    ("I just moved to Tokyo!", "lives_in", "tokyo"),
    ("I'm living in Berlin these days.", "lives_in", "berlin"),
    ("We moved to Denver last week with the kids.", "lives_in", "denver"),
    ("I relocated to Dublin for work.", "lives_in", "dublin"),
    ("I've lived in Boston for five years.", "lives_in", "boston"),
    ("I moved to Chicago in March.", "lives_in", "chicago"),
    ("I moved from Leeds to Manchester.", "lives_in", "manchester"),
    ("I've moved back home to Cork.", "lives_in", "cork"),
    ("i live in amsterdam", "lives_in", "amsterdam"),
    ("im living in warsaw", "lives_in", "warsaw"),
    ("Since last month, I live in Graz.", "lives_in", "graz"),
    ("Just moved to Porto!", "lives_in", "porto"),
    ("I live in São Paulo.", "lives_in", "são paulo"),
    ("I'm from Lyon.", "hometown", "lyon"),
    ("I work as a nurse.", "job", "nurse"),
    ("I'm a software engineer.", "job", "software engineer"),
    ("I'm a teacher now.", "job", "teacher"),
    ("I started working as a pastry chef.", "job", "pastry chef"),
    ("I got a new job as a product manager.", "job", "product manager"),
    ("I became a principal this year.", "job", "principal"),
    ("I got promoted to senior analyst.", "job", "senior analyst"),
    ("I'm an engineer at Boeing.", "job", "engineer"),
    ("My new job is customer support.", "job", "customer support"),
    ("I work at Google.", "employer", "google"),
    ("I joined Microsoft last week.", "employer", "microsoft"),
    ("I started at Deloitte on Monday.", "employer", "deloitte"),
    ("I'm employed by Bosch now.", "employer", "bosch"),
    ("I recently started a job at Amazon.", "employer", "amazon"),
    ("I'm vegetarian.", "diet", "vegetarian"),
    ("I went vegan in January.", "diet", "vegan"),
    ("I've been pescatarian since last year.", "diet", "pescatarian"),
    ("I'm on a paleo diet now.", "diet", "paleo"),
    ("I follow a keto diet.", "diet", "keto"),
    ("I prefer window seats.", "seat_preference", "window seats"),
    ("Actually I prefer aisle seats now.", "seat_preference", "aisle seats"),
    ("I now prefer window seats on long flights.", "seat_preference", "window seats"),
    ("I prefer aisle seats over window seats.", "seat_preference", "aisle seats"),
    ("I prefer rooms with a view.", "room_preference", "rooms with a view"),
    ("I prefer tea.", "prefers", "tea"),
    ("My favorite color is green now.", "favorite_color", "green"),
    ("My boyfriend is Tom.", "partner", "tom"),
    ("My wife's name is Anna.", "partner", "anna"),
    ("I'm dating Jake now.", "partner", "jake"),
    ("I married Daniel in June.", "partner", "daniel"),
    ("I'm married to my high school sweetheart, Jenna.", "partner", "jenna"),
    ("I'm single.", "marital_status", "single"),
    ("I got married last month.", "marital_status", "married"),
    ("I have a dog named Rex.", "pet", "dog named rex"),
    ("I've got a cat called Luna.", "pet", "cat named luna"),
    ("My phone number is 555-201-3344.", "phone", "5552013344"),
    ("My new number is 555-987-6543.", "phone", "5559876543"),
    ("I changed my number to 415-555-0199.", "phone", "4155550199"),
    ("My new email address is alice@new.example.org.", "email", "alicenewexampleorg"),
    ("Please note my new email: sam@new.example.net", "email", "samnewexamplenet"),
    ("My name is Katherine.", "name", "katherine"),
    ("My name's Priya.", "name", "priya"),
    ("I'm Tom, by the way.", "name", "tom"),
    ("Please call me Kate.", "preferred_name", "kate"),
    ("I just turned 35.", "age", "35"),
    ("I drive a Honda Civic.", "car", "honda civic"),
    ("I just bought a Subaru Outback.", "car", "subaru outback"),
    ("I'm studying chemistry now.", "studies", "chemistry"),
    ("I switched my major to economics.", "studies", "economics"),
    ("I'm also allergic to shellfish.", "allergy", "shellfish"),
    ("I also speak German.", "speaks", "german"),
    ("I'm fluent in Portuguese too.", "speaks", "portuguese"),
    ("I also love hiking.", "likes", "hiking"),
    ("My sister's name is Maria.", "relationship_sister", "maria"),
]


@pytest.mark.parametrize(("text", "predicate", "value"), FACTS)
def test_reads_first_person_facts(text: str, predicate: str, value: str) -> None:
    assert (predicate, value) in pairs(text)


def test_two_clauses_two_facts() -> None:
    assert pairs("I live in Paris and work as a nurse.") == {("lives_in", "paris"), ("job", "nurse")}
    assert pairs("I moved to Lyon and I'm a teacher now.") == {("lives_in", "lyon"), ("job", "teacher")}
    assert pairs("I'm 27 and I live in Rome.") == {("age", "27"), ("lives_in", "rome")}


def test_a_past_clause_does_not_hide_the_present_one() -> None:
    assert pairs("I used to live in Paris but I moved to Rome last year.") == {("lives_in", "rome")}


@pytest.mark.parametrize("text", [
    "Do you think I should move to Bangkok?",
    "Should I move to Tallinn or stay",
    "Can you suggest recipes?",
    "Where do you live?",
    "What if we moved to Brussels, would the commute be worse?",
    "Am I still vegan if I eat honey?",
])
def test_questions_are_skipped(text: str) -> None:
    assert cands(text) == []


def test_a_statement_before_a_tag_question_is_a_statement() -> None:
    assert pairs("Can you suggest recipes? I'm vegan, remember?") == {("diet", "vegan")}
    assert pairs("in salzburg for the next few days for work, any cafe tips?") == {("staying_in", "salzburg")}


@pytest.mark.parametrize("text", [
    "I used to live in Barcelona.",
    "When I was a kid I lived in Bergen.",
    "If I lived in Miami I'd surf every day.",
    "I wish I lived in Barcelona.",
    "I'd like to live in Lisbon one day.",
    "I'm moving to Dubai next month.",
    "I'm going to move to Dubai in the spring.",
    "I will move to Monaco next year.",
    "I'm planning to become a lawyer.",
    "I lived in Ghent for two years in college.",
    "My sister lives in Crete.",
    "My brother just moved to Vienna.",
    'My friend told me "I live in Warsaw now".',
    "You live in Dublin, right?",
    "I'm in Paris this week for a conference.",
    "I visited Zagreb and loved it.",
    "I'm a big fan of jazz and I'm a bit tired today.",
    "My mom is a doctor and my dad works as a pilot.",
    "I moved the meeting to Friday.",
    "I moved to a new apartment near the park.",
    "I quit smoking last year.",
    "I left my umbrella at the office.",
    "I have 3 kids and I ran 5 miles.",
    "I'm Italian.",
])
def test_not_a_fact_about_the_user(text: str) -> None:
    """Nothing the user is now: third parties' facts have their own subject, and a plan with a date
    starts in the future (see test_future_dated_changes_start_later)."""
    now = "2026-01-01T00:00:00.000000Z"
    assert [c for c in cands(text) if c.predicate in ("lives_in", "job", "employer", "name", "age")
            and not c.negated and c.subject == "alice" and (c.valid_from or now) <= now] == []


@pytest.mark.parametrize(("text", "predicate", "value", "start"), [
    ("I'm moving to Dubai next month.", "lives_in", "dubai", "2026-02-01"),
    ("I will move to Monaco next year.", "lives_in", "monaco", "2027-01-01"),
    ("From next month I'll work at Ostara.", "employer", "ostara", "2026-02-01"),
    ("Starting in March I'm moving to Lyon.", "lives_in", "lyon", "2026-03-01"),
])
def test_future_dated_changes_start_later(text: str, predicate: str, value: str, start: str) -> None:
    (c,) = [c for c in cands(text) if c.predicate == predicate]
    assert norm_value(c.value) == value and (c.valid_from or "")[:10] == start


@pytest.mark.parametrize(("text", "subject", "predicate", "value"), [
    ("My sister lives in Crete.", "sister", "lives_in", "crete"),
    ("My brother just moved to Vienna.", "brother", "lives_in", "vienna"),
    ("My mom is a doctor and my dad works as a pilot.", "dad", "job", "pilot"),
    ("Tom got a job at Ostara.", "Tom", "employer", "ostara"),
    ("My sister Maria moved to Oslo.", "Maria", "lives_in", "oslo"),
])
def test_facts_about_other_people_have_their_subject(text: str, subject: str, predicate: str, value: str) -> None:
    assert (subject, predicate, value) in {(c.subject, c.predicate, norm_value(c.value)) for c in cands(text)}


@pytest.mark.parametrize(("text", "predicate", "value"), [
    ("I'm not vegan anymore.", "diet", "vegan"),
    ("I'm no longer vegetarian.", "diet", "vegetarian"),
    ("I stopped being pescatarian last summer.", "diet", "pescatarian"),
    ("I no longer work at Spotify.", "employer", "spotify"),
    ("I don't live in Cologne anymore.", "lives_in", "cologne"),
    ("I no longer have a dog.", "pet", "dog"),
    ("I'm not allergic to cats anymore.", "allergy", "cats"),
    ("I don't like sushi anymore.", "likes", "sushi"),
    ("I left Acme Corp in May.", "employer", "acme corp"),
    ("I moved out of Bonn last month.", "lives_in", "bonn"),
    ("My hamster died last week.", "pet", "hamster"),
])
def test_negations_name_what_they_close(text: str, predicate: str, value: str) -> None:
    negs = {(c.predicate, norm_value(c.value)) for c in cands(text) if c.negated}
    assert (predicate, value) in negs
    assert not [c for c in cands(text) if not c.negated and c.predicate == predicate]


@pytest.mark.parametrize(("text", "predicates"), [
    ("I quit my job yesterday.", {"job", "employer"}),
    ("I retired last month.", {"job", "employer"}),
    ("I got laid off last week.", {"job", "employer"}),
    ("I'm unemployed at the moment.", {"job", "employer"}),
    ("I broke up with Tom.", {"partner"}),
    ("My boyfriend and I broke up.", {"partner"}),
    ("I eat meat again.", {"diet"}),
])
def test_closers_end_facts_without_a_new_value(text: str, predicates: set[str]) -> None:
    found = cands(text)
    assert {c.predicate for c in found} == predicates
    assert all(c.negated and c.value == "" for c in found)


def test_negation_and_new_value_in_one_turn() -> None:
    found = cands("I'm no longer a nurse. I'm a midwife now.")
    assert [(c.predicate, c.value, c.negated) for c in found] == [("job", "nurse", True), ("job", "midwife", False)]


@pytest.mark.parametrize("text", [
    "I think I am a vegetarian",
    "Maybe I prefer aisle seats for short hops.",
    "Not sure, but I think I'm vegan now.",
    "I guess I live in Vienna now, kind of.",
])
def test_hedges_get_a_confidence_under_the_review_threshold(text: str) -> None:
    found = cands(text)
    assert found and all(c.confidence < 0.5 for c in found)


@pytest.mark.parametrize("role", ["assistant", "system", "tool", "other"])
def test_only_user_turns_are_read(role: str) -> None:
    assert cands("I live in Tokyo. I'm a teacher. I'm vegan.", role=role) == []


def test_a_named_speaker_is_its_own_subject() -> None:
    (c,) = cands("I live in Quito.", speaker="bob")
    assert c.subject == "bob" and c.predicate == "lives_in"
    (own,) = cands("I live in Paris.", speaker="Alice")  # the user's own name, any case
    assert own.subject == "alice"


def test_transcript_labels_name_the_speaker() -> None:
    found = cands("Caroline: I live in Boston.\nMelanie: I'm a painter.")
    assert {(c.subject, c.predicate, c.value) for c in found} == {
        ("Caroline", "lives_in", "Boston"), ("Melanie", "job", "painter")}
    assert cands("Assistant: I live in Zagreb.") == []
    assert cands("AI: I'm a teacher.") == []
    (update,) = cands("Update: I now live in Brooklyn.")  # a label that is not a speaker
    assert update.subject == "alice" and update.value == "Brooklyn"


def test_claim_text_is_the_sentence_and_types_are_set() -> None:
    (c,) = cands("Oh, and I moved to Tokyo last month. Nice weather.")
    assert c.text == "I moved to Tokyo last month." and c.type == "profile" and not c.multi
    (pet,) = cands("I adopted a cat named Mia.")
    assert pet.multi and pet.type == "relationship"


def test_masked_values_are_values() -> None:
    assert pairs("I live in <LOCATION>.") == {("lives_in", "<location>")}
    assert pairs("My partner is <PERSON>.") == {("partner", "<person>")}
    assert pairs("My phone number is <PHONE_NUMBER>.") == {("phone", "<phone_number>")}


def test_quarantined_turns_are_never_read() -> None:
    entry = turn("I live in Oslo.")
    from dataclasses import replace

    assert EXTRACT.extract([replace(entry, quarantined="override-instructions")]).candidates == []


def test_clauses_split_only_before_a_new_first_person_clause() -> None:
    assert clauses("I live in Trinidad and Tobago.") == ["I live in Trinidad and Tobago."]
    assert clauses("Sorry, I live in Portland, not Seattle.") == ["Sorry", "I live in Portland, not Seattle."]
    assert clauses("I like rock and roll and I play guitar.") == ["I like rock and roll", "I play guitar."]


def test_facts_in_reads_one_clause() -> None:
    assert facts_in("I am pescatarian") == [("diet", "pescatarian", "profile", False, 0.9)]
    assert facts_in("nothing to see here") == []
