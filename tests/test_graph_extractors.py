"""Entity and relation extractors, and the predicate vocabulary."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

import sagewai
from sagewai.core._predicates import PREDICATES, is_single_valued, relation_predicate
from sagewai.errors import ExtractionError, ModelNotAvailableError
from sagewai.intelligence._entities import (
    EntityExtractor,
    GLiNEREntityExtractor,
    LLMEntityExtractor,
    parse_llm_entities,
)
from sagewai.intelligence._relations import SPEAKER, HeuristicRelationExtractor, RelationExtractor
from sagewai.intelligence._rule_entities import RuleBasedEntityExtractor

# --------------------------------------------------------------------------- rule-based entities


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I moved to Berlin in May 2023.", [("Berlin", "location"), ("May 2023", "date")]),
        (
            "My friend Ana works at Initech Labs and uses PostgreSQL 15.2.1.",
            [
                ("Ana", "person"),
                ("Initech Labs", "organization"),
                ("PostgreSQL", "technology"),
                ("15.2.1", "value"),
            ],
        ),
        (
            "Deploy to postgresql://db.internal:5432/app from /srv/app/config.yaml on 2024-03-01",
            [
                ("postgresql://db.internal:5432/app", "value"),
                ("/srv/app/config.yaml", "value"),
                ("2024-03-01", "date"),
            ],
        ),
        (
            "Ticket OPS-1234 for id 3f2b6c1e-1234-4abc-9def-0123456789ab costs $1,200.50",
            [
                ("OPS-1234", "value"),
                ("3f2b6c1e-1234-4abc-9def-0123456789ab", "value"),
                ("$1,200.50", "value"),
            ],
        ),
        (
            "Thanks! We visited Kyoto with Google folks and John Smith.",
            [("Kyoto", "location"), ("Google", "organization"), ("John Smith", "person")],
        ),
        ("Hey Mel! Wow, that's great. Yes, I agree.", [("Mel", "person")]),
        ("", []),
    ],
)
async def test_rule_based_entities(text: str, expected: list[tuple[str, str]]) -> None:
    found = await RuleBasedEntityExtractor().extract(text)
    assert [(e.name, e.label) for e in found] == expected
    for e in found:
        assert text[e.start : e.end] == e.name
        assert 0.0 < e.score <= 1.0


def test_rule_based_extractor_is_an_entity_extractor() -> None:
    assert isinstance(RuleBasedEntityExtractor(), EntityExtractor)
    assert isinstance(GLiNEREntityExtractor(), EntityExtractor)
    assert isinstance(HeuristicRelationExtractor(), RelationExtractor)


async def test_rule_based_label_filter_and_huge_input() -> None:
    only_dates = RuleBasedEntityExtractor(labels=["date"])
    found = await only_dates.extract("Ana flew to Rome on 3 June 2024")
    assert [(e.name, e.label) for e in found] == [("3 June 2024", "date")]
    started = time.perf_counter()
    await RuleBasedEntityExtractor().extract("Ana met Bob in Rome. " * 50_000)
    assert time.perf_counter() - started < 5


# --------------------------------------------------------------------------- GLiNER


async def test_gliner_constructs_with_no_arguments_and_loads_nothing() -> None:
    extractor = GLiNEREntityExtractor()
    assert not extractor.loaded
    assert extractor.threshold == 0.5


async def test_gliner_missing_weights_fail_fast_and_clearly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("SAGEWAI_GLINER_MODEL", raising=False)
    started = time.perf_counter()
    with pytest.raises(ModelNotAvailableError, match="SAGEWAI_GLINER_MODEL") as info:
        await GLiNEREntityExtractor(tmp_path / "absent").extract("Ana lives in Rome")
    assert "does not exist" in str(info.value)
    assert time.perf_counter() - started < 2
    monkeypatch.setenv("SAGEWAI_GLINER_MODEL", str(tmp_path / "also-absent"))
    with pytest.raises(ModelNotAvailableError, match="SAGEWAI_GLINER_MODEL"):
        await GLiNEREntityExtractor().extract("Ana lives in Rome")


def _no_model_anywhere(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """A machine with no GLiNER model: no variable, an empty home, an empty hub cache."""
    monkeypatch.delenv("SAGEWAI_GLINER_MODEL", raising=False)
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HF_HOME", str(home / "hf"))


async def test_gliner_default_without_a_model_says_in_one_line_how_to_provide_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _no_model_anywhere(monkeypatch, tmp_path)
    started = time.perf_counter()
    with pytest.raises(ModelNotAvailableError) as info:
        await GLiNEREntityExtractor().extract("Ana lives in Rome")
    message = str(info.value)
    assert "\n" not in message
    assert "~/.sagewai/models/gliner" in message
    assert "SAGEWAI_GLINER_MODEL" in message
    assert time.perf_counter() - started < 1  # found out before importing gliner or torch


async def test_the_graph_builder_falls_back_to_the_rules_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from sagewai.intelligence import ConversationGraphBuilder
    from sagewai.stores import InMemoryGraphStore

    _no_model_anywhere(monkeypatch, tmp_path)
    builder = ConversationGraphBuilder(
        graph_store=InMemoryGraphStore().for_project("p"), entity_extractor=GLiNEREntityExtractor()
    )
    with caplog.at_level("WARNING"):
        await builder.process_turn("Ana moved to Lisbon.")
        await builder.process_turn("Bob works at Initech.")
    names = {e.name for e in await builder.graph.entities()}
    assert {"Ana", "Lisbon", "Bob", "Initech"} <= names
    warnings = [r.getMessage() for r in caplog.records if "GLiNER" in r.getMessage()]
    assert len(warnings) == 1
    assert "SAGEWAI_GLINER_MODEL" in warnings[0]


def _minilm_backbone(folder: Path) -> Path:
    """An untrained BERT of MiniLM's shape with MiniLM's tokenizer: no weights downloaded."""
    from transformers import BertConfig

    BertConfig(
        vocab_size=30522,
        hidden_size=384,
        num_hidden_layers=6,
        num_attention_heads=12,
        intermediate_size=1536,
        max_position_embeddings=512,
    ).save_pretrained(folder)
    tokenizer = Path(sagewai.__file__).parent / "embeddings" / "data" / "tokenizer.json"
    shutil.copy(tokenizer, folder / "tokenizer.json")
    (folder / "tokenizer_config.json").write_text(
        json.dumps(
            {"tokenizer_class": "BertTokenizerFast", "do_lower_case": True, "model_max_length": 512}
        )
    )
    return folder


@pytest.mark.slow
async def test_gliner_untrained_model_from_config_runs_the_real_code_path(tmp_path: Path) -> None:
    """Outputs of an untrained model are meaningless; loading and predicting are real."""
    gliner = pytest.importorskip("gliner", reason='needs pip install "sagewai[gliner]"')
    if not (Path(sagewai.__file__).parent / "embeddings" / "data" / "tokenizer.json").is_file():
        pytest.skip("the packaged MiniLM tokenizer is not there")
    backbone = _minilm_backbone(tmp_path / "minilm")
    model = gliner.GLiNER.from_config(
        gliner.GLiNERConfig(model_name=str(backbone), max_len=128),
        backbone_from_pretrained=False,
    )
    saved = tmp_path / "gliner-untrained"
    model.save_pretrained(saved)

    extractor = GLiNEREntityExtractor(saved, labels=["person", "location"], threshold=0.0)
    # saved in the sagewai model folder, the default constructor finds it
    home = tmp_path / "home"
    shutil.copytree(saved, home / ".sagewai" / "models" / "gliner")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.delenv("SAGEWAI_GLINER_MODEL", raising=False)
        default = GLiNEREntityExtractor(labels=["person"], threshold=0.0)
        assert await default.extract("Ana moved to Lisbon.")
        assert default.loaded
    text = "Ana moved to Lisbon."
    found = await extractor.extract(text)
    assert extractor.loaded
    assert found, "threshold 0 keeps every scored span"
    for entity in found:
        assert entity.label in {"person", "location"}
        assert text[entity.start : entity.end] == entity.name
        assert 0.0 <= entity.score <= 1.0


# --------------------------------------------------------------------------- LLM


async def test_llm_entities_through_litellm_mock_response() -> None:
    pytest.importorskip("litellm", reason='needs pip install "sagewai[llm]"')
    answer = json.dumps(
        {
            "entities": [
                {"name": "Ana", "label": "person"},
                {"name": "lisbon", "label": "location"},
                {"name": "Atlantis", "label": "location"},
                {"name": "x", "label": "weird"},
            ]
        }
    )
    extractor = LLMEntityExtractor(completion_kwargs={"mock_response": answer})
    found = await extractor.extract("Ana moved to Lisbon.")
    # Names are located in the text (keeping its spelling); invented ones and bad labels drop.
    assert [(e.name, e.label, e.start) for e in found] == [
        ("Ana", "person", 0),
        ("Lisbon", "location", 13),
    ]


async def test_llm_failures_become_extraction_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    litellm = pytest.importorskip("litellm")

    async def down(**kwargs: Any) -> Any:
        raise litellm.exceptions.APIConnectionError(
            message="no network", llm_provider="openai", model="gpt-4o-mini"
        )

    monkeypatch.setattr(litellm, "acompletion", down)
    with pytest.raises(ExtractionError, match="no network"):
        await LLMEntityExtractor().extract("Ana moved to Lisbon.")


@pytest.mark.parametrize(
    "answer", ["", "no json here", '{"entities": "nope"}', "{broken", '["list"]']
)
def test_malformed_llm_answers_are_extraction_errors(answer: str) -> None:
    with pytest.raises(ExtractionError):
        parse_llm_entities(answer, "Ana", ["person"])


def test_llm_answer_inside_prose_is_read() -> None:
    answer = 'Sure! {"entities": [{"name": "Ana", "label": "PERSON", "score": 0.9}]} hope it helps'
    [ana] = parse_llm_entities(answer, "I am Ana.", ["person"])
    assert (ana.name, ana.label, ana.start, ana.score) == ("Ana", "person", 5, 0.9)


# --------------------------------------------------------------------------- relations


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I work at Google as a software engineer.",
            [("Ana", "works_at", "Google"), ("Ana", "works_as", "software engineer")],
        ),
        (
            "I moved to Lisbon and I prefer tea over coffee.",
            [
                ("Ana", "lives_in", "Lisbon"),
                ("Ana", "prefers", "tea"),
                ("Ana", "less_preferred", "coffee"),
            ],
        ),
        (
            "My sister Eva lives in Berlin.",
            [("Ana", "sibling_of", "Eva"), ("Eva", "lives_in", "Berlin")],
        ),
        (
            "Tom is my husband. I have a dog named Rex.",
            [("Ana", "spouse_of", "Tom"), ("Ana", "owns", "Rex")],
        ),
        (
            "I'm studying psychology at Stanford and I'm 32 years old.",
            [
                ("Ana", "studies_at", "Stanford"),
                ("Ana", "studies", "psychology"),
                ("Ana", "has_age", "32"),
            ],
        ),
        (
            "I use Python and vim. I hate meetings.",
            [("Ana", "uses", "Python"), ("Ana", "uses", "vim"), ("Ana", "dislikes", "meetings")],
        ),
        (
            "I'm from Sweden. I joined a local book club.",
            [("Ana", "is_from", "Sweden"), ("Ana", "member_of", "local book club")],
        ),
        (
            "Alice works for Acme Corp. I went to a pottery workshop.",
            [("Alice", "works_at", "Acme Corp"), ("Ana", "attended", "pottery workshop")],
        ),
        ("I love you! I like that. She works at Globex.", []),
    ],
)
async def test_heuristic_relations(text: str, expected: list[tuple[str, str, str]]) -> None:
    entities = await RuleBasedEntityExtractor().extract(text)
    found = await HeuristicRelationExtractor().extract(text, speaker="Ana", entities=entities)
    assert [(r.subject, r.predicate, r.object) for r in found] == expected
    assert all(r.predicate in PREDICATES for r in found)


async def test_first_person_without_speaker_is_marked() -> None:
    [rel] = await HeuristicRelationExtractor().extract("I live in Oslo.")
    assert (rel.subject, rel.subject_is_speaker) == (SPEAKER, True)


def test_predicate_vocabulary() -> None:
    assert relation_predicate("Moved to") == "lives_in"
    assert relation_predicate("works for") == "works_at"
    assert relation_predicate("sister") == "sibling_of"
    assert relation_predicate("plays chess with") == "plays_chess_with"
    assert relation_predicate("!!!") == "related_to"
    single = {name for name, p in PREDICATES.items() if p.single_valued}
    assert single == {
        "works_at",
        "works_as",
        "lives_in",
        "is_from",
        "studies_at",
        "spouse_of",
        "partner_of",
        "has_age",
        "managed_by",
        "on_team",
        "drives",
    }
    assert is_single_valued("moved to")
    assert not is_single_valued("likes")
