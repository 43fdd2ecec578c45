"""Round two of decontextualization (`referents.situate`): what a finished keypoint still leans on.

Every text is a real segment or keypoint of the tuning half (even page ids) of the 106-article realdata
build; the comment gives its segment id. Leads are cut to their first sentences.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from irbgen.irb.keypoints import MakeKeypoints
from irbgen.irb.rules.keypoints import page_of
from irbgen.irb.rules.referents import situate
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.spacy_models import DEFAULT_MODEL
from irbgen.wikipedia.records import Citation, Segment
from irbgen.wikipedia.stages import load_parser

ALBANIA = "Albania is a country in Southeastern Europe."
AZERBAIJAN = "Azerbaijan, officially the Republic of Azerbaijan, is a country in the Transcaucasian region."
ANDORRA = "Andorra, officially the Principality of Andorra, is a sovereign landlocked microstate in Europe."
ACADEMY = "The Academy Awards are a set of awards for artistic and technical merit in the film industry."
ALGERIA = "Algeria is a sovereign state in North Africa on the Mediterranean coast."
RADIO = "There are radio broadcasts in Russian, Armenian, Georgian, Kurdish, Lezgian and Talysh languages, "
APOLLO = "Apollo 11 was the spaceflight that landed the first two humans on the Moon."


def run(title: str, lead: str, text: str, context: tuple[str, ...] = ()):
    page = page_of(title, lead)
    return situate(load_parser(DEFAULT_MODEL)(text), page, [lead, *context])


# --- 1. a description of the page subject gets its name; another kind with no name is rejected ---------


@pytest.mark.parametrize(
    ("title", "lead", "text", "expected"),
    [
        (  # 738:124:0
            "Albania", ALBANIA, "Tirana was endorsed officially as the country's permanent capital.",
            "Tirana was endorsed officially as Albania's permanent capital.",
        ),
        (  # 738:356:0: of what are they the largest?
            "Albania", ALBANIA, "Three of the largest lakes are Shkodra, Ohrid and Prespa.",
            "Three of the largest lakes in Albania are Shkodra, Ohrid and Prespa.",
        ),
        (  # 746:442:0
            "Azerbaijan", AZERBAIJAN,
            RADIO + "which are financed from the state budget.",
            RADIO + "which are financed from the state budget of Azerbaijan.",
        ),
    ],
)  # fmt: skip
def test_page_description_takes_the_page_name(title: str, lead: str, text: str, expected: str) -> None:
    assert run(title, lead, text).text == expected


ALASKA = "Alaska is a U.S. state in the northwest extremity of the Americas."
FARMS = (
    "Alaskan agriculture has experienced a surge in growth of market gardeners, small farms and farmers' "
    "markets in recent years, with the highest percentage increase (46%) in the nation in growth in "
    "farmers' markets in 2011, compared to 17% nationwide."
)


def test_the_nation_of_a_us_state_is_not_the_state() -> None:
    # 624:265:0: on a U.S. state's page "the nation" is the United States, not Alaska
    assert run("Alaska", ALASKA, FARMS).text == FARMS
    # a sovereign state's page still reads "the country" as itself (358:280:0's kind)
    algeria = run("Algeria", ALGERIA, "In general, the country exported $73 billion worth of commodities.")
    assert algeria.text == "In general, Algeria exported $73 billion worth of commodities."


def test_description_of_another_kind_is_left_to_the_gate() -> None:
    # 600:244:0 on "Andorra": which club? Not the page's kind, so no name; the stage rejects it
    text = "After 18 years the club returned to the top league in 2014."
    assert run("Andorra", ANDORRA, text).text == text
    seg = Segment(
        id="600:244:0", page_id=600, title="Andorra", lead=ANDORRA, section=["Sports"], sentence=text,
        text=text, before=[], after=[], citations=[Citation(url="https://example.org/source")],
    )  # fmt: skip
    (out,) = MakeKeypoints("rules").process(seg, StageContext(run_dir=Path(".")))
    assert isinstance(out, Reject) and out.reason == "unresolved_reference" and "'the club'" in out.detail


def test_description_with_a_name_beside_it_stays() -> None:
    # 746:560:0: "the club" is Atlético de Madrid, named in the keypoint
    text = (
        "Azerbaijan is the main sponsor of Spanish football club Atlético de Madrid, a partnership that the "
        "club describes should 'promote the image of Azerbaijan in the world'."
    )
    assert run("Azerbaijan", AZERBAIJAN, text).text == text


# --- 2. words that presuppose an earlier event or a known person --------------------------------------


def test_again_presupposes_an_earlier_event() -> None:
    # 324:108:0
    text = (
        "ABC once again took over broadcast duties in 1976, and has broadcast the Oscars ever since; its "
        "current contract with the Academy runs through 2020."
    )
    result = run("Academy Awards", ACADEMY, text)
    assert result.text is None and result.reason == "presupposed_event"
    assert "'once again'" in result.detail


def test_sequencing_adverb_is_dropped() -> None:
    # 738:43:0
    result = run("Albania", ALBANIA, "Teuta was eventually succeeded by Gentius in 181 BC.")
    assert result.text == "Teuta was succeeded by Gentius in 181 BC."


def test_plural_pronoun_without_a_plural_before_it_is_rejected() -> None:
    # 662:128:0: "them" are the astronauts of the sentence before
    text = (
        "Some time later, President Richard Nixon spoke to them through a telephone-radio transmission which "
        'Nixon called "the most historic phone call ever made from the White House."'
    )
    result = run("Apollo 11", APOLLO, text)
    assert result.text is None and result.reason == "unresolved_referent"
    assert "'them'" in result.detail


@pytest.mark.parametrize(
    "text",
    [
        # 358:130:0: "their" looks ahead to "the French"
        "Under the pretext of a slight to their consul, the French invaded and captured Algiers in 1830.",
        # 358:244:0: "them" are the weapons
        "In October 2009, Algeria cancelled a weapons deal with France over the possibility of inclusion of "
        "Israeli parts in them.",
    ],
)
def test_plural_pronoun_with_its_antecedent_stays(text: str) -> None:
    assert run("Algeria", ALGERIA, text).text == text


def test_lone_surname_gets_the_full_name_the_context_gives() -> None:
    # 358:188:0, with a sentence of its section that names him in full
    result = run(
        "Algeria", ALGERIA, "In April 2011, Bouteflika promised further constitutional and political reform.",
        ("Abdelaziz Bouteflika has been President since 1999.",),
    )  # fmt: skip
    expected = "In April 2011, Abdelaziz Bouteflika promised further constitutional and political reform."
    assert result.text == expected


def test_lone_surname_gets_a_full_name_a_citation_mark_splits_in_context() -> None:
    # the context is cleaned before it is searched, so "Bouteflika" is found in "Bouteflika[3]" and in a
    # name "Boute[3]flika" that only the cleaning joins (the lookup skips sentences without the surname)
    text = "In April 2011, Bouteflika promised further constitutional and political reform."
    expected = "In April 2011, Abdelaziz Bouteflika promised further constitutional and political reform."
    for before in (
        "Abdelaziz Bouteflika[3] has been President since 1999.",
        "Abdelaziz Boute[3]flika ruled.",
    ):
        assert run("Algeria", ALGERIA, text, (before,)).text == expected, before


def test_lone_surname_without_a_full_name_in_context_stays() -> None:
    # 738:43:0's people are named once, in one word, on the page
    assert run("Albania", ALBANIA, "Teuta was succeeded by Gentius in 181 BC.").text == (
        "Teuta was succeeded by Gentius in 181 BC."
    )


def test_lone_surname_shared_by_two_people_in_context_stays() -> None:
    # 746:115:0: the sentence before names Ilham and Heydar Aliyev; which presidency is meant?
    text = (
        "Despite the much improved economy, particularly with the exploitations of Azeri-Chirag-Guneshli oil "
        "field and Shah Deniz gas field, Aliyev's presidency was criticized due to suspected vote fraud and "
        "corruption."
    )
    before = (
        "Ilham Aliyev, the son of Heydar Aliyev, assumed as the chairmen of the New Azerbaijan Party as well "
        "as the office of presidency when his father died in 2003."
    )
    assert run("Azerbaijan", AZERBAIJAN, text, (before,)).text == text


def test_lone_surname_keeps_a_name_not_a_nationality_before_it() -> None:
    # 662:107:2, with the lead's "Americans Neil Armstrong and Buzz Aldrin landed ..."
    text = (
        "Armstrong stepped off Eagle footpad and declared, \"That's one small step for man, one giant leap "
        'for mankind."'
    )
    context = ("Americans Neil Armstrong and Buzz Aldrin landed on July 20, 1969, at 20:18 UTC.",)
    assert run("Apollo 11", APOLLO, text, context).text == "Neil " + text
