"""The exchange a standing instruction was set in reaches the prompt when a message is about it.

The profile section shows the instruction; the user's next turns of that session ("hmm, can
you show an example using a non-right-angled triangle to compare these methods?") show how
they wanted it applied, and are shown as said in the memory block when a later message is
about the instruction's topic (:mod:`sagewai.agent._exchange`). BEAM counts them as the
evidence of instruction following (``evals.beam_profile``).
"""

from __future__ import annotations

from sagewai import ContextEngine, UniversalAgent
from sagewai.agent._exchange import about, thread
from sagewai.core._records import Fact
from sagewai.testing import FakeEmbedder, ScriptedLLM

RULE = "Always compare several solution methods when I ask about triangle area calculations."
FOLLOW_UP = "hmm, can you show an example with a non-right-angled triangle to compare methods?"
UNRELATED = "By the way, my cat knocked over a plant this morning."


def test_about_picks_the_entries_sharing_topic_words() -> None:
    rule = Fact(project_id="p", content="x", object=RULE)
    other = Fact(project_id="p", content="x", object="Never deploy on Fridays.")
    assert about([other, rule], "How do I find the area of a scalene triangle?") == [rule]
    # Request words alone ("show", "help", "provide") make no topic.
    assert about([rule], "Can you help me, show me something?") == []
    assert about([rule, other], "") == []


async def test_a_message_about_the_instruction_shows_its_exchange() -> None:
    async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        llm = ScriptedLLM(["ok"] * 12)
        async with UniversalAgent(
            name="helper", context=ctx, llm=llm, user_id="dana", profile_tokens=400
        ) as agent:
            await agent.chat(RULE, session_id="s1")
            await agent.chat(FOLLOW_UP, session_id="s1")
            await agent.chat(UNRELATED, session_id="s1")
            await agent.chat("Always answer in French.", session_id="s2", user_id="eve")
            await agent.chat(
                "hmm, a triangle area example with medians please.", session_id="s2", user_id="eve"
            )
        # A new agent (nothing in its session history): the exchange comes from the store.
        llm = ScriptedLLM(["ok"] * 4)
        async with UniversalAgent(
            name="helper", context=ctx, llm=llm, user_id="dana", profile_tokens=400, learn=False
        ) as agent:
            reply = await agent.respond("How do I calculate a triangle's area from its sides?")
            assert RULE in reply.profile.text
            messages = [item.text for item in reply.memory.items if item.section == "messages"]
            assert "non-right-angled triangle" in messages[0]  # the exchange comes first
            assert "medians please" not in reply.memory.text  # another user's turn, never
            [entry] = await ctx.profile(user_id="dana").entries()
            turns = [record.content for record in await agent._exchanges.turns(entry)]
            assert turns == [FOLLOW_UP]  # not the turn of the session about something else
            # A message about something else brings no exchange.
            assert about([entry], "Write a haiku about autumn rain.") == []
        async with UniversalAgent(
            name="helper", context=ctx, llm=ScriptedLLM(["ok"]), user_id="dana", profile_tokens=0
        ) as agent:
            off = await agent.respond("How do I calculate a triangle's area from its sides?")
            assert off.profile.text == ""


def test_a_turn_continuing_the_thread_belongs_to_the_exchange() -> None:
    entry = "prefers using Trello and Google Calendar for task organization"
    statement = f"I {entry}, can you help me set it up?"
    turns = [
        ("Sounds good! I'll set up Trello first; I may need help with the IFTTT recipe.", ""),
        ("That looks great! I'll head over to IFTTT and set up the recipe.", ""),  # continues
        ("By the way, my cat knocked over a plant this morning.", ""),  # breaks the thread
        ("hmm, could the recipe water the plant too?", ""),  # not the statement's thread
    ]
    assert thread(entry, statement, turns) == [0, 1]
    # Small talk continues nothing: "Got it, thanks!" shares no topic with "Got it!".
    chatter = [("Got it, thanks!", ""), ("Great, got it, sounds good, thanks!", "")]
    assert thread(entry, "Got it! I prefer Trello.", chatter) == []
    # The reply a turn answers may carry the entry's topic ("Got it" after a Trello answer).
    assert thread(entry, statement, [("Got it, thanks!", "... in Trello. Got it, thanks!")]) == [0]


async def test_the_exchange_follows_the_thread_through_the_agent() -> None:
    async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        said = [
            "I prefer using Trello and Google Calendar for task organization, can you help?",
            "Sounds good! I'll set up Trello first; I may need help with the IFTTT recipe.",
            "That looks great! I'll head over to IFTTT and set up the recipe.",
            "By the way, my cat knocked over a plant this morning.",
            "hmm, could the recipe water the plant too?",
        ]
        async with UniversalAgent(
            name="helper", context=ctx, llm=ScriptedLLM(["ok"] * 8), user_id="dana"
        ) as agent:
            for message in said:
                await agent.chat(message, session_id="s1")
        [entry] = await ctx.profile(user_id="dana").entries()
        async with UniversalAgent(
            name="helper", context=ctx, llm=ScriptedLLM(["ok"]), user_id="dana", learn=False
        ) as agent:
            turns = [record.content for record in await agent._exchanges.turns(entry)]
            assert turns == said[1:3]
            reply = await agent.respond("Which tools should I use to organize my tasks?")
            assert "IFTTT and set up the recipe" in reply.memory.text


async def test_a_long_profile_keeps_the_entries_the_message_is_about() -> None:
    topics = [
        "sourdough baking",
        "trail running shoes",
        "jazz vinyl records",
        "tax forms",
        "houseplant watering",
        "chess openings",
        "ski resorts",
        "espresso machines",
        "bird watching",
        "vintage watches",
    ]
    async with ContextEngine.in_memory(embedder=FakeEmbedder()) as ctx:
        profile = ctx.profile(user_id="dana")
        for topic in topics:
            await profile.set(f"Always include prices when I ask about {topic}.")
        entries = await profile.entries()
        async with UniversalAgent(
            name="helper",
            context=ctx,
            llm=ScriptedLLM(["ok"] * (len(topics) + 1)),
            user_id="dana",
            profile_tokens=150,
            learn=False,
        ) as agent:
            for topic in topics:
                reply = await agent.respond(f"Any tips on {topic}?")
                assert topic in reply.profile.text
                assert reply.profile.tokens <= 150
                assert 0 < len(reply.profile.fact_ids) < len(entries)  # not all of it fits
            # A message about none of them: the profile's order (the newest first).
            reply = await agent.respond("Write a haiku about rain.")
            assert reply.profile.fact_ids[0] == entries[0].id
