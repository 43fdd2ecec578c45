"""REBEL-style extraction: parsing linearised triplets, passages, linking, counting, and a tiny real model."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irbgen.errors import BadInputError, MissingExtraError
from irbgen.records import Reject
from irbgen.wikidata import linking
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.linking import EntityLinker, count_triples, wikipedia_frequencies
from irbgen.wikidata.rebel import (
    ExtractedTriple,
    RebelExtractor,
    article_passages,
    pack_sentences,
    page_passages,
    parse_triplets,
)
from irbgen.wikidata.records import Statement, Value, WikidataEntity
from irbgen.wikipedia.records import Page

T = ExtractedTriple


# --- parsing -----------------------------------------------------------------------------------------


def test_parse_one_triplet_with_bos_eos_and_pads() -> None:
    text = "</s><s><triplet> Ada Lovelace <subj> London <obj> place of birth</s><pad><pad>"
    assert parse_triplets(text) == [T("Ada Lovelace", "place of birth", "London")]


def test_parse_several_heads_and_several_tails_per_head() -> None:
    text = (
        "<s><triplet> Ada Lovelace <subj> London <obj> place of birth <subj> mathematician <obj> occupation"
        "<triplet> Charles Babbage <subj> London <obj> place of birth</s>"
    )
    assert parse_triplets(text) == [
        T("Ada Lovelace", "place of birth", "London"),
        T("Ada Lovelace", "occupation", "mathematician"),
        T("Charles Babbage", "place of birth", "London"),
    ]


def test_parse_markers_glued_to_spans_and_spacing_collapsed() -> None:
    text = "<triplet>Punta  Cana<subj>Dominican\nRepublic<obj>country"
    assert parse_triplets(text) == [T("Punta Cana", "country", "Dominican Republic")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("no markers at all", []),
        ("<pad><pad></s>", []),
        ("<triplet> <subj> London <obj> place of birth", []),  # empty head
        ("<triplet> Ada <subj>  <obj> place of birth", []),  # empty tail
        ("<triplet> Ada <subj> London <obj>   </s>", []),  # empty relation
        ("<subj> London <obj> place of birth", []),  # tail with no head
        ("<triplet> Ada <obj> place of birth", []),  # relation with no tail
        ("<triplet> Ada <subj> London", []),  # cut before the relation
        ("<triplet> A <subj> B <obj> r <triplet> C <subj> D", [T("A", "r", "B")]),  # truncated second
        ("junk <s> before <triplet> A <subj> B <obj> r", [T("A", "r", "B")]),  # stray text before
        ("<triplet> A <subj> B <obj> r <obj> stray <subj> C <obj> r2", [T("A", "r", "B"), T("A", "r2", "C")]),
        ("<triplet> A <subj> B <subj> C <obj> r", [T("A", "r", "C")]),  # a tail without relation
        ("<triplet> A <head> <subj> B </tail> <obj> r <unk>", [T("A", "r", "B")]),  # stray tag tokens
        ("<triplet> <triplet> A <subj> B <obj> r", [T("A", "r", "B")]),
    ],
)
def test_parse_malformed_generations_skip_bad_pieces(text: str, expected: list[ExtractedTriple]) -> None:
    assert parse_triplets(text) == expected


def test_parse_incomplete_generation_drops_the_last_triple() -> None:
    text = "<triplet> A <subj> B <obj> r1 <subj> C <obj> plac"
    assert parse_triplets(text, complete=False) == [T("A", "r1", "B")]
    assert parse_triplets(text) == [T("A", "r1", "B"), T("A", "plac", "C")]


_WORD = st.sampled_from(["Ada", "London", "place", "of", "birth", "x", "<s>", "</s>", "<pad>", "<head>"])
_PIECE = st.one_of(_WORD, st.sampled_from(["<triplet>", "<subj>", "<obj>"]), st.text(max_size=4))


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECE, max_size=30), st.booleans())
def test_parse_never_raises_and_yields_clean_spans(pieces: list[str], complete: bool) -> None:
    for triple in parse_triplets(" ".join(pieces), complete=complete):
        for span in (triple.head, triple.relation, triple.tail):
            assert span and span == " ".join(span.split())
            assert not any(marker in span for marker in ("<triplet>", "<subj>", "<obj>", "<pad>", "</s>"))


_SPAN = st.lists(st.sampled_from(["Ada", "Lovelace", "London", "born", "in", "1815"]), min_size=1, max_size=3)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_SPAN, st.lists(st.tuples(_SPAN, _SPAN), min_size=1, max_size=3)), max_size=4))
def test_parse_reads_back_what_was_linearised(groups: list) -> None:
    text = "<s>" + "".join(
        f"<triplet> {' '.join(head)} "
        + "".join(f"<subj> {' '.join(t)} <obj> {' '.join(r)} " for t, r in tails)
        for head, tails in groups
    )
    expected = [T(" ".join(h), " ".join(r), " ".join(t)) for h, tails in groups for t, r in tails]
    assert parse_triplets(text + "</s>") == expected


# --- passages ----------------------------------------------------------------------------------------


def test_article_passages_pack_sentences_within_paragraphs() -> None:
    text = "One two three. Four five six.  Seven eight.\n\nNine ten eleven twelve."
    assert article_passages(text, max_words=5) == [
        "One two three.",
        "Four five six. Seven eight.",
        "Nine ten eleven twelve.",
    ]
    assert article_passages(text, max_words=100) == [
        "One two three. Four five six. Seven eight.",
        "Nine ten eleven twelve.",
    ]
    assert article_passages("", max_words=5) == []


def test_pack_sentences_cuts_long_sentences_and_checks_the_limit() -> None:
    assert pack_sentences(["a b c d e f g", "h"], max_words=3) == ["a b c", "d e f", "g h"]
    with pytest.raises(ValueError, match="max_words"):
        pack_sentences(["a"], max_words=0)


def test_page_passages_render_wikitext_per_section() -> None:
    pytest.importorskip("mwparserfromhell")
    wikitext = (
        "'''Ada Lovelace''' was born in [[London]].<ref>{{cite web|url=http://e.org|title=t}}</ref> "
        "She worked with [[Charles Babbage|Babbage]].\n{{Infobox person|name=x}}\n\n"
        "== Life ==\nShe died in [[Marylebone]].\n\n== References ==\n{{reflist}}\n"
    )
    page = Page(page_id=1, title="Ada Lovelace", wikitext=wikitext)
    assert page_passages(page) == [
        "Ada Lovelace was born in London. She worked with Babbage.",
        "She died in Marylebone.",
    ]


# --- linking and counting ----------------------------------------------------------------------------


def _item(
    qid: str, label: str, enwiki: str | None = None, aliases: tuple[str, ...] = (), **claims
) -> WikidataEntity:
    statements = [Statement(head=qid, property=p, tail=v, rank="normal") for p, v in claims.items()]
    return WikidataEntity(
        id=qid, kind="item", label=label, enwiki=enwiki, aliases=list(aliases), statements=statements
    )


def _prop(pid: str, label: str, *aliases: str) -> WikidataEntity:
    return WikidataEntity(id=pid, kind="property", label=label, aliases=list(aliases))


def _q(qid: str) -> Value:
    return Value(type="entity", id=qid, text=qid)


BIRTH_ADA = Value(type="time", text="10 December 1815", raw="+1815-12-10T00:00:00Z", precision=11)
BIRTH_BABBAGE = Value(type="time", text="1791", raw="+1791-00-00T00:00:00Z", precision=9)


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return KnowledgeBase(
        [
            _item(
                "Q1",
                "Ada Lovelace",
                "Ada Lovelace",
                ("Augusta Ada King",),
                P19=_q("Q2"),
                P106=_q("Q6"),
                P569=BIRTH_ADA,
            ),
            _item("Q2", "London", "London"),
            _item("Q3", "London", "London, Ontario"),
            _item("Q4", "Mercury", "Mercury (planet)"),
            _item("Q5", "Mercury", "Mercury (element)"),
            _item("Q6", "mathematician"),
            _item("Q7", "Charles Babbage", "Charles_Babbage", ("Babbage",), P19=_q("Q2"), P569=BIRTH_BABBAGE),
            _prop("P19", "place of birth", "birthplace", "born in"),
            _prop("P20", "place of death", "deathplace"),
            _prop("P106", "occupation", "profession"),
            _prop("P569", "date of birth", "born"),
            _prop("P9001", "spouse of", "partner"),
            _prop("P9002", "partner of", "partner"),
        ]
    )


@pytest.mark.parametrize(
    ("surface", "expected"),
    [
        ("Ada Lovelace", "Q1"),  # enwiki title
        ("ada  Lovelace", "Q1"),  # first letter and spacing normalised
        ("Charles Babbage", "Q7"),  # title stored with an underscore
        ("London", "Q2"),  # the title decides although the label "London" names two items
        ("LONDON", None),  # no such title; the label is ambiguous
        ("Mathematician", "Q6"),  # label, case-insensitive
        ("augusta ada KING", "Q1"),  # alias
        ("Babbage", "Q7"),
        ("Mercury", None),  # two items with that label and no such title
        ("Nowhere", None),
        ("  ", None),
    ],
)
def test_entity_linking(kb: KnowledgeBase, surface: str, expected: str | None) -> None:
    assert EntityLinker(kb).entity(surface) == expected


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("place of birth", "P19"),
        ("Place  of Birth", "P19"),
        ("birthplace", "P19"),
        ("date of birth", "P569"),
        ("partner", None),  # an alias of two properties
        ("spouse of", "P9001"),
        ("invented", None),
        ("", None),
    ],
)
def test_relation_linking(kb: KnowledgeBase, label: str, expected: str | None) -> None:
    assert EntityLinker(kb).relation(label) == expected


def test_linker_titles_are_normalised_for_page_filters(kb: KnowledgeBase) -> None:
    assert EntityLinker(kb).titles() == {
        "Ada Lovelace",
        "London",
        "London, Ontario",
        "Mercury (planet)",
        "Mercury (element)",
        "Charles Babbage",
    }


PASSAGE_TRIPLES = [
    [
        T("Ada Lovelace", "place of birth", "London"),
        T("Ada Lovelace", "place of birth", "London"),  # repeated in the passage: counted once
        T("Ada Lovelace", "occupation", "Mathematician"),
        T("Ada Lovelace", "place of death", "London"),  # linked, not in the base
        T("Mercury", "place of birth", "London"),  # ambiguous head
        T("Ada Lovelace", "invented", "London"),  # unknown relation
        T("Ada Lovelace", "date of birth", "10 December 1815"),  # literal tail by its text
        T("Ada Lovelace", "occupation", "poet"),  # unknown tail
    ],
    [
        T("Babbage", "birthplace", "London"),
        T("Ada Lovelace", "place of birth", "London"),
        T("Charles Babbage", "date of birth", "1791"),  # a year-precision date by its year
        T("Charles Babbage", "date of birth", "1792"),
    ],
    [],
]


def test_count_triples_keeps_linked_triples_of_the_base(kb: KnowledgeBase) -> None:
    counts, stats = count_triples(PASSAGE_TRIPLES, EntityLinker(kb), kb)
    assert counts == Counter(
        {
            "Q1|P19|Q2": 2,
            "Q1|P106|Q6": 1,
            "Q1|P569|time:+1815-12-10T00:00:00Z": 1,
            "Q7|P19|Q2": 1,
            "Q7|P569|time:+1791-00-00T00:00:00Z": 1,
        }
    )
    assert set(counts) <= {s.key for s in kb.statements}
    assert stats.as_dict() == {
        "extracted": 12,
        "kept": 6,
        "linked": 8,
        "not_in_kb": 1,
        "pages": 0,
        "passages": 3,
        "repeated_in_passage": 1,
        "unlinked_head": 1,
        "unlinked_relation": 1,
        "unlinked_tail": 2,
    }


def test_count_stats_merge_like_one_run(kb: KnowledgeBase) -> None:
    linker = EntityLinker(kb)
    whole_counts, whole = count_triples(PASSAGE_TRIPLES, linker, kb)
    first_counts, first = count_triples(PASSAGE_TRIPLES[:1], linker, kb)
    rest_counts, rest = count_triples(PASSAGE_TRIPLES[1:], linker, kb)
    assert first_counts + rest_counts == whole_counts
    assert (first + rest).as_dict() == whole.as_dict()


class FakeExtractor:
    """Triples for the passages it knows, in the order it is called; records its calls."""

    def __init__(self, known: dict[str, list[ExtractedTriple]]) -> None:
        self.known = known
        self.calls: list[list[str]] = []

    def extract(self, passages: list[str]) -> list[list[ExtractedTriple]]:
        self.calls.append(list(passages))
        return [self.known.get(p, []) for p in passages]


@pytest.mark.parametrize("per_call", [1, 256])
def test_wikipedia_frequencies_over_pages(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch, per_call: int
) -> None:
    pytest.importorskip("mwparserfromhell")
    monkeypatch.setattr(linking, "PASSAGES_PER_CALL", per_call)
    born = "Ada Lovelace was born in London."
    fake = FakeExtractor({born: [T("Ada Lovelace", "place of birth", "London")]})
    pages = [
        Page(
            page_id=1,
            title="Ada Lovelace",
            wikitext=f"'''{born[:12]}'''{born[12:]}\n\n== Life ==\nShe wrote.",
        ),
        Reject(stage="read_dump", reason="bad_json", key="x.json:3"),
        Page(page_id=2, title="Huge", wikitext="x" * 2_000_001),
        Page(page_id=3, title="Again", wikitext=born),
    ]
    rejects: list[Reject] = []
    counts, stats = wikipedia_frequencies(pages, fake, EntityLinker(kb), kb, on_reject=rejects.append)
    assert counts == Counter({"Q1|P19|Q2": 2})
    assert [p for call in fake.calls for p in call] == [born, "She wrote.", born]
    assert len(fake.calls) == (2 if per_call == 1 else 1)  # one call per page at most
    assert [(r.stage, r.reason, r.key) for r in rejects] == [
        ("read_dump", "bad_json", "x.json:3"),
        ("wikipedia_frequency", "too_large", "2"),
    ]
    assert (stats.pages, stats.passages, stats.kept, dict(stats.rejected)) == (
        3,
        3,
        2,
        {"bad_json": 1, "too_large": 1},
    )


# --- a tiny real checkpoint --------------------------------------------------------------------------

PAIRS = [
    ("Ada Lovelace was born in London.", "<s> <triplet> Ada Lovelace <subj> London <obj> place of birth"),
    (
        "Charles Babbage was born in London.",
        "<s> <triplet> Charles Babbage <subj> London <obj> place of birth",
    ),
]


def build_checkpoint(path: Path, *, train_steps: int, markers: bool = True, seed: int = 0) -> Path:
    """A locally trained word-level tokenizer and a 1-layer BART (d_model 16), saved to `path`."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    marker_tokens = ["<triplet>", "<subj>", "<obj>"] if markers else []
    raw = Tokenizer(models.WordLevel(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    raw.decoder = decoders.WordPiece()  # word-level pieces joined by spaces
    trainer = trainers.WordLevelTrainer(special_tokens=["<pad>", "<s>", "</s>", "<unk>", *marker_tokens])
    raw.train_from_iterator([text for pair in PAIRS for text in pair] + ["unseen words here"], trainer)
    raw.post_processor = processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", raw.token_to_id("</s>"))]
    )
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=raw,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        additional_special_tokens=marker_tokens,
    )
    config = transformers.BartConfig(
        vocab_size=len(tokenizer),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=64,
        dropout=0.0,
        attention_dropout=0.0,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.eos_token_id,
        forced_bos_token_id=None,
        forced_eos_token_id=None,
    )
    torch.manual_seed(seed)
    model = transformers.BartForConditionalGeneration(config)
    if train_steps:
        inputs = tokenizer([s for s, _ in PAIRS], return_tensors="pt", padding=True)
        labels = tokenizer([t for _, t in PAIRS], return_tensors="pt", padding=True).input_ids
        labels[labels == tokenizer.pad_token_id] = -100
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        model.train()
        for _ in range(train_steps):
            optimizer.zero_grad()
            model(**inputs, labels=labels).loss.backward()
            optimizer.step()
    tokenizer.save_pretrained(path)
    model.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_checkpoint(tmp_path_factory.mktemp("rebel-trained"), train_steps=200)


