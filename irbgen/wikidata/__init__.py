"""MINTQA-style benchmarks from Wikidata dumps: reader, knowledge base, chains, questions, corpus."""
