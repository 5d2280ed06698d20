"""The web console (``markmem console``): server-rendered pages over the Memory facade.

    app.py        create_app / serve (FastAPI + uvicorn, like the REST API)
    guard.py      token + session cookie, Host/Origin checks, CSRF, read-only mode
    render.py     Jinja2 templates (templates/), the POST form reader
    timeline.py   a page's claim ledger as SVG geometry (pure)
    views/        users and pages, search, review, erasure, health: each handler calls Memory

Needs the ``console`` extra (FastAPI, uvicorn, Jinja2). Like every shell it imports only the
facade and its value types, never store/index/write/read/erase.
"""
