"""Issue 26, round 6: whom "he", "she" and "it" mean in a keypoint. Every example is a real keypoint of
the tuning half (even page ids) of the realdata build; the page it comes from is in the comment."""

from __future__ import annotations

import pytest

from irbgen.irb.gates import keypoint_failure, unresolved_reference
from irbgen.irb.rules.keypoints import page_person


@pytest.mark.parametrize(
    "text, person, detail",
    [  # 736:218:0 (Albert Einstein): the main clause's "he" is the page's person, never named
        (
            "In 1931, while engaged in research at the California Institute of Technology, he visited the "
            "Zoellner family conservatory in Los Angeles.",
            ("Albert Einstein", "m"),
            "'he' means Albert Einstein",
        ),
        # 344:7:0 (Allan Dwan): "New York" is a place, not someone "he" can mean
        (
            "While still in New York, in 1917 he was the founding president of the East Coast chapter of "
            "the Motion Picture Directors Association.",
            ("Allan Dwan", "m"),
            "'he' means Allan Dwan",
        ),
        # 700:22:0 and 700:36:0 (Arthur Schopenhauer): "she" is not the page's man; whom?
        (
            "In a fit of temper Arthur Schopenhauer told her that his work would be read long after the "
            '"rubbish" she wrote would have been totally forgotten.',
            ("Arthur Schopenhauer", "m"),
            "pronoun 'her' refers outside the text",
        ),
        (
            "According to Schopenhauer's court testimony, she deliberately annoyed him by raising her voice "
            "while standing right outside his door.",
            ("Arthur Schopenhauer", "m"),
            "pronoun 'she' refers outside the text",
        ),
    ],
)
def test_a_personal_pronoun_without_its_person_is_rejected(nlp, text, person, detail):
    assert detail in unresolved_reference(nlp(text), person)


@pytest.mark.parametrize(
    "text",
    [  # 324:58:0 and 324:161:0 (Academy Awards), 308:336:1 (a page on sleep): the noun in the fronted
        # phrase is not what "it" or "they" means
        "On December 20, 2011, it sold in an online auction for US$861,542.",
        "Due to continuous insufficient eligibility each year, it has not been awarded since 1984 (when "
        "Purple Rain won).",
        "Due to the senses not functioning normally during sleep, they are unable to help a person judge "
        "what is happening in their dream.",
    ],
)
def test_a_pronoun_whose_only_noun_is_in_a_fronted_phrase_is_rejected(nlp, text):
    assert "refers outside the text" in unresolved_reference(nlp(text))


@pytest.mark.parametrize(
    "text, person",
    [
        # 700:138:0: the possessor in the fronted phrase is the one meant
        (
            "In Schopenhauer's 1851 essay On Women, he expressed his opposition to what he called "
            '"Teutonico-Christian stupidity".',
            ("Arthur Schopenhauer", "m"),
        ),
        # 746:70:0 (Azerbaijan): "it" is Qajar Iran, the possessor
        (
            "Following Qajar Iran's loss in the 1804-1813 war, it was forced to concede suzerainty over most "
            "of the khanates (alongside Georgia and Dagestan) to the Russian Empire per the Gulistan treaty.",
            None,
        ),
        # 736 (Albert Einstein): the page's person is named, so "his" has him
        ("Marić collaborated with Einstein on his celebrated 1905 papers.", ("Albert Einstein", "m")),
        # 620:224:0 (Animal Farm, not a person): "her" and "his" have the names before them
        (
            'In the ninth episode of the fourth season of Sex and the City, "Sex and the Country", Carrie '
            "goes with her new boyfriend Aidan to his cottage.",
            None,
        ),
        # 738:235:0 stays out for its own "It", but an "it" that stands for a clause passes
        (
            "Rather than a definition in terms of the force between two current-carrying wires, it has been "
            "proposed to define the ampere in terms of the rate of flow of elementary charges.",
            None,
        ),
    ],
)
def test_a_pronoun_with_its_referent_in_the_text_passes(nlp, text, person):
    assert unresolved_reference(nlp(text), person) is None


def test_an_object_pronoun_may_mean_another_person_before_it(nlp):
    # 307:547:0 (Abraham Lincoln's page): "him" is Rathbone, not the page's man
    text = "Major Henry Rathbone momentarily grappled with Booth, but Booth stabbed him and escaped."
    assert keypoint_failure(text, nlp(text), "Abraham Lincoln", ("Abraham Lincoln", "m")) is None


def test_an_it_invited_to_join_is_no_clause_it(nlp):
    text = "It was invited to join NATO on 3 April 2008, and it became a full member on 2 April 2009."
    assert "'It' refers outside the text" in unresolved_reference(nlp(text))


def test_page_person_reads_the_gender_from_the_lead_or_the_sentences_around():
    lead = (
        "Allan Dwan (3 April 1885 – 28 December 1981) was a pioneering Canadian-born American motion "
        "picture director, producer and screenwriter."
    )
    around = ["Dwan began his career in 1909.", "In 1917 he was the founding president.", "He died in 1981."]
    assert page_person("Allan Dwan", lead, around) == ("Allan Dwan", "m")
    assert page_person("Allan Dwan", lead) is None  # the lead alone says no gender
    astronaut = "An astronaut is a person trained to command or serve aboard a spacecraft; his or her ..."
    assert page_person("Astronaut", astronaut, around) is None  # a kind of person, not one person
