"""Isolation and hostile input through a real ``sagewai serve`` process, embedded and PostgreSQL.

* A generated run of 1,200 random calls by two projects x two users (and the project keys):
  every response is checked, and at the end every tenant's records are read back. Not one
  foreign record may be read, written or deleted.
* The hostile values of the engine's suites (``tests/hostile_values.py``) through every field
  of every endpoint: never a 500, and every refusal is a problem document.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.hostile_values import EXTREME_NUMBERS, EXTREME_TIMES, NASTY_TEXT
from tests.server_support import ServerProcess, Store

PROJECTS = ("atlas", "boreas")
USERS = ("ann", "ben")
CALLS = 1_200
SUBJECTS = ("Tom", "Ria", "Oslo")


@dataclass
class Tenant:
    """One (project, user) with its user-bound key, and what it wrote."""

    project: str
    user: str
    token: str
    facts: dict[str, str] = field(default_factory=dict)
    """id -> content of the facts it stored and did not remove itself."""
    gone: set[str] = field(default_factory=set)
    forgot: set[str] = field(default_factory=set)


@pytest.fixture(
    scope="module", params=["embedded", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServerProcess, list[Tenant], dict[str, str]]]:
    folder = tmp_path_factory.mktemp("isolation")
    if request.param == "postgres":
        store = Store.postgres(request.getfixturevalue("postgres_dsn"), folder)
    else:
        store = Store.embedded(folder)
    specs: dict[str, dict[str, Any]] = {}
    for project in PROJECTS:
        specs[project] = {"project_id": project, "role": "admin", "org_id": f"org-{project}"}
        for user in USERS:
            specs[f"{project}/{user}"] = {
                "project_id": project,
                "role": "write",
                "org_id": f"org-{project}",
                "user_id": user,
            }
    tokens = store.make_keys(specs)
    server = ServerProcess(
        store, "--rate-limit", "0", "--key-cache-seconds", "60", log=folder / "server.log"
    )
    tenants = [Tenant(p, u, tokens[f"{p}/{u}"]) for p in PROJECTS for u in USERS]
    try:
        yield server, tenants, tokens
    finally:
        server.stop()
        store.drop()


def _owned(tenant: Tenant, record: dict[str, Any]) -> bool:
    """A record a tenant may see: of its project, and its own or project-wide."""
    return record["project_id"] == tenant.project and record["user_id"] in (None, tenant.user)


def _check_records(tenant: Tenant, records: list[dict[str, Any]], what: str) -> None:
    for record in records:
        assert _owned(tenant, record), f"{what}: {tenant.project}/{tenant.user} got {record}"


def test_a_thousand_random_calls_never_cross_a_project_or_a_user(
    world: tuple[ServerProcess, list[Tenant], dict[str, str]],
) -> None:
    server, tenants, tokens = world
    rng = random.Random(40)
    clients = {id(t): server.client(t.token) for t in tenants}
    checked = 0
    try:
        for step in range(CALLS):
            tenant = rng.choice(tenants)
            client = clients[id(tenant)]
            others = [t for t in tenants if t is not tenant]
            foreign_ids = [i for t in others for i in t.facts]
            own_ids = list(tenant.facts)
            operation = rng.choice(
                [
                    "add",
                    "add",
                    "remember",
                    "search",
                    "search",
                    "list",
                    "get_own",
                    "get_foreign",
                    "history_foreign",
                    "delete_foreign",
                    "revert_foreign",
                    "forget_foreign_id",
                    "forget_subject",
                    "delete_own",
                    "name_other",
                    "provenance_foreign",
                ]
            )
            tag = f"{tenant.project}-{tenant.user}"
            if operation == "add":
                subject = rng.choice(SUBJECTS)
                content = f"{subject} note {step} of {tag} zebra{rng.randrange(5)}"
                response = client.post(
                    "/v1/facts", json={"facts": [{"content": content, "subject": subject}]}
                )
                assert response.status_code == 201, response.text
                (stored,) = response.json()["facts"]
                _check_records(tenant, [stored], "add")
                tenant.facts[stored["id"]] = content
            elif operation == "remember":
                text = f"I prefer {rng.choice(['tea', 'coffee'])} says {tag} at step {step}."
                response = client.post(
                    "/v1/memories",
                    json={"messages": [{"content": text}], "session_id": f"s{step % 3}"},
                )
                assert response.status_code == 200, response.text
                assert response.json()["user_id"] == tenant.user
            elif operation == "search":
                query = rng.choice(["zebra note", "prefer tea", "Tom", "Oslo zebra3", tag])
                response = client.post("/v1/search", json={"query": query, "top_k": 20})
                assert response.status_code == 200, response.text
                for hit in response.json()["results"]:
                    _check_records(tenant, [hit["fact"], *hit["related"]], "search")
            elif operation == "list":
                response = client.get("/v1/facts", params={"limit": 200})
                assert response.status_code == 200, response.text
                _check_records(tenant, response.json()["facts"], "list")
            elif operation == "get_own" and own_ids:
                fact_id = rng.choice(own_ids)
                response = client.get(f"/v1/facts/{fact_id}")
                assert response.status_code == 200, response.text
                assert response.json()["content"] == tenant.facts[fact_id]
            elif operation.endswith("_foreign") and foreign_ids:
                fact_id = rng.choice(foreign_ids)
                if operation == "get_foreign":
                    response = client.get(f"/v1/facts/{fact_id}")
                elif operation == "history_foreign":
                    response = client.get(f"/v1/facts/{fact_id}/history")
                elif operation == "provenance_foreign":
                    response = client.get(f"/v1/facts/{fact_id}/provenance")
                elif operation == "delete_foreign":
                    response = client.delete(f"/v1/facts/{fact_id}")
                elif operation == "revert_foreign":
                    response = client.post(f"/v1/facts/{fact_id}/changes/{fact_id}/revert")
                else:
                    response = client.post("/v1/forget", json={"fact_id": fact_id})
                assert response.status_code in (403, 404), (operation, response.text)
            elif operation == "forget_subject":
                subject = rng.choice(SUBJECTS)
                dry = rng.random() < 0.5
                response = client.post("/v1/forget", json={"subject": subject, "dry_run": dry})
                assert response.status_code == 200, response.text
                _check_records(tenant, response.json()["records"], "forget")
                if not dry:
                    tenant.forgot.add(subject)
                    for fact_id, content in list(tenant.facts.items()):
                        if content.startswith(subject + " "):
                            del tenant.facts[fact_id]
                            tenant.gone.add(fact_id)
            elif operation == "delete_own" and own_ids:
                fact_id = rng.choice(own_ids)
                response = client.delete(f"/v1/facts/{fact_id}")
                assert response.status_code == 200, response.text
                tenant.gone.add(fact_id)
                del tenant.facts[fact_id]
            elif operation == "name_other":
                other = rng.choice(others)
                if other.project != tenant.project:
                    response = client.post(
                        "/v1/search", json={"query": "zebra", "project": other.project}
                    )
                else:
                    response = client.get("/v1/facts", params={"user_id": other.user})
                assert response.status_code == 403, response.text
            else:
                continue
            checked += 1
        assert checked >= 1_000
        # Every tenant's records are all there, unchanged: nothing foreign wrote or deleted them.
        for tenant in tenants:
            with server.client(tokens[tenant.project]) as admin:
                seen: dict[str, dict[str, Any]] = {}
                cursor = None
                while True:
                    params: dict[str, Any] = {"user_id": tenant.user, "limit": 1000}
                    if cursor:
                        params["cursor"] = cursor
                    page = admin.get("/v1/facts", params=params).json()
                    seen.update({f["id"]: f for f in page["facts"]})
                    cursor = page["next_cursor"]
                    if not cursor:
                        break
            for fact_id, content in tenant.facts.items():
                assert fact_id in seen, f"{tenant.project}/{tenant.user} lost {content}"
                assert seen[fact_id]["content"] == content
                assert seen[fact_id]["status"] == "active"
            assert not tenant.gone & set(seen)
            assert all(f["project_id"] == tenant.project for f in seen.values())
    finally:
        for client in clients.values():
            client.close()


# ---------------------------------------------------------------------- hostile input

HOSTILE_IDS = ["", " ", "s\x01", "s\ud800", "a" * 300, "p:a", "\x1f", "../x", "%00", "?x=1"]
HOSTILE_VALUES: list[Any] = [
    *NASTY_TEXT,
    *HOSTILE_IDS,
    *(t.isoformat() for t in EXTREME_TIMES),
    *EXTREME_NUMBERS,
    None,
    True,
    [],
    {},
    [1, 2],
    {"session_id": "s1"},
    "2024-01-01",
    "yesterday",
    -1,
    10**30,
]

BODIES: dict[str, dict[str, Any]] = {
    "/v1/facts": {"facts": [{"content": "hostile base", "subject": "Zed", "tags": ["t"]}]},
    "/v1/search": {"query": "hostile base", "top_k": 3},
    "/v1/memories": {"messages": [{"content": "I like hostile tests."}], "session_id": "h1"},
    "/v1/forget": {"subject": "Zed", "dry_run": True},
    "/v1/consolidations": {"dry_run": True},
}
NESTED = {"/v1/facts": ("facts", 0), "/v1/memories": ("messages", 0)}
EXTRA_FIELDS = {
    "/v1/facts": [
        "content",
        "fact_type",
        "scope",
        "user_id",
        "session_id",
        "subject",
        "predicate",
        "object",
        "confidence",
        "tags",
        "exact_values",
        "metadata",
        "valid_from",
    ],
    "/v1/search": [
        "query",
        "top_k",
        "scope",
        "user_id",
        "session_id",
        "as_of",
        "fact_types",
        "kinds",
        "tags",
        "statuses",
        "graph_hops",
        "min_score",
        "project",
    ],
    "/v1/memories": ["role", "content", "id"],
    "/v1/forget": ["fact_id", "subject", "session_id", "user_id", "dry_run", "project"],
    "/v1/consolidations": ["scope", "user_id", "session_id", "dry_run", "incremental", "strategy"],
}
QUERY_FIELDS = [
    "scope",
    "user_id",
    "session_id",
    "subject",
    "status",
    "fact_type",
    "kind",
    "tag",
    "created_after",
    "created_before",
    "q",
    "limit",
    "cursor",
    "project",
]


def _path_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


def _assert_answer(response: httpx.Response, what: str) -> None:
    assert response.status_code < 500, f"{what}: {response.status_code} {response.text[:300]}"
    if response.status_code >= 400:
        assert response.headers["content-type"] == "application/problem+json", what
        body = response.json()
        assert body["type"].startswith("urn:sagewai:error:"), what


def test_hostile_values_through_every_endpoint_never_give_a_500(
    world: tuple[ServerProcess, list[Tenant], dict[str, str]],
) -> None:
    server, tenants, tokens = world
    calls = 0
    with server.client(tokens[PROJECTS[0]]) as admin, server.client(tenants[0].token) as user:
        for client in (admin, user):
            # Bodies and queries once per kind of key: a user's key on odd positions.
            for path, base in BODIES.items():
                for name in EXTRA_FIELDS[path]:
                    for value in HOSTILE_VALUES[client is user :: 2]:
                        body = json.loads(json.dumps(base))
                        target = body
                        if path in NESTED and name != "project":
                            key, index = NESTED[path]
                            target = body[key][index]
                        target[name] = value
                        raw = json.dumps(body, allow_nan=True).encode()
                        response = client.post(
                            path, content=raw, headers={"content-type": "application/json"}
                        )
                        _assert_answer(response, f"{path} {name}={value!r:.60}")
                        calls += 1
            for name in QUERY_FIELDS:
                for value in HOSTILE_VALUES[client is user :: 2]:
                    raw_query = f"{name}={_path_value(value)}"
                    if len(raw_query) > 4_000:
                        continue
                    for path in ("/v1/facts", "/v1/profile"):
                        response = client.get(f"{path}?{raw_query}")
                        _assert_answer(response, f"{path}?{name}={value!r:.60}")
                        calls += 1
            for value in HOSTILE_VALUES:
                piece = _path_value(value)
                if len(piece) > 4_000:  # longer than a client sends in a URL (tested in bodies)
                    continue
                for method, path in (
                    ("GET", f"/v1/facts/{piece}"),
                    ("GET", f"/v1/facts/{piece}/history"),
                    ("GET", f"/v1/facts/{piece}/provenance"),
                    ("DELETE", f"/v1/facts/{piece}"),
                    ("POST", f"/v1/facts/{piece}/changes/{piece}/revert"),
                    ("GET", f"/v1/consolidations/{piece}"),
                    ("GET", f"/v1/consolidations/{piece}/report"),
                    ("GET", f"/v1/graph?format={piece}"),
                ):
                    response = client.request(method, path)
                    _assert_answer(response, f"{method} {path[:80]}")
                    calls += 1
            for header in ("Bearer \ud800".encode("utf-8", "surrogatepass"), b"Bearer \xff\xfe"):
                response = httpx.get(server.url + "/v1/me", headers=[(b"authorization", header)])
                _assert_answer(response, "a header that is not text")
                calls += 1
    assert calls > 1_000
