"""Adapters: third-party engines behind the Protocols in :mod:`markmem.ports`.

model2vec (vectors, tokens), Presidio (PII), LLM clients (extraction). Each imports its
engine lazily, so importing markmem stays cheap and a missing extra degrades, never crashes.
"""
