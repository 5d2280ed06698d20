"""CANONICAL state: raw logs, markdown pages, git. Everything else is derived from these."""
