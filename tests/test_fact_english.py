"""Rule facts read as correct English (issue 42): a labelled set, sentence -> every fact's text.

Each case is what a user says (and the name they gave earlier, if any) and the exact text of
every fact the rules draw from it. It holds the issue's own cases: "The user ares building ...",
the works_at object "Initech with Bob", "The user and others decided ...", the subject
"the user's sister Eva", and the name the user gave.
"""

from __future__ import annotations

import pytest

from sagewai.extraction import ExtractionContext
from sagewai.intelligence import RuleBasedFactExtractor

CASES: list[tuple[str, str | None, list[str]]] = [
    (
        "My team and I are building the billing service in Rust.",
        None,
        ["The user and their team are building the billing service in Rust."],
    ),
    ("I work at Initech with Bob.", None, ["The user works at Initech with Bob."]),
    (
        "We decided to migrate to Postgres next quarter.",
        None,
        ["The user and their team decided to migrate to Postgres next quarter."],
    ),
    (
        "My sister Eva lives in Oslo.",
        None,
        ["Eva (the user's sister) lives in Oslo.", "The user is the sibling of Eva."],
    ),
    (
        "My name is Dana and I lead the platform team.",
        None,
        ["The user's name is Dana.", "Dana (the user) leads the platform team."],
    ),
    ("I prefer short answers.", None, ["The user prefers short answers."]),
    ("I work at Initech.", "Dana", ["Dana (the user) works at Initech."]),
    ("I moved to Lisbon.", "Dana", ["Dana (the user) moved to Lisbon."]),
    ("My favourite drink is green tea.", None, ["The user's favourite drink is green tea."]),
    (
        "My favourite drink is green tea.",
        "Dana",
        ["Dana's (the user's) favourite drink is green tea."],
    ),
    ("I don't like coffee.", None, ["The user doesn't like coffee."]),
    ("I have two cats.", None, ["The user has two cats."]),
    ("I'm allergic to peanuts.", None, ["The user is allergic to peanuts."]),
    ("I am a software engineer.", None, ["The user is a software engineer."]),
    ("I was born in Porto.", None, ["The user was born in Porto."]),
    (
        "I've been working at Globex since 2019.",
        None,
        ["The user has been working at Globex since 2019."],
    ),
    ("I'll start the new job in March.", None, ["The user will start the new job in March."]),
    ("My wife and I live in Berlin.", None, ["The user and their wife live in Berlin."]),
    ("My brother Tom works at Google.", None, ["The user is the sibling of Tom."]),
    ("My friend Ana moved to Madrid.", None, ["The user is a friend of Ana."]),
    (
        "We use Kubernetes for deployments.",
        None,
        ["The user and their team use Kubernetes for deployments."],
    ),
    (
        "We are migrating the API to GraphQL.",
        None,
        ["The user and their team are migrating the API to GraphQL."],
    ),
    (
        "We went camping with the kids last weekend.",
        None,
        ["The user and their family went camping with the kids last weekend."],
    ),
    ("Our team ships on Tuesdays.", None, []),
    (
        "I usually go running in the morning.",
        None,
        ["The user usually goes running in the morning."],
    ),
    ("I really love hiking.", None, ["The user really loves hiking."]),
    ("I study computer science at MIT.", None, ["The user studies computer science at MIT."]),
    ("I go to the gym every day.", None, ["The user goes to the gym every day."]),
    ("I do yoga on Sundays.", None, ["The user does yoga on Sundays."]),
    ("I have a dog named Rex.", None, ["The user has a dog named Rex."]),
    (
        "I'm working with Carol on the launch.",
        None,
        ["The user is working with Carol on the launch."],
    ),
    (
        "I work for Acme with my friend Sam.",
        None,
        ["The user works for Acme with their friend Sam.", "The user is a friend of Sam."],
    ),
    ("I decided to learn Spanish.", None, ["The user decided to learn Spanish."]),
    (
        "We're planning a trip to Japan.",
        None,
        ["The user and others are planning a trip to Japan."],
    ),
    ("My daughter Mia started school.", None, ["The user is the parent of Mia."]),
    ("My mom lives in Chicago.", None, ["The user's mom lives in Chicago."]),
    ("I hate waking up early.", None, ["The user hates waking up early."]),
    ("I never deploy on Fridays.", None, ["The user never deploys on Fridays."]),
    ("I'm vegetarian.", None, ["The user is vegetarian."]),
    ("My manager Priya approved the budget.", None, ["The user is managed by Priya."]),
    (
        "My colleagues and I finished the migration.",
        None,
        ["The user and their colleagues finished the migration."],
    ),
    ("I live in Toronto with my partner.", None, ["The user lives in Toronto with their partner."]),
    ("I'm learning the guitar.", None, ["The user is learning the guitar."]),
    ("Call me Dana.", None, ["The user wants to be called Dana."]),
    ("I lead the data team.", "Dana", ["Dana (the user) leads the data team."]),
    (
        "My husband Carlos and I bought a house.",
        None,
        ["The user is married to Carlos.", "The user and their husband Carlos bought a house."],
    ),
    (
        "We decided to drop the legacy API.",
        None,
        ["The user and their team decided to drop the legacy API."],
    ),
    ("I switched to Neovim last year.", None, ["The user switched to Neovim last year."]),
]


@pytest.mark.parametrize(("said", "user_name", "expected"), CASES)
async def test_rule_facts_read_as_correct_english(
    said: str, user_name: str | None, expected: list[str]
) -> None:
    context = ExtractionContext(user_name=user_name) if user_name else None
    facts = await RuleBasedFactExtractor().extract(said, context)
    assert [fact.content for fact in facts] == expected


def test_the_set_is_large_enough() -> None:
    assert len(CASES) >= 40


async def test_the_issues_cases_have_the_right_triples() -> None:
    extract = RuleBasedFactExtractor().extract
    [works] = await extract("I work at Initech with Bob.")
    assert works.triple == ("user", "works_at", "Initech")  # the companion is not the employer
    eva, sibling = await extract("My sister Eva lives in Oslo.")
    assert eva.triple == ("Eva", "lives_in", "Oslo")
    assert (eva.metadata["relation"], eva.metadata["relation_of"]) == ("sister", "the user")
    assert sibling.triple == ("user", "sibling_of", "Eva")
    name, lead = await extract("My name is Dana and I lead the platform team.")
    assert name.triple == ("user", "name", "Dana")
    assert lead.subject == "user"  # one subject for the user, before and after the name
    assert lead.metadata["user_name"] == "Dana"


async def test_someone_elses_message_never_takes_the_users_name() -> None:
    extract = RuleBasedFactExtractor().extract
    facts = await extract("I moved to Lisbon.", ExtractionContext(speaker="Bob", user_name="Dana"))
    assert [f.content for f in facts] == ["Bob moved to Lisbon."]
    said = await extract(
        "I'll remind you tomorrow.", ExtractionContext(role="assistant", user_name="Dana")
    )
    assert all("Dana" not in f.content for f in said)
