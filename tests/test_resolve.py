"""The resolver on its own: a page store in a dict, candidates in, ledger changes out."""

from __future__ import annotations

from dataclasses import replace

import pytest

from markmem.errors import MalformedPage
from markmem.model import Candidate, Claim, Page, RawEntry
from markmem.write.resolve import apply, page_id_for, resolve

NOW = "2030-01-01T00:00:00.000000Z"


def entry(n: int, when: str, user: str = "alice") -> RawEntry:
    return RawEntry(id=f"r-{n:012d}", user_id=user, role="user", content="...", recorded_at=NOW,
                    occurred_at=f"{when}T00:00:00.000000Z", path=f"raw/u/{user}/2030/01/01.jsonl")


def cand(e: RawEntry, predicate: str, value: str, **kw: object) -> Candidate:
    return Candidate(e.id, kw.pop("subject", e.user_id), predicate, value, f"text {value}", **kw)  # type: ignore[arg-type]


class Store:
    """Pages by id, as the compile worker sees them between batches."""

    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}

    def run(self, *pairs: tuple[RawEntry, Candidate], now: str = NOW, review_below: float = 0.5):
        entries = {e.id: e for e, _ in pairs}
        res = resolve([c for _, c in pairs], entries, self.pages.get, now, review_below,
                      siblings=lambda prefix: [p for p in self.pages if p.startswith(prefix)])
        self.pages.update(res.pages)
        return res

    def claims(self, user: str = "alice", predicate: str | None = None) -> list[Claim]:
        return [c for p in self.pages.values() if p.user_id == user for c in p.claims
                if predicate is None or c.predicate == predicate]

    def active(self, predicate: str, user: str = "alice") -> set[str]:
        return {c.value for c in self.claims(user, predicate) if c.active}

    def at(self, predicate: str, day: str, user: str = "alice") -> set[str]:
        return {c.value for c in self.claims(user, predicate) if c.valid_at(f"{day}T12:00:00.000000Z")}


@pytest.fixture
def store() -> Store:
    return Store()


def t(day: str) -> str:
    return f"{day}T00:00:00.000000Z"


def test_a_new_value_closes_the_old_and_points_both_ways(store: Store) -> None:
    a, b = entry(1, "2024-01-01"), entry(2, "2024-06-01")
    store.run((a, cand(a, "lives_in", "Paris")))
    res = store.run((b, cand(b, "lives_in", "Tokyo")))
    assert (res.added, res.closed) == (1, 1)
    old, new = sorted(store.claims(), key=lambda c: c.valid_from or "")
    assert old.valid_until == t("2024-06-01") == new.valid_from and old.closed_at == NOW
    assert old.superseded_by == new.id and new.supersedes == old.id and new.active


def test_same_value_reinforces(store: Store) -> None:
    a, b = entry(1, "2024-01-01"), entry(2, "2024-06-01")
    store.run((a, cand(a, "lives_in", "Paris", confidence=0.8)))
    res = store.run((b, cand(b, "lives_in", "paris.", confidence=0.8)))
    (claim,) = store.claims()
    assert res.reinforced == 1 and len(claim.sources) == 2 and claim.confidence == 0.85


def test_applying_the_same_raw_twice_changes_nothing(store: Store) -> None:
    a, b, c = entry(1, "2024-01-01"), entry(2, "2024-06-01"), entry(3, "2024-09-01")
    batch = [(a, cand(a, "lives_in", "Paris")), (b, cand(b, "lives_in", "Tokyo")),
             (c, cand(c, "lives_in", "Tokyo", negated=True)), (c, cand(c, "pet", "cat", multi=True))]
    store.run(*batch)
    before = dict(store.pages)
    again = store.run(*batch)
    assert (again.added, again.closed, again.reinforced) == (0, 0, 0) and again.pages == {}
    assert store.pages == before


