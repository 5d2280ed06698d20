"""Cache schema. Bump ``VERSION`` on any change: an old cache is then rebuilt, never migrated.

Besides the rows mirrored from the repo, two derived pieces serve the read path:

* ``raw.context``: the text of a turn's neighbours in its session (see ``index.text``), indexed as
  a second, lower-weight FTS5 column, so a terse answer is found by the question before it;
  ``raw.question`` marks a turn that asks something and ``raw.answer`` is the rowid of the next
  turn of the session, by someone else, that answers it;
* ``raw_vocab``: how many rows each (stemmed) term is in, so a query can drop the terms that would
  cost the most and rank the least (see ``read.fts.prune``);
* ``user_gen``: per-user counters bumped by triggers on every insert (``added``) and every
  delete or change (``changed``); ``turns`` counts only the deletes and text or quarantine
  changes of turns (not the neighbour-context updates a new turn causes, nor claim changes).
  In-memory state derived from the cache (the per-user vector matrix, the lexicon) compares
  them, plus the cache's random ``epoch``, to know when it is stale;
* ``raw_todo``: in a user's file of a split cache (``index.split``), the turns ``add()`` stored
  and no reader has asked for yet, as the ``raw`` rows they will become: add() writes them here
  (one row each, no FTS, no neighbour links) and the first read or write of that user's file
  moves them into ``raw`` with ``Cache.upsert_raw``'s own code (``index.cache.catch_up``), in
  add order, in one transaction; no reader reads this table, so a reader sees a user's turns
  either all indexed and linked or not yet (schema 10);
* ``shards``: in the shared file of a split cache (``index.split``), the users that have a file of
  their own; ``meta.layout`` says which layout (``one`` or ``split``) made the file.
"""

from __future__ import annotations

VERSION = 10

TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
INSERT OR IGNORE INTO meta(key, value) VALUES ('epoch', lower(hex(randomblob(8))));
CREATE TABLE IF NOT EXISTS raw (
  rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, user_id TEXT NOT NULL, path TEXT NOT NULL,
  role TEXT, speaker TEXT, agent_id TEXT, run_id TEXT, content TEXT NOT NULL, body TEXT NOT NULL,
  occurred_at TEXT, recorded_at TEXT NOT NULL, valid_at TEXT NOT NULL, metadata TEXT,
  quarantined TEXT, compiled INTEGER NOT NULL DEFAULT 0, hash TEXT NOT NULL,
  context TEXT NOT NULL DEFAULT '', question INTEGER NOT NULL DEFAULT 0, answer INTEGER
);
CREATE INDEX IF NOT EXISTS raw_user ON raw(user_id, valid_at);
CREATE INDEX IF NOT EXISTS raw_seq ON raw(user_id, recorded_at);
CREATE TABLE IF NOT EXISTS pages (
  id TEXT PRIMARY KEY, user_id TEXT, type TEXT NOT NULL, path TEXT NOT NULL, title TEXT,
  body TEXT, pinned INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0,
  created TEXT, updated TEXT, hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS pages_user ON pages(user_id, type);
CREATE TABLE IF NOT EXISTS claims (
  rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, user_id TEXT, page_id TEXT NOT NULL,
  type TEXT, subject TEXT, predicate TEXT, value TEXT, text TEXT NOT NULL, body TEXT NOT NULL,
  provenance TEXT, confidence REAL, valid_from TEXT, valid_until TEXT, recorded_at TEXT,
  closed_at TEXT, supersedes TEXT, superseded_by TEXT, sources TEXT, metadata TEXT,
  archived INTEGER NOT NULL DEFAULT 0, hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS claims_user ON claims(user_id, valid_until);
CREATE INDEX IF NOT EXISTS claims_page ON claims(page_id);
CREATE TABLE IF NOT EXISTS vectors (
  kind TEXT NOT NULL, id TEXT NOT NULL, user_id TEXT, model TEXT NOT NULL, hash TEXT NOT NULL,
  vec BLOB NOT NULL, PRIMARY KEY (kind, id)
);
CREATE INDEX IF NOT EXISTS vectors_user ON vectors(user_id, kind);
CREATE TABLE IF NOT EXISTS raw_todo (
  seq INTEGER PRIMARY KEY, id TEXT NOT NULL, user_id TEXT NOT NULL, path TEXT NOT NULL, role TEXT,
  speaker TEXT, agent_id TEXT, run_id TEXT, content TEXT NOT NULL, body TEXT NOT NULL, occurred_at TEXT,
  recorded_at TEXT NOT NULL, valid_at TEXT NOT NULL, metadata TEXT, quarantined TEXT,
  compiled INTEGER NOT NULL, hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS problems (path TEXT PRIMARY KEY, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS shards (user_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS user_gen (
  user_id TEXT PRIMARY KEY, added INTEGER NOT NULL DEFAULT 0, changed INTEGER NOT NULL DEFAULT 0,
  turns INTEGER NOT NULL DEFAULT 0
);
CREATE VIRTUAL TABLE IF NOT EXISTS raw_fts USING fts5(
  body, context, content='raw', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS raw_vocab USING fts5vocab(raw_fts, 'row');
CREATE VIRTUAL TABLE IF NOT EXISTS claims_fts USING fts5(
  body, content='claims', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');
"""

# The triggers keep the FTS indexes and ``user_gen`` in step with the tables, except for new turns
# and context updates: ``Cache.upsert_raw`` and ``index.text`` write their raw_fts rows and the
# ``added`` counter (one statement per user, not a trigger per row) as plain statements (schema 9).
# FTS5 flushes its pending terms at each trigger statement's savepoint, so a turn indexed by a
# trigger cost ~60 us against ~10 us, and a new turn was indexed, deleted and indexed again once
# its context was known. Deletes still go through ``raw_ad`` (rare; they carry the stored text).
# A bulk rebuild creates :data:`TABLES` alone, loads every row, then runs :data:`FINISH_BULK` and
# :data:`TRIGGERS`.
TRIGGERS = """
CREATE TRIGGER IF NOT EXISTS raw_ad AFTER DELETE ON raw BEGIN
  INSERT INTO raw_fts(raw_fts, rowid, body, context) VALUES ('delete', old.rowid, old.body, old.context);
  UPDATE user_gen SET changed = changed + 1, turns = turns + 1 WHERE user_id = old.user_id; END;
CREATE TRIGGER IF NOT EXISTS raw_aq AFTER UPDATE OF content, quarantined ON raw BEGIN
  UPDATE user_gen SET changed = changed + 1, turns = turns + 1 WHERE user_id = new.user_id; END;
CREATE TRIGGER IF NOT EXISTS raw_ab AFTER UPDATE OF body ON raw WHEN old.body IS NOT new.body BEGIN
  UPDATE user_gen SET turns = turns + 1 WHERE user_id = new.user_id; END;
CREATE TRIGGER IF NOT EXISTS claims_ai AFTER INSERT ON claims BEGIN
  INSERT INTO claims_fts(rowid, body) VALUES (new.rowid, new.body);
  INSERT INTO user_gen(user_id, added) VALUES (coalesce(new.user_id, ''), 1)
    ON CONFLICT(user_id) DO UPDATE SET added = added + 1; END;
CREATE TRIGGER IF NOT EXISTS claims_ad AFTER DELETE ON claims BEGIN
  INSERT INTO claims_fts(claims_fts, rowid, body) VALUES ('delete', old.rowid, old.body);
  UPDATE user_gen SET changed = changed + 1 WHERE user_id = coalesce(old.user_id, ''); END;
CREATE TRIGGER IF NOT EXISTS claims_au AFTER UPDATE ON claims BEGIN
  UPDATE user_gen SET changed = changed + 1 WHERE user_id = coalesce(new.user_id, ''); END;
"""

FINISH_BULK = """
INSERT INTO raw_fts(raw_fts) VALUES ('rebuild');
INSERT INTO claims_fts(claims_fts) VALUES ('rebuild');
INSERT INTO user_gen(user_id, added)
  SELECT user_id, count(*) FROM (SELECT user_id FROM raw UNION ALL SELECT coalesce(user_id, '') FROM claims)
  GROUP BY user_id;
"""

DDL = TABLES + TRIGGERS