@pytest.fixture(scope="module")
def untrained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_checkpoint(tmp_path_factory.mktemp("rebel-random"), train_steps=0)


def test_untrained_model_runs_end_to_end(untrained: Path) -> None:
    passages = ["Ada Lovelace was born in London.", "", "unseen words here", "Charles Babbage"]
    # Beams of a random model rarely end: 128 new tokens must be capped at the model's 64 positions.
    out = RebelExtractor(untrained, num_beams=2, batch_size=3).extract(passages)
    assert len(out) == len(passages) and out[1] == []
    assert all(isinstance(t, ExtractedTriple) and t.head and t.relation and t.tail for ts in out for t in ts)


def test_trained_model_emits_parsable_triplets(trained: Path) -> None:
    extractor = RebelExtractor(trained, batch_size=1)
    text, complete = extractor.generate([PAIRS[0][0]])[0]
    assert complete
    assert "<triplet>" in text and "<subj>" in text and "<obj>" in text
    assert not any(tok in text for tok in ("<s>", "</s>", "<pad>"))
    assert extractor.extract([p for p, _ in PAIRS]) == [
        [T("Ada Lovelace", "place of birth", "London")],
        [T("Charles Babbage", "place of birth", "London")],
    ]


def test_generation_cut_at_the_token_limit_drops_the_open_triple(trained: Path) -> None:
    extractor = RebelExtractor(trained, max_new_tokens=8)
    ((text, complete),) = extractor.generate([PAIRS[0][0]])
    assert not complete and text.split()[-2:] == ["<obj>", "place"]
    assert extractor.extract([PAIRS[0][0]]) == [[]]


