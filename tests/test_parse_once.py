"""Each segment is parsed once: the citing stage packs spaCy's parse into Segment.parse, and the keypoint
stage rebuilds the same parse from it instead of parsing the text again (sentences from page 710 of the
realdata dump, "Foreign relations of Angola", tuning half)."""

from __future__ import annotations

from irbgen.irb import keypoints
from irbgen.irb.keypoints import MakeKeypoints
from irbgen.spacy_models import DEFAULT_MODEL, pack_parse, unpack_parse
from irbgen.wikipedia.records import Citation, Page, Segment
from irbgen.wikipedia.stages import CitingSegments, load_parser

TEXT = "Since 1976, Bulgaria has an embassy in Luanda."
OTHERS = [
    "Angola is represented in Bulgaria through its embassy in Athens (Greece).",
    "The foreign relations of Angola are based on Angola's strong support of U.S. foreign policy as the "
    "Angolan economy is dependent on U.S. foreign aid.",
    "  Date started: 1975-11-20 ",
]


def analysis(doc) -> list[tuple]:  # type: ignore[no-untyped-def]
    """What the rules read off a parse: tokens, tags, dependencies, heads, children, sentences."""
    tokens = [
        (t.text, t.whitespace_, t.tag_, t.dep_, t.head.i, t.is_sent_start, [c.i for c in t.children])
        for t in doc
    ]
    return [*tokens, [(s.start, s.end) for s in doc.sents], [(c.start, c.end) for c in doc.noun_chunks]]


def segment(parse: str | None) -> Segment:
    return Segment(
        id="710:34:0",
        page_id=710,
        title="Foreign relations of Angola",
        lead=OTHERS[1],
        section=["Europe", "Bulgaria"],
        sentence=TEXT,
        text=TEXT,
        before=["Date started: 1975-11-20"],
        after=[OTHERS[0]],
        citations=[Citation(url="https://example.org/angola")],
        parse=parse,
    )


def test_a_packed_parse_is_rebuilt_the_same() -> None:
    nlp = load_parser(DEFAULT_MODEL)
    for doc in nlp.pipe([TEXT, *OTHERS]):
        rebuilt = unpack_parse(nlp, DEFAULT_MODEL, doc.text, pack_parse(doc, DEFAULT_MODEL))
        assert rebuilt is not None and analysis(rebuilt) == analysis(doc)


def test_another_models_or_texts_parse_is_not_used() -> None:
    nlp = load_parser(DEFAULT_MODEL)
    packed = pack_parse(nlp(TEXT), DEFAULT_MODEL)
    assert unpack_parse(nlp, "en_core_web_md", TEXT, packed) is None
    assert unpack_parse(nlp, DEFAULT_MODEL, OTHERS[0], packed) is None


def test_the_citing_stage_packs_each_segments_parse() -> None:
    wikitext = f"{OTHERS[1]}\n== Europe ==\n{TEXT}<ref>https://example.org/angola</ref> {OTHERS[0]}"
    (out,) = [
        r
        for r in CitingSegments().process(Page(page_id=710, title="T", wikitext=wikitext))
        if isinstance(r, Segment)
    ]
    assert out.text == TEXT
    assert out.parse == pack_parse(load_parser(DEFAULT_MODEL)(TEXT), DEFAULT_MODEL)


def test_the_keypoint_stage_reuses_the_parse_and_decides_the_same() -> None:
    stage = MakeKeypoints()
    packed = pack_parse(load_parser(DEFAULT_MODEL)(TEXT), DEFAULT_MODEL)
    keypoints.PARSES.clear()
    reused = stage.process(segment(packed), None)  # type: ignore[arg-type]
    assert keypoints.PARSES.misses == 0  # nothing parsed here
    parsed = stage.process(segment(None), None)  # type: ignore[arg-type]
    assert keypoints.PARSES.misses > 0
    assert [r.model_dump() for r in reused] == [r.model_dump() for r in parsed]
    assert reused[0].text == TEXT


def test_without_the_completeness_check_nothing_is_packed() -> None:
    wikitext = f"{OTHERS[1]}\n== Europe ==\n{TEXT}<ref>https://example.org/angola</ref> {OTHERS[0]}"
    page = Page(page_id=710, title="T", wikitext=wikitext)
    (checked,) = [r for r in CitingSegments().process(page) if isinstance(r, Segment)]
    (unchecked,) = [r for r in CitingSegments(check_complete=False).process(page) if isinstance(r, Segment)]
    assert unchecked.parse is None
    assert unchecked.model_copy(update={"parse": checked.parse}) == checked  # the lead's noun the same


def test_the_loaded_pipeline_multiplies_with_numpy_blas_and_parses_as_blis_does() -> None:
    """load_spacy swaps thinc's BLIS for numpy's BLAS (faster on CPUs BLIS has no kernel for); every
    component and the parses, tags and entities stay as spaCy's default loading gives them."""
    import spacy

    from irbgen.spacy_models import load_spacy

    ours = load_spacy(DEFAULT_MODEL)
    default = spacy.load(DEFAULT_MODEL)
    for nlp, blis in ((ours, False), (default, True)):
        models = [pipe.model for _, pipe in nlp.pipeline if getattr(pipe, "model", None) is not None]
        assert len(models) == 4 and all(model.ops.use_blis is blis for model in models)
    texts = [TEXT, *OTHERS] * 3  # a batch of more than one text, as nlp.pipe sees them

    def read(nlp) -> list:  # type: ignore[no-untyped-def]
        return [[*analysis(doc), [(e.start, e.end, e.label_) for e in doc.ents]] for doc in nlp.pipe(texts)]

    assert read(ours) == read(default)
