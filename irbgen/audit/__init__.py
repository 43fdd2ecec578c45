"""A human audit of any benchmark directory: a sheet of random samples to judge, and its score.

records.py holds the data model, sheet.py draws and writes the sheet (with facts.py, passages.py and
markdown.py), score.py scores a filled sheet and publish.py records the result in the benchmark card.
"""
