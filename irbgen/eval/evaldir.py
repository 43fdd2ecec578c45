"""The files every evaluation directory holds, whichever evaluation wrote it; `irbgen report` reads them.

config.json says what was run (its "kind" is "retrieval" or "qa"), per_query.jsonl has one row per query
and metrics.json the means overall and per attribute value (see irbgen.eval.breakdown).
"""

CONFIG = "config.json"
PER_QUERY = "per_query.jsonl"
METRICS = "metrics.json"
EVAL_FILES = (CONFIG, METRICS, PER_QUERY)
