"""The web side: a guarded async fetcher, a WARC cache, and text, date and language extraction."""
