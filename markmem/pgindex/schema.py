"""PostgreSQL tables of the derived index. ``ensure`` creates them (idempotent).

* ``mm_user_gen``: one row per indexed user; ``born`` is new each time the row is created (a user
  forgotten and added again is another user to every replica's local copy), ``rev`` is bumped
  when turns are deleted (a full rebuild of local copies), ``added`` when turns are added (local
  copies fetch ``seq`` greater than theirs), ``touch`` when turns change in place (``touched``
  says which), ``claims_rev`` when the user's pages or claims change.
* ``mm_turns``: gated raw entries; ``seq`` orders a user's turns (the local rowid order). An
  ``add_turns`` locks the user's generation row before taking a ``seq``, so a user's turns
  commit in ``seq`` order. ``in_repo``: the turn is in the shard repo's raw files (a turn still
  in intake is not, and ``sync_users`` keeps it).
* ``mm_pages`` / ``mm_claims``: the SQLite cache's rows, claims with their order (``pos``); claims
  are also indexed by id alone (``mm_claims_id``): an edit of a claim id finds its owner, so its
  shard, without opening every shard repo.
* ``mm_vectors``: pgvector vectors keyed by unit, with the model and the hash of the indexed
  text (a unit whose text is unchanged is never embedded again).
"""

from __future__ import annotations

from typing import Any

DDL = """
CREATE EXTENSION IF NOT EXISTS vector;
CREATE SEQUENCE IF NOT EXISTS mm_seq;
CREATE TABLE IF NOT EXISTS mm_meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO mm_meta(key, value) VALUES ('epoch', md5(random()::text || clock_timestamp()::text))
  ON CONFLICT (key) DO NOTHING;
CREATE TABLE IF NOT EXISTS mm_user_gen (
  user_id text PRIMARY KEY, born bigint NOT NULL DEFAULT nextval('mm_seq'),
  rev bigint NOT NULL DEFAULT 0, added bigint NOT NULL DEFAULT 0, touch bigint NOT NULL DEFAULT 0,
  claims_rev bigint NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS mm_turns (
  user_id text NOT NULL, id text NOT NULL, seq bigint NOT NULL, path text NOT NULL DEFAULT '',
  role text NOT NULL, speaker text, agent_id text, run_id text, content text NOT NULL,
  body text NOT NULL, occurred_at text, recorded_at text NOT NULL, metadata text NOT NULL DEFAULT '{}',
  quarantined text, compiled boolean NOT NULL DEFAULT false, hash text NOT NULL,
  in_repo boolean NOT NULL DEFAULT false,
  touched bigint NOT NULL DEFAULT 0, PRIMARY KEY (user_id, id)
);
CREATE INDEX IF NOT EXISTS mm_turns_seq ON mm_turns (user_id, seq);
CREATE TABLE IF NOT EXISTS mm_pages (
  user_id text NOT NULL, id text NOT NULL, type text NOT NULL, path text NOT NULL, title text,
  body text, pinned integer NOT NULL DEFAULT 0, archived integer NOT NULL DEFAULT 0, created text,
  updated text, hash text NOT NULL, PRIMARY KEY (user_id, id)
);
CREATE TABLE IF NOT EXISTS mm_claims (
  user_id text NOT NULL, id text NOT NULL, pos integer NOT NULL, page_id text NOT NULL, type text,
  subject text, predicate text, value text, text text NOT NULL, body text NOT NULL, provenance text,
  confidence double precision, valid_from text, valid_until text, recorded_at text, closed_at text,
  supersedes text, superseded_by text, sources text, metadata text, archived integer NOT NULL DEFAULT 0,
  hash text NOT NULL, PRIMARY KEY (user_id, id)
);
CREATE INDEX IF NOT EXISTS mm_claims_id ON mm_claims (id);
CREATE TABLE IF NOT EXISTS mm_vectors (
  user_id text NOT NULL, kind text NOT NULL, id text NOT NULL, model text NOT NULL, hash text NOT NULL,
  vec vector NOT NULL, PRIMARY KEY (user_id, kind, id)
);
"""

TABLES = ("mm_user_gen", "mm_turns", "mm_pages", "mm_claims", "mm_vectors")  # every one keyed by user_id
_LOCK_KEY = 0x6D6D_7067  # "mmpg": one ensure() at a time across replicas


def ensure(conn: Any) -> None:
    """Create the tables if they are missing (idempotent; safe from several replicas at once)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        for statement in DDL.split(";\n"):
            if statement.strip():
                conn.execute(statement)


def epoch(conn: Any) -> str:
    """This database's random id (local copies are kept per database)."""
    row = conn.execute("SELECT value FROM mm_meta WHERE key = 'epoch'").fetchone()
    return str(row[0])