def test_late_fact_ends_where_the_known_one_starts(store: Store) -> None:
    tokyo, paris = entry(1, "2024-06-01"), entry(2, "2024-01-01")
    store.run((tokyo, cand(tokyo, "lives_in", "Tokyo")))
    store.run((paris, cand(paris, "lives_in", "Paris")))
    assert store.active("lives_in") == {"Tokyo"} and store.at("lives_in", "2024-03-01") == {"Paris"}
    p = next(c for c in store.claims() if c.value == "Paris")
    t_ = next(c for c in store.claims() if c.value == "Tokyo")
    assert p.valid_until == t("2024-06-01") and p.superseded_by == t_.id and t_.supersedes == p.id


def test_late_fact_in_the_middle_splits_the_timeline(store: Store) -> None:
    jan, mar, feb = entry(1, "2024-01-01"), entry(2, "2024-03-01"), entry(3, "2024-02-01")
    store.run((jan, cand(jan, "lives_in", "Paris")), (mar, cand(mar, "lives_in", "Rome")))
    store.run((feb, cand(feb, "lives_in", "Berlin")))
    assert store.at("lives_in", "2024-01-15") == {"Paris"}
    assert store.at("lives_in", "2024-02-15") == {"Berlin"}
    assert store.at("lives_in", "2024-03-15") == {"Rome"} == store.active("lives_in")
    by = {c.value: c for c in store.claims()}
    assert by["Paris"].superseded_by == by["Berlin"].id and by["Berlin"].supersedes == by["Paris"].id
    assert by["Berlin"].superseded_by == by["Rome"].id and by["Rome"].supersedes == by["Berlin"].id


def test_any_arrival_order_gives_the_same_timeline() -> None:
    facts = [(1, "2024-01-01", "A"), (2, "2024-02-01", "B"), (3, "2024-03-01", "C"), (4, "2024-04-01", "D")]
    import itertools

    answers = set()
    for order in itertools.permutations(facts):
        store = Store()
        for n, day, value in order:
            e = entry(n, day)
            store.run((e, cand(e, "job", value)))
        history = tuple(store.at("job", d).pop() for d in ("2024-01-15", "2024-02-15", "2024-03-15"))
        answers.add(history + tuple(store.active("job")))
    assert answers == {("A", "B", "C", "D")}


def test_restating_an_old_value_late_reinforces_it(store: Store) -> None:
    jan, jun, mar = entry(1, "2024-01-01"), entry(2, "2024-06-01"), entry(3, "2024-03-01")
    store.run((jan, cand(jan, "lives_in", "Paris")), (jun, cand(jun, "lives_in", "Tokyo")))
    res = store.run((mar, cand(mar, "lives_in", "Paris")))
    assert res.reinforced == 1 and len(store.claims()) == 2


def test_negation_closes_the_named_value_only(store: Store) -> None:
    a, b, c = entry(1, "2024-01-01"), entry(2, "2024-02-01"), entry(3, "2024-03-01")
    store.run((a, cand(a, "lives_in", "Bonn")))
    store.run((b, cand(b, "lives_in", "Cologne", negated=True)))
    assert store.active("lives_in") == {"Bonn"}
    res = store.run((c, cand(c, "lives_in", "bonn", negated=True)))
    (bonn,) = store.claims()
    assert res.closed == 1 and bonn.valid_until == t("2024-03-01") and bonn.superseded_by is None


def test_empty_negation_closes_whatever_holds(store: Store) -> None:
    a, b = entry(1, "2024-01-01"), entry(2, "2024-02-01")
    store.run((a, cand(a, "job", "nurse")))
    store.run((b, cand(b, "job", "", negated=True)))
    assert store.active("job") == set() and store.at("job", "2024-01-15") == {"nurse"}


def test_negation_then_new_value_from_the_same_turn(store: Store) -> None:
    a, b = entry(1, "2024-01-01"), entry(2, "2024-02-01")
    store.run((a, cand(a, "job", "nurse")))
    store.run((b, cand(b, "job", "nurse", negated=True)), (b, cand(b, "job", "midwife")))
    assert store.active("job") == {"midwife"}


