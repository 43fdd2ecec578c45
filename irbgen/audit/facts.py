"""What a sample rests on, per source: Wikipedia keypoints, Wikidata triples, or the phantom chain."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from irbgen.audit.records import KINDS, AuditHop, Fact, Kind
from irbgen.schema import Hop, Sample

Labels = Mapping[str, str]


def kind_of(sample: Sample) -> Kind:
    """The sample's kind: its question_type if that names a kind, else from false_premise and hops."""
    question_type = sample.attributes.question_type
    if question_type in KINDS:
        return cast(Kind, question_type)
    if sample.false_premise:
        return "false_premise"
    return "single_hop" if sample.hops <= 1 else "multi_hop"


def hops_of(sample: Sample) -> list[AuditHop]:
    """Each hop's sub-question, answers and evidence ids."""
    return [
        AuditHop(index=hop.index, question=hop.question, answers=hop.answers, evidence=hop.evidence)
        for hop in sample.chain
    ]


def facts_of(sample: Sample, labels: Labels) -> list[Fact]:
    """The facts to check against the evidence, without passages yet."""
    if sample.provenance.keypoints:
        return _keypoint_facts(sample)
    if sample.provenance.triple_chain:
        return _triple_facts(sample, labels)
    return _chain_facts(sample)


def changes_of(sample: Sample) -> list[str]:
    """The generator's edits to the question (paraphrases, the false premise), one line each."""
    changes = sample.attributes.extra.get("changes")
    if not isinstance(changes, list):
        return []
    return [_change_line(change) for change in changes if isinstance(change, dict) and "node" in change]


def premise_answer_of(sample: Sample) -> str | None:
    """For a false premise: the answer the question would have had with its true premise."""
    answer = sample.attributes.extra.get("premise_answer")
    return answer if isinstance(answer, str) else None


def _change_line(change: dict) -> str:
    how = ", ".join(str(change[key]) for key in ("kind", "rule") if change.get(key))
    line = f"{change['node']} → {change.get('replacement', '')}"
    return f"{line} ({how})" if how else line


def _keypoint_facts(sample: Sample) -> list[Fact]:
    keypoints = sample.provenance.keypoints
    aligned = len(keypoints) == len(sample.chain)
    return [
        Fact(
            origin="keypoint",
            text=text,
            hop=sample.chain[i].index if aligned else None,
            evidence=sample.chain[i].evidence if aligned else sample.evidence,
        )
        for i, text in enumerate(keypoints)
    ]


def _triple_facts(sample: Sample, labels: Labels) -> list[Fact]:
    triples = sample.provenance.triple_chain
    aligned = len(triples) == len(sample.chain)
    facts = []
    for i, triple in enumerate(triples):
        hop = sample.chain[i] if aligned else None
        facts.append(
            Fact(
                origin="triple",
                text=_triple_text(triple, hop, labels),
                hop=hop.index if hop else None,
                triple=list(triple),
                evidence=hop.evidence if hop else sample.evidence,
            )
        )
    return facts


def _triple_text(triple: list[str], hop: Hop | None, labels: Labels) -> str:
    if len(triple) != 3:
        return " ".join(triple)
    subject, prop, value = triple
    predicate = hop.predicate if hop and hop.predicate else prop
    answer = hop.answers[0] if hop and hop.answers else labels.get(value, value)
    return f"({labels.get(subject, subject)}, {predicate}, {answer})"


def _chain_facts(sample: Sample) -> list[Fact]:
    chain = sample.chain
    return [
        Fact(
            origin="chain",
            text=_hop_text(hop, chain[i - 1] if i else None),
            hop=hop.index,
            evidence=hop.evidence,
        )
        for i, hop in enumerate(chain)
    ]


def _hop_text(hop: Hop, previous: Hop | None) -> str:
    answers = ", ".join(hop.answers)
    if previous is None or not hop.predicate:
        return f"{hop.question} {answers}".strip()
    return f"{hop.predicate.replace('_', '-')} of {', '.join(previous.answers)}: {answers}"
