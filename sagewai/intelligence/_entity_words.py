"""Word lists the rule-based entity extractor reads names by (beside its own small gazetteers).

A capitalised word is a name of *something* far more often than it is a person: "Trello",
"Helmet", "LGBTQ", "Pride", "Fri". The extractor calls a capitalised word a person only with
evidence: a common first name (:data:`FIRST_NAMES`), a cue ("my friend", "named"), or the word
said in address ("Thanks, Mel!"). These lists hold that evidence, and the words that make a
capitalised phrase a place, an event or an organisation by its last word ("Grand Canyon",
"Perseid meteor shower", "Journal of Media Studies").
"""

from __future__ import annotations

from sagewai.core._text import word_set

__all__ = [
    "EVENT_NAMES",
    "EVENT_NOUNS",
    "FIRST_NAMES",
    "MORE_TECHNOLOGIES",
    "ORGANISATION_ACRONYMS",
    "PLACE_NOUNS",
    "TECHNOLOGY_ACRONYMS",
    "WEEKDAYS",
]


FIRST_NAMES = word_set(
    """Aaron Abby Abigail Adam Adrian Aiden Aisha Alan Albert Alex Alexander Alexandra Alice
    Alicia Alison Allison Amanda Amber Amelia Amy Ana Andrea Andrew Andy Angela Anna Anne Annie
    Anthony Antonio Arthur Ashley Audrey Austin Ava Barbara Ben Benjamin Beth Betty Bill Billy
    Blake Bob Bobby Brad Bradley Brandon Brenda Brian Brittany Bruce Bryan Caleb Cameron Carl
    Carla Carlos Carmen Carol Caroline Carolyn Catherine Charles Charlie Charlotte Chloe Chris
    Christian Christina Christine Christopher Claire Clara Cody Colin Connor Craig Cynthia Daniel
    Danielle Dana David Deborah Debra Dennis Derek Diana Diane Dominic Donald Donna Doris Dorothy
    Douglas Dylan Ed Eddie Edward Elena Eli Elijah Elizabeth Ella Ellen Emily Emma Eric Erica
    Erin Ethan Eva Evan Eve Evelyn Frank Fred Gabriel Gabriella Gary George Gina Grace Greg
    Gregory Hannah Harold Harry Heather Helen Henry Holly Ian Isaac Isabel Isabella Jack Jackson
    Jacob Jake James Jamie Jane Janet Janice Jason Jean Jeff Jeffrey Jennifer Jenny Jeremy Jerry
    Jesse Jessica Jill Jim Jimmy Joan Joe Joel John Johnny Jon Jonathan Jordan Jose Joseph Josh
    Joshua Joy Joyce Juan Judith Judy Julia Julian Julie Justin Karen Kate Katherine Kathleen
    Kathryn Katie Kayla Keith Kelly Ken Kenneth Kevin Kim Kimberly Kyle Laura Lauren Leah Leo Liam
    Lily Linda Lisa Logan Lucas Lucy Luis Luke Luna Lydia Madison Maggie Marco Margaret Maria
    Marie Marilyn Mark Martha Martin Mary Mason Matt Matthew Max Maya Megan Melanie Melissa
    Michael Michelle Mike Mila Nancy Natalie Nathan Nicholas Nick Nicole Noah Nora Olivia Oliver
    Oscar Owen Pamela Patricia Patrick Paul Paula Peter Philip Rachel Ralph Randy Raymond Rebecca
    Richard Rick Rita Robert Robin Roger Ron Ronald Rose Ruby Russell Ruth Ryan Sam Samantha
    Samuel Sandra Sara Sarah Scott Sean Shannon Sharon Shirley Simon Sofia Sophia Sophie Stephanie
    Stephen Steve Steven Susan Tara Taylor Teresa Terry Thomas Tiffany Tim Timothy Tina Todd Tom
    Tommy Tony Tracy Tyler Valerie Vanessa Victor Victoria Vincent Virginia Walter Wayne Wendy
    William Willie Zachary Zoe"""
)
"""Common given names: a capitalised word among them is a person without any other cue."""

WEEKDAYS = word_set(
    "Mon Tue Tues Wed Weds Thu Thur Thurs Fri Sat Sun Monday Tuesday Wednesday Thursday Friday "
    "Saturday Sunday"
)
"""Weekday names and their abbreviations: never a name ("last Fri", "on Tues")."""

EVENT_NAMES = word_set(
    "Christmas Easter Thanksgiving Halloween Hanukkah Diwali Ramadan Eid Passover Pride "
    "Juneteenth Oktoberfest Coachella Olympics Carnival"
)
"""Observances and events known by one word; "Pride Month", "Christmas Eve" follow from them."""
EVENT_NOUNS = word_set(
    "fest festival parade meteor shower conference symposium summit marathon expo fair "
    "awards championship tournament Month Eve Day Fest Festival Parade Conference Symposium "
    "Summit Marathon Expo Fair Awards Championship Tournament Week"
)
"""Words that make the capitalised name before them an event ("Pride fest", "Media Symposium")."""

PLACE_NOUNS = word_set(
    "Canyon Park Lake River Mountain Mountains Beach Island Islands Valley Bay Falls Gardens "
    "Garden Street Avenue Square Bridge Forest Desert Coast Hills Restaurant Cafe Café Hotel "
    "Lagoon Mall Stadium Airport Station Zoo Plaza Harbor Harbour Pier Trail Peninsula County "
    "Province Village Castle Cathedral Palace Tower"
)
"""Last words of a place's name ("Grand Canyon", "Montserrat Botanical Gardens")."""

ORGANISATION_ACRONYMS = word_set(
    "NASA NATO FBI CIA NHS BBC CNN MIT UCLA NYU UNICEF UNESCO WHO IBM UN EU IMF NFL NBA MLB NHL "
    "FIFA UEFA IRS FDA CDC HSBC KPMG PwC EY BMW VW"
)
"""Upper-case words that name an organisation; any other ("LGBTQ", "API", "MVP") is no name."""
TECHNOLOGY_ACRONYMS = word_set(
    "HTML HTML5 CSS CSS3 SQL AWS GCP PHP JSON YAML XML REST SSH NGINX JWT NPM CUDA GPT LLM"
)
"""Upper-case words that name a technology."""

MORE_TECHNOLOGIES = word_set(
    "axios superagent webpack vite babel npm yarn pnpm redux jquery nginx heroku netlify vercel "
    "firebase supabase mongoose sequelize prisma sqlalchemy celery gunicorn uvicorn selenium "
    "cypress jest mocha playwright postman swagger grafana prometheus sentry datadog cloudflare "
    "dockerfile eslint stylelint prettier tailwind bootstrap quart argon2 bcrypt openweather "
    "webp trello asana canva tableau matlab dropbox gmail outlook chrome firefox powerpoint "
    "onedrive icloud lighthouse helmet"
)
"""Software beyond the extractor's own list (matched as words, any case)."""
