"""The write path: gate -> raw -> queue -> extract -> resolve -> pages -> commit.

``pipeline.py`` calls the stages in order; nothing else does.
"""
