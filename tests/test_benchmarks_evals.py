"""``benchmarks/`` and ``evals/`` as packages: public imports only, no machine paths, no import
circles, the runners' arithmetic, the LongMemEval loader and the scoreboard's agent pass."""

from __future__ import annotations

import ast
import asyncio
import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import _runner
from evals import _scoreboard, longmemeval
from evals.agent_recall import Asked, Dialogue, Said
from evals.datasets import DATASETS, where_to_get
from sagewai.cli._main import main as sagewai_main
from sagewai.testing import FakeEmbedder, ScriptedLLM

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("benchmarks", "evals")
MACHINE_PATH = re.compile(r"(?<![\w.$])/(work|tmp|home)/")


def sources() -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def sagewai_imports(path: Path) -> Iterator[tuple[int, str, str | None]]:
    """(line, module, name) of every import of sagewai in a file (name None for ``import x``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "sagewai":
                    yield node.lineno, alias.name, None
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.split(".")[0] == "sagewai"
        ):
            for alias in node.names:
                yield node.lineno, node.module, alias.name


def test_the_packages_import_only_public_sagewai_names() -> None:
    private = []
    for path in sources():
        for line, module, name in sagewai_imports(path):
            where = f"{path.relative_to(ROOT)}:{line}"
            if any(part.startswith("_") for part in module.split(".")):
                private.append(f"{where} imports module {module}")
                continue
            if name is None:
                continue
            public = getattr(importlib.import_module(module), "__all__", ())
            if name not in public and not _is_public_package(module, name):
                private.append(f"{where} imports {name} from {module} (not in its __all__)")
    assert private == []


def _is_public_package(module: str, name: str) -> bool:
    """``from sagewai import agent`` style: a public subpackage."""
    if name.startswith("_"):
        return False
    try:
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return False
    return True


def test_no_path_hacks_and_no_machine_paths() -> None:
    found = []
    for path in [*sources(), *(ROOT / p / "README.md" for p in PACKAGES)]:
        if not path.is_file():
            continue
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "sys.path.insert" in text or "sys.path.append" in text:
                found.append(f"{path.relative_to(ROOT)}:{number}: {text.strip()}")
            if MACHINE_PATH.search(text):
                found.append(f"{path.relative_to(ROOT)}:{number}: {text.strip()}")
    assert found == []


def _module_graph(package: str) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted((ROOT / package).glob("*.py")):
        name = f"{package}.{path.stem}"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        targets: set[str] = set()
        for node in tree.body:  # module level only: a function's late import is no circle
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module in PACKAGES:
                    targets |= {f"{node.module}.{a.name}" for a in node.names}
                elif node.module.split(".")[0] in PACKAGES:
                    targets.add(node.module)
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name.split(".")[0] in PACKAGES}
        graph[name] = targets
    return graph


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circles(package: str) -> None:
    graph = _module_graph(package)
    state: dict[str, int] = {}
    circles: list[str] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                circles.append(" -> ".join([*trail[trail.index(target) :], target]))
            elif target in graph and state.get(target) is None:
                visit(target, [*trail, target])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [node])
    assert circles == []


def test_evals_never_import_benchmarks() -> None:
    graph = _module_graph("evals")
    assert [
        m for m, targets in graph.items() if any(t.startswith("benchmarks") for t in targets)
    ] == []


# ---------------------------------------------------------------------------------- benchmarks


def test_every_scenario_module_exists_and_takes_out() -> None:
    for scenario in _runner.SCENARIOS:
        text = (ROOT / "benchmarks" / f"{scenario.module}.py").read_text(encoding="utf-8")
        assert '"--out"' in text or scenario.needs == ("kept",), scenario.name


def test_the_baseline_covers_every_scenario_the_quick_profile_runs_alone() -> None:
    baseline = json.loads((ROOT / "benchmarks" / "baseline.json").read_text(encoding="utf-8"))
    assert baseline["profile"] == "quick"
    runnable = {s.name for s in _runner.SCENARIOS if not s.needs}
    assert runnable <= set(baseline["scenarios"])
    assert all(baseline["scenarios"][name] for name in runnable)


def test_figures_keep_measurements_only() -> None:
    report = {
        "machine": {"cpus": 2, "load_ms": 3},
        "sizes": [{"n": 1000, "search": {"p50_ms": 1.5, "p95_ms": 4.0}, "ok": True}],
        "add_per_s": 900,
        "label": "x",
    }
    assert _runner.figures(report) == {
        "sizes.0.search.p50_ms": 1.5,
        "sizes.0.search.p95_ms": 4.0,
        "add_per_s": 900.0,
    }


def test_a_change_is_better_or_worse_by_the_figure_kind() -> None:
    assert _runner.change("search.p95_ms", 2.0, 1.0) == (1.0, False)
    assert _runner.change("search.p95_ms", 0.5, 1.0) == (-0.5, True)
    assert _runner.change("add_per_s", 500.0, 1000.0) == (-0.5, False)
    assert _runner.change("add_per_s", 0.0, 0.0) is None


def test_an_unknown_scenario_is_refused_with_the_known_names() -> None:
    with pytest.raises(SystemExit, match="known: vector"):
        _runner.select(["no-such-scenario"])


def test_the_runner_runs_a_scenario_and_prints_it_beside_the_baseline(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"scenarios": {"jsonparse": {}}}), encoding="utf-8")
    out = tmp_path / "run.json"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "run", "jsonparse", "--json", str(out),
         "--baseline", str(baseline), "--results", str(tmp_path / "results")],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["outcomes"][0]["status"] == "ok"
    assert report["scenarios"]["jsonparse"]
    assert "(not in baseline)" in done.stdout
    assert (tmp_path / "results" / "jsonparse_bench.json").is_file()


# ---------------------------------------------------------------------------------- evals


def test_longmemeval_turn_evidence_and_abstentions(tmp_path: Path) -> None:
    items = [
        {
            "question_id": "q1",
            "question_type": "single-session-user",
            "question": "Where did I park?",
            "answer": "Level 3",
            "haystack_session_ids": ["s1", "s2"],
            "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 10:00"],
            "haystack_sessions": [
                [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}],
                [{"role": "user", "content": "I parked on level 3", "has_answer": True}],
            ],
        },
        {
            "question_id": "q2_abs",
            "question_type": "single-session-user",
            "question": "What is my cat called?",
            "answer": "not mentioned",
            "haystack_session_ids": ["s9"],
            "haystack_sessions": [[{"role": "user", "content": "I like dogs", "has_answer": True}]],
        },
    ]
    path = tmp_path / "longmemeval_s.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    dialogues = longmemeval.load_dialogues(path)
    assert [d.name for d in dialogues] == ["q1"]
    (dialogue,) = dialogues
    assert [m.message_id for m in dialogue.messages] == ["s1:0", "s1:1", "s2:0"]
    assert dialogue.questions[0].evidence == ("s2:0",)
    assert dialogue.questions[0].answer == "Level 3"
    assert DATASETS["longmemeval"].find(tmp_path.parent) is None


def test_longmemeval_refuses_a_file_that_is_not_its_format(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"question_id": "q"}), encoding="utf-8")
    with pytest.raises(SystemExit, match="LongMemEval"):
        longmemeval.load_dialogues(path)


def _dialogue() -> Dialogue:
    said = [
        Said("d1", "s1", 0, "user", "My sister Maya moved to Lisbon in May."),
        Said("d2", "s1", 1, "assistant", "That sounds like a big change."),
        Said("d3", "s2", 0, "user", "I adopted a rescue dog called Biscuit."),
    ]
    asked = (
        Asked("Where did Maya move?", "single-hop", ("d1",), "Lisbon"),
        Asked("What is the dog called?", "single-hop", ("d3",), "Biscuit"),
    )
    return Dialogue("toy", "one", tuple(said), asked)


def test_the_agent_pass_measures_prompt_evidence_latencies_and_judged_answers() -> None:
    figures = _scoreboard.AgentFigures()
    judge = ScriptedLLM(["CORRECT", "WRONG"])
    asyncio.run(
        _scoreboard.agent_pass(
            _dialogue(),
            FakeEmbedder(dimension=64),
            figures,
            answerer=lambda: ScriptedLLM(["Lisbon.", "I don't know."]),
            judge=judge,
        )
    )
    assert len(figures.add_ms) == 3
    assert len(figures.search_ms) == 2
    assert len(figures.evidence) == 2
    assert all(0.0 <= share <= 1.0 for share in figures.evidence)
    assert max(figures.evidence) == 1.0  # a three-message memory is shown whole
    assert all(tokens > 0 for tokens in figures.tokens)
    assert figures.verdicts == [True, False]
    prompt = judge.calls[0].prompt
    assert "Where did Maya move?" in prompt
    assert "Lisbon" in prompt
    row = _scoreboard.fill(_scoreboard.Row("toy"), figures)
    assert row.accuracy == 0.5
    assert row.judged == 2
    assert row.add_p95_ms is not None
    assert row.add_p95_ms >= row.add_p50_ms


def test_without_a_model_nothing_is_judged() -> None:
    figures = _scoreboard.AgentFigures()
    asyncio.run(_scoreboard.agent_pass(_dialogue(), FakeEmbedder(dimension=64), figures))
    assert figures.verdicts == []
    assert _scoreboard.fill(_scoreboard.Row("toy"), figures).accuracy is None


def test_the_judge_reads_its_first_word() -> None:
    def verdict(text: str) -> bool:
        return asyncio.run(_scoreboard.judge_answer(ScriptedLLM([text]), "q", "a", "b"))

    assert verdict("Correct.") is True
    assert verdict("WRONG: it says Paris") is False
    assert verdict("") is False


def test_the_published_prompts_are_the_ones_used() -> None:
    prompts = ROOT / "evals" / "prompts"
    assert (prompts / "answer.md").read_text(encoding="utf-8").strip() == _scoreboard.ANSWER_PROMPT
    judge = (prompts / "judge.md").read_text(encoding="utf-8")
    assert {"{question}", "{reference}", "{answer}"} <= set(re.findall(r"\{\w+\}", judge))


def test_the_markdown_table_has_one_line_per_data_set() -> None:
    row = _scoreboard.Row("locomo", 3, 383, 0.656, 0.760, 0.5, 812.0, 1.0, 2.0, 3.0, 4.0)
    board = _scoreboard.scoreboard([row], {"extraction_eval": {"save_f1": 0.9}}, model=None)
    table = _scoreboard.markdown(board)
    assert "| locomo | 3 | 383 | 0.656 | 0.760 | 0.500 | 812.0 |" in table
    assert "accuracy: not measured" in table
    assert "- extraction_eval: save_f1 0.900" in table


def test_evals_without_data_says_where_to_get_it_in_one_line(tmp_path: Path) -> None:
    env = {"PATH": "", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "evals", "run"], cwd=ROOT, env=env, capture_output=True,
        text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1
    assert "snap-research/locomo" in lines[0]
    assert "BEAM" in lines[0]
    assert where_to_get(("beam",)).startswith("BEAM: https://github.com/mohammadtavakoli78/BEAM")


def test_sagewai_eval_without_data_says_where_to_get_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.delenv("SAGEWAI_EVAL_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    assert sagewai_main(["eval", "extraction"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "--data" in err
    assert "SAGEWAI_EVAL_DATA" in err
    assert "snap-research/locomo" in err


def test_sagewai_eval_reads_the_data_folder_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    labelled = ROOT / "evals" / "data"
    monkeypatch.setenv("SAGEWAI_EVAL_DATA", str(labelled))
    out = tmp_path / "eval.json"
    assert (
        sagewai_main(
            ["eval", "extraction", "--split", "dev", "--throughput-seconds", "0", "--out", str(out)]
        )
        == 0
    )
    assert json.loads(out.read_text(encoding="utf-8"))["data"].endswith("extraction_labelled.jsonl")


def test_search_stages_names_functions_that_exist() -> None:
    from benchmarks.search_stages import STAGES

    for label, ending, name in STAGES:
        if ending == "~":
            continue
        defined = [
            path
            for path in (ROOT / "sagewai").rglob(f"*{ending}")
            if re.search(rf"^\s*def {name}\(", path.read_text(encoding="utf-8"), re.M)
        ]
        assert defined, f"{label}: no def {name} in a sagewai file ending {ending}"


def test_quality_headlines_pick_the_figures_shown() -> None:
    realistic = {"merge_precision": 1.0, "merge_recall": 0.97, "contradiction_recall": 1.0,
                 "wrong_merges": 0, "facts": 2000}  # fmt: skip
    assert _scoreboard.headline("consolidation_realistic", realistic) == {
        "merge_precision": 1.0, "merge_recall": 0.97, "contradiction_recall": 1.0,
        "wrong_merges": 0,
    }  # fmt: skip
    pairs = {"merge": {"precision": 0.9, "recall": 0.8, "expected": 10},
             "supersede": {"precision": 1.0, "recall": 0.5}}  # fmt: skip
    assert _scoreboard.headline("consolidation_eval", pairs) == {
        "merge_precision": 0.9, "merge_recall": 0.8,
        "supersede_precision": 1.0, "supersede_recall": 0.5,
    }  # fmt: skip