def test_negation_before_the_fact_closes_nothing(store: Store) -> None:
    late, early = entry(1, "2024-06-01"), entry(2, "2024-01-01")
    store.run((late, cand(late, "diet", "vegan")))
    res = store.run((early, cand(early, "diet", "vegan", negated=True)))
    assert res.closed == 0 and store.active("diet") == {"vegan"}


def test_multi_valued_adds_a_page_per_value(store: Store) -> None:
    a, b = entry(1, "2024-01-01"), entry(2, "2024-02-01")
    store.run((a, cand(a, "pet", "dog named Rex", multi=True)))
    res = store.run((b, cand(b, "pet", "cat named Mia", multi=True)))
    assert res.closed == 0 and store.active("pet") == {"dog named Rex", "cat named Mia"}
    assert len({p for p in store.pages if "/pet--v" in p}) == 2


def test_multi_valued_negation_finds_the_value_page(store: Store) -> None:
    a, b, c = entry(1, "2024-01-01"), entry(2, "2024-02-01"), entry(3, "2024-03-01")
    store.run((a, cand(a, "pet", "dog named Rex", multi=True)), (b, cand(b, "pet", "cat named Mia", multi=True)))
    res = store.run((c, cand(c, "pet", "dog", multi=True, negated=True)))
    assert res.closed == 1 and store.active("pet") == {"cat named Mia"}
    assert not any(p.endswith(page_id_for("alice", cand(c, "pet", "dog", multi=True)).rsplit("/", 1)[1])
                   for p in store.pages)  # no empty page for the negated value


def test_masked_values_never_reinforce(store: Store) -> None:
    a, b = entry(1, "2024-01-01"), entry(2, "2024-02-01")
    store.run((a, cand(a, "lives_in", "<LOCATION>")))
    res = store.run((b, cand(b, "lives_in", "<LOCATION>")))
    assert (res.added, res.closed, res.reinforced) == (1, 1, 0)


def test_other_users_and_subjects_are_other_pages(store: Store) -> None:
    a, b, c = entry(1, "2024-01-01"), entry(2, "2024-02-01", user="carol"), entry(3, "2024-03-01")
    store.run((a, cand(a, "lives_in", "Paris")), (b, cand(b, "lives_in", "Tokyo")),
              (c, cand(c, "lives_in", "Quito", subject="bob")))
    assert store.active("lives_in") == {"Paris", "Quito"}
    assert store.active("lives_in", user="carol") == {"Tokyo"}
    assert all(c.superseded_by is None for c in store.claims()) and all(
        c.superseded_by is None for c in store.claims("carol"))
    bob = page_id_for("alice", cand(c, "lives_in", "Quito", subject="bob"))
    assert bob != page_id_for("alice", cand(a, "lives_in", "Paris")) and "bob" not in bob


def test_low_confidence_and_hedged_negations_go_to_review(store: Store) -> None:
    a, b = entry(1, "2024-01-01"), entry(2, "2024-02-01")
    res = store.run((a, cand(a, "diet", "vegan", confidence=0.4)), (b, cand(b, "diet", "vegan", negated=True,
                                                                             confidence=0.4)))
    assert [c.predicate for c, _ in res.review] == ["diet", "diet"] and store.pages == {}


def test_a_malformed_page_sends_the_fact_to_review() -> None:
    def broken(page_id: str) -> Page | None:
        raise MalformedPage(f"wiki/{page_id}.md", "bad YAML")

    a = entry(1, "2024-01-01")
    res = resolve([cand(a, "lives_in", "Paris")], {a.id: a}, broken, NOW, 0.5)
    assert len(res.review) == 1 and res.pages == {}


def test_apply_skips_deleted_claims() -> None:
    a, b = entry(1, "2024-01-01"), entry(2, "2024-02-01")
    claims, _ = apply([], cand(a, "job", "nurse"), a, NOW)
    claims = [replace(claims[0], metadata={"deleted": NOW})]
    claims, counts = apply(claims, cand(b, "job", "chef"), b, NOW)
    assert counts == (1, 0, 0) and claims[0].superseded_by is None
