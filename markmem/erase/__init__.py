"""Erasure, audit and access: plan (pure) -> apply (scrub, git-filter-repo rewrite, crypto-shred) -> verify.

    plan.py         gather (read-only inventory) and make_plan (pure): ErasurePlan, printed by --dry-run
    api.py          forget() and verify(): the journalled executor, ErasureReport
    scrub.py        shared steps: purge cache/queue, delete folders, redact ops, tombstone, commit
    rewrite.py      git-filter-repo driver (child process), reflog expiry and gc
    verify.py       scan every git object and the rest of .git: VerifyReport
    fingerprint.py  what verify searches for; journal.py: resumable state and the user token
    redact.py       the id out of ops records and commit messages (pure)
    crypto.py       AesCodec: per-user AES-256-GCM keys (needs the ``crypto`` extra)
    audit.py        history(user_id=...): every operation touching a user
    access.py       export(to="access"): a data-subject access export as JSON and markdown

Nothing here imports ``crypto.py`` unless the repo is encrypted, so the rest works without
``cryptography`` installed.
"""