def test_trained_model_through_wikipedia_frequencies(trained: Path, kb: KnowledgeBase) -> None:
    pytest.importorskip("mwparserfromhell")
    page = Page(page_id=7, title="Ada Lovelace", wikitext="'''Ada Lovelace''' was born in [[London]].")
    extractor = RebelExtractor(trained, num_beams=2)
    counts, stats = wikipedia_frequencies([page], extractor, EntityLinker(kb), kb)
    assert counts == Counter({"Q1|P19|Q2": 1})
    assert (stats.passages, stats.extracted, stats.kept) == (1, 1, 1)


def test_extractor_construction_does_no_io_and_checks_settings(tmp_path: Path) -> None:
    RebelExtractor(tmp_path / "missing")  # nothing is read until extraction
    with pytest.raises(BadInputError, match="num_beams"):
        RebelExtractor(tmp_path, num_beams=0)


def test_missing_or_wrong_checkpoints_are_bad_input(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    with pytest.raises(BadInputError, match="no such directory"):
        RebelExtractor(tmp_path / "missing").extract(["Ada Lovelace was born in London."])
    with pytest.raises(BadInputError, match="cannot load"):
        RebelExtractor(tmp_path).load()
    plain = build_checkpoint(tmp_path / "plain", train_steps=0, markers=False)
    with pytest.raises(BadInputError, match="<triplet>"):
        RebelExtractor(plain).load()


def test_missing_transformers_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    expected = r"'rebel' extra.*download.pytorch.org/whl/cpu, then pip install -e '\.\[rebel\]'"
    with pytest.raises(MissingExtraError, match=expected):
        RebelExtractor(tmp_path).extract(["text"])
