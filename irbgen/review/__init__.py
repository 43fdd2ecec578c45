"""`irbgen review`: judge a benchmark's samples one per screen in a local web page, and score the judgments.

index.py reads samples and documents by byte offset, view.py gathers what a screen shows (with the audit
modules), page.py and assets.py render it, app.py serves it, store.py keeps the judgments as JSONL,
draws.py records the order samples were shown in and tells whether the judged ones are a random sample,
scoring.py scores them into the card, and irbgen/cli/review.py is the CLI.
"""
