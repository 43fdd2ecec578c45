"""Lead facts: what a page's lead says of its subject, as facts that describe a bridge.

A multi-hop question needs its bridge described briefly and uniquely ("the country whose capital is
Algiers"). The cited sentences of a page rarely do that; its lead often does (wikipedia/leads.py finds
the claims). Each claim becomes a Fact of `source` "lead" whose evidence is the lead sentence itself, kept
as a corpus document "<title> (Wikipedia lead)", so the chain's first hop has a document a retriever can
find. Lead facts only start or end chains; they never become single-hop questions of their own (a plan
rule in irb/plans.py), since the benchmark asks about what the web pages cited by Wikipedia say.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from urllib.parse import quote

from irbgen.irb.records import Fact, GroundedKeypoint
from irbgen.web.records import WebDocument

LEAD_ID = "{page_id}:lead:{number}"  # a lead fact's id


def is_lead_fact(fact_id: str) -> bool:
    """Whether the id is a lead fact's ("<page_id>:lead:<k>")."""
    return fact_id.split(":")[1:2] == ["lead"]


def lead_url(title: str) -> str:
    """The page's address on English Wikipedia."""
    return "https://en.wikipedia.org/wiki/" + quote(title.replace(" ", "_"), safe="()_,'-")


def lead_document_id(title: str, evidence: str) -> str:
    """ "w" + the first 16 hex of sha256 over the page title and the lead sentence."""
    return "w" + hashlib.sha256(f"{title}\n{evidence}".encode()).hexdigest()[:16]


def lead_facts(facts: Iterable[Fact]) -> tuple[list[Fact], list[WebDocument]]:
    """One lead Fact per claim of each page (from the page's first fact), and one document per lead
    sentence, in page order. The document's date is the page revision's day; its fetch time the revision."""
    made: list[Fact] = []
    documents: dict[str, WebDocument] = {}
    pages: set[int] = set()
    for fact in facts:
        if fact.source != "citation" or fact.page_id in pages or not fact.lead_claims:
            continue
        pages.add(fact.page_id)
        for number, claim in enumerate(fact.lead_claims):
            document_id = lead_document_id(fact.title, claim.evidence)
            documents.setdefault(
                document_id,
                WebDocument(
                    id=document_id,
                    url=lead_url(fact.title),
                    final_url=lead_url(fact.title),
                    status=200,
                    content_type="text/plain",
                    title=f"{fact.title} (Wikipedia lead)",
                    text=claim.evidence,
                    published=fact.revised[:10] if fact.revised else None,
                    language="en",
                    fetched=fact.revised or "",
                ),
            )
            fact_id = LEAD_ID.format(page_id=fact.page_id, number=number)
            keypoint = GroundedKeypoint(keypoint_id=fact_id, text=claim.keypoint, documents=[document_id])
            update = {
                "id": fact_id,
                "section": [],
                "sentence": claim.evidence,
                "keypoints": [keypoint],
                "citations": [],
                "links": {},
                "lead_claims": [claim],
                "source": "lead",
            }
            made.append(fact.model_copy(update=update))
    return made, sorted(documents.values(), key=lambda document: document.id)
