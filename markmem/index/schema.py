"""Cache schema. Bump ``VERSION`` on any change: an old cache is then rebuilt, never migrated."""

from __future__ import annotations

VERSION = 3

DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS raw (
  rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, user_id TEXT NOT NULL, path TEXT NOT NULL,
  role TEXT, speaker TEXT, agent_id TEXT, run_id TEXT, content TEXT NOT NULL, body TEXT NOT NULL,
  occurred_at TEXT, recorded_at TEXT NOT NULL, valid_at TEXT NOT NULL, metadata TEXT,
  quarantined TEXT, compiled INTEGER NOT NULL DEFAULT 0, hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS raw_user ON raw(user_id, valid_at);
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
CREATE TABLE IF NOT EXISTS problems (path TEXT PRIMARY KEY, reason TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS raw_fts USING fts5(
  body, content='raw', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE IF NOT EXISTS claims_fts USING fts5(
  body, content='claims', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');
CREATE TRIGGER IF NOT EXISTS raw_ai AFTER INSERT ON raw BEGIN
  INSERT INTO raw_fts(rowid, body) VALUES (new.rowid, new.body); END;
CREATE TRIGGER IF NOT EXISTS raw_ad AFTER DELETE ON raw BEGIN
  INSERT INTO raw_fts(raw_fts, rowid, body) VALUES ('delete', old.rowid, old.body); END;
CREATE TRIGGER IF NOT EXISTS raw_au AFTER UPDATE OF body ON raw BEGIN
  INSERT INTO raw_fts(raw_fts, rowid, body) VALUES ('delete', old.rowid, old.body);
  INSERT INTO raw_fts(rowid, body) VALUES (new.rowid, new.body); END;
CREATE TRIGGER IF NOT EXISTS claims_ai AFTER INSERT ON claims BEGIN
  INSERT INTO claims_fts(rowid, body) VALUES (new.rowid, new.body); END;
CREATE TRIGGER IF NOT EXISTS claims_ad AFTER DELETE ON claims BEGIN
  INSERT INTO claims_fts(claims_fts, rowid, body) VALUES ('delete', old.rowid, old.body); END;
"""
