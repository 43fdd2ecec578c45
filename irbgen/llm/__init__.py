"""One OpenAI-compatible client for everything that calls a model: cache, retries, ledger, prompts."""
