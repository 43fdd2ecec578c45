"""The three builds, each a declared pipeline over the domain packages: phantom, wikipedia, wikidata."""
