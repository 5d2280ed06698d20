"""What text is indexed for each unit. Kept in one place: it shapes recall more than fusion does.

A turn is indexed as ``[8 May 2023] Speaker: text`` (the date in words, so "in May" or "2023"
match), plus a second FTS column, ``context``, holding the text of its neighbours in the same
session (up to ``NEIGHBOURS`` turns either side). A reply such as "Oscar, my guinea pig!" is then
found by the question that came before it ("what pet do you have?"). Neighbours are the user's
adjacent turns in recording order, on the same run and agent, less than ``SESSION_GAP`` apart in
valid time; quarantined turns are nobody's neighbours. A turn that asks something (it ends with
"?") is linked to the next turn of its session when someone else says it: that is its answer,
and the read path lets the answer inherit the question's relevance. Both are pure functions of
the user's log, so a rebuilt cache holds the same text and links.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Set
from datetime import datetime, timedelta

from ..model import Claim, RawEntry

NEIGHBOURS = 2
SESSION_GAP = timedelta(hours=2)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")
# "Caroline: hi" - a transcript line names its speaker; 1-3 capitalised words, then ": ".
_SPEAKER = re.compile(r"([A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30}){0,2}): ")


def turn_text(content: str, speaker: str | None) -> str:
    return f"{speaker}: {content}" if speaker else content


def turn_speaker(content: str, speaker: str | None) -> str | None:
    """Who said a turn: the ``name`` given with it, else a transcript-style ``Name: `` prefix."""
    if speaker:
        return speaker
    m = _SPEAKER.match(content)
    return m.group(1) if m else None


def human_date(iso: str) -> str:
    """``2023-05-08T13:56:00Z`` -> ``8 May 2023``."""
    try:
        return f"{int(iso[8:10])} {_MONTHS[int(iso[5:7]) - 1]} {iso[:4]}"
    except (ValueError, IndexError):
        return iso[:10]


def turn_body(entry: RawEntry) -> str:
    """``[8 May 2023] Speaker: text``: the date helps temporal questions, the speaker who-questions."""
    return f"[{human_date(entry.when)}] {turn_text(entry.content, entry.speaker)}"


# words a question about a slot uses that its clause may not ("Where does the user work?" -> employer)
SLOT_WORDS = {
    "lives_in": "lives live home city moved", "staying_in": "staying currently now visiting",
    "hometown": "from grew up hometown", "employer": "works work company employer job",
    "job": "job work occupation profession role", "partner": "partner spouse relationship",
    "pet": "pet pets animal", "diet": "diet eat food", "phone_model": "phone", "laptop": "laptop computer",
    "car": "car drive vehicle", "member_of": "member club", "plays": "plays instrument",
    "speaks": "speaks language languages", "learning": "learning learns", "school": "school",
    "work_pattern": "work shift shifts hours",
}


def claim_body(claim: Claim) -> str:
    pred = claim.predicate.replace("_", " ")
    words = SLOT_WORDS.get(claim.predicate) or ("schedule when" if claim.predicate.startswith("routine_") else "")
    return f"{claim.text} ({pred}: {claim.value}{'; ' + words if words else ''})"


def content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


# -- neighbour context and question -> answer links ----------------------------------------
# (body and id last: the functions below read the others by position)
_COLS = "rowid, run_id, agent_id, valid_at, speaker, content, role, context, question, answer, body, id"
_QUESTION = re.compile(r"\?[\s\"')]*(?:\[[^\]]*\])?\s*$")  # ends with "?" (a trailing [note] aside)
_UPDATE = "UPDATE raw SET context = ?, question = ?, answer = ? WHERE rowid = ?"
# raw_fts is written here and by ``Cache.upsert_raw``, not by triggers: FTS5 flushes its pending
# terms at every trigger's statement savepoint, so a row indexed by a trigger cost ~5x one indexed
# by a plain statement (index.schema). Inserts and deletes carry the row's exact body and context.
FTS_INSERT = "INSERT INTO raw_fts(rowid, body, context) VALUES (?, ?, ?)"
FTS_DELETE = "INSERT INTO raw_fts(raw_fts, rowid, body, context) VALUES ('delete', ?, ?, ?)"


def is_question(content: str) -> bool:
    return bool(_QUESTION.search(content))


def link_turns(db: sqlite3.Connection, spans: dict[str, tuple[str, str]], fresh: Set[str]) -> set[str]:
    """Recompute context, question flag and answer link around new turns: ``spans`` maps each
    user to the (min, max) ``recorded_at`` of their new turns. Rows whose id is in ``fresh`` are
    not in ``raw_fts`` yet: those it sees are indexed here with their final context, once, and
    their ids returned (a quarantined one is nobody's neighbour: the caller indexes it); every
    other row whose context changes is re-indexed."""
    indexed: set[str] = set()
    for user_id, (lo, hi) in spans.items():
        indexed |= _relink(db, user_id, lo, hi, fresh)[1]
    return indexed


def link_users(db: sqlite3.Connection) -> int:
    """Compute context, question flag and answer link for every turn (a freshly loaded cache,
    whose FTS index is built after, from the rows: nothing is written to it here)."""
    spans = db.execute("SELECT user_id, min(recorded_at), max(recorded_at) FROM raw GROUP BY user_id").fetchall()
    return sum(_relink(db, user_id, lo, hi, frozenset(), fts=False)[0] for user_id, lo, hi in spans)


def relink_span(db: sqlite3.Connection, user_id: str, lo: str, max_rowid: int, cols: str) -> list[tuple]:
    """The existing turns (``rowid <= max_rowid``) whose context, question flag or answer link
    :func:`_relink` may have updated when turns recorded at ``lo`` or later were added: every
    live turn recorded from ``lo`` on, and the ``NEIGHBOURS`` live turns right before.
    (``_relink`` updates at most those; the in-memory lexicon reloads exactly this set.)"""
    live = "user_id = ? AND quarantined IS NULL AND rowid <= ?"
    before = db.execute(f"SELECT {cols} FROM raw WHERE {live} AND recorded_at < ? ORDER BY recorded_at DESC, "
                        "rowid DESC LIMIT ?", (user_id, max_rowid, lo, NEIGHBOURS)).fetchall()
    since = db.execute(f"SELECT {cols} FROM raw WHERE {live} AND recorded_at >= ?", (user_id, max_rowid, lo)).fetchall()
    return before + since


_LIVE = "user_id = ? AND quarantined IS NULL"
# The window around recording times lo..hi, in one statement: up to ``reach`` live turns before
# (newest first), every live turn in lo..hi, up to ``reach`` after; the last column says which part.
_WINDOW = (
    f"SELECT * FROM (SELECT {_COLS}, recorded_at, 0 FROM raw WHERE {_LIVE} AND recorded_at < ? "
    "ORDER BY recorded_at DESC, rowid DESC LIMIT ?) "
    f"UNION ALL SELECT {_COLS}, recorded_at, 1 FROM raw WHERE {_LIVE} AND recorded_at BETWEEN ? AND ? "
    f"UNION ALL SELECT * FROM (SELECT {_COLS}, recorded_at, 2 FROM raw WHERE {_LIVE} AND recorded_at > ? "
    "ORDER BY recorded_at, rowid LIMIT ?)"
)


def _order(row: tuple) -> tuple[str, int]:
    return row[12], row[0]  # (recorded_at, rowid)


def _relink(db: sqlite3.Connection, user_id: str, lo: str, hi: str, fresh: Set[str],
            fts: bool = True) -> tuple[int, set[str]]:
    """Recompute the rows around recording times ``lo``..``hi``; keep :func:`relink_span` a superset
    of what this may update. With ``fts``, a row not in ``fresh`` whose context changes has its
    FTS row replaced (deleted with the old text, inserted with the new), and a row in ``fresh``
    is indexed. Returns (rows changed, ids of the fresh rows indexed)."""
    reach = 2 * NEIGHBOURS  # a changed row's neighbours need their own neighbours to recompute
    parts: tuple[list[tuple], list[tuple], list[tuple]] = ([], [], [])
    for row in db.execute(_WINDOW, (user_id, lo, reach, user_id, lo, hi, user_id, hi, reach)):
        parts[row[13]].append(row)
    before, middle, after = (sorted(part, key=_order) for part in parts)
    seq = before + middle + after
    first = max(0, len(before) - NEIGHBOURS)
    last = len(before) + len(middle) + min(NEIGHBOURS, len(after))
    links = [_same_session(a, b) for a, b in zip(seq, seq[1:], strict=False)]
    updates, deletes, inserts = [], [], []
    indexed: set[str] = set()
    for i in range(first, last):
        row = seq[i]
        new = (_context(seq, links, i), int(is_question(row[5])), _answer(seq, links, i))
        if new != tuple(row[7:10]):
            updates.append((*new, row[0]))
        if not fts:
            continue
        if row[11] in fresh:
            inserts.append((row[0], row[10], new[0]))
            indexed.add(row[11])
        elif new[0] != row[7]:
            deletes.append((row[0], row[10], row[7]))
            inserts.append((row[0], row[10], new[0]))
    db.executemany(_UPDATE, updates)
    if deletes:
        db.executemany(FTS_DELETE, deletes)
    if inserts:
        db.executemany(FTS_INSERT, inserts)
    return len(updates), indexed


def _context(seq: list[tuple], links: list[bool], i: int) -> str:
    parts: list[str] = []
    j = i
    while j > 0 and i - j < NEIGHBOURS and links[j - 1]:
        j -= 1
        parts.insert(0, turn_text(seq[j][5], seq[j][4]))
    j = i
    while j < len(seq) - 1 and j - i < NEIGHBOURS and links[j]:
        j += 1
        parts.append(turn_text(seq[j][5], seq[j][4]))
    return "\n".join(parts)


def _answer(seq: list[tuple], links: list[bool], i: int) -> int | None:
    """The next turn of the session, if this one asks and someone else speaks next."""
    if i + 1 >= len(seq) or not links[i] or not is_question(seq[i][5]):
        return None
    asker, other = seq[i], seq[i + 1]
    who_a, who_b = turn_speaker(asker[5], asker[4]), turn_speaker(other[5], other[4])
    if (who_a or who_b) and who_a != who_b:
        return int(other[0])
    return int(other[0]) if not (who_a or who_b) and asker[6] != other[6] else None


def _same_session(a: tuple, b: tuple) -> bool:
    if a[1] != b[1] or a[2] != b[2]:
        return False
    return abs(_time(b[3]) - _time(a[3])) < SESSION_GAP


def _time(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))
