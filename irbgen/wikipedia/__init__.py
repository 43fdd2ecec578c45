"""Wikipedia dumps: readers for XML and CirrusSearch exports, and citing sentences from wikitext."""
