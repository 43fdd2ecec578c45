"""The offline backend of the Wikidata question stage (questions)."""
