"""``sagewai serve`` through a real HTTP client against a real server process on 127.0.0.1, on
the embedded default and on PostgreSQL: keys and roles (401, 403), every endpoint, problem
details, rate limits, CORS, body limits and the dashboard's assets."""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sagewai.server import Role, ServerSettings, new_key
from sagewai.server._keys import parse_token
from sagewai.server._ratelimit import RateLimiter
from tests.server_support import ServerProcess, Store

P1, P2 = "shop", "bank"
KEYS: dict[str, dict[str, Any]] = {
    "admin": {"project_id": P1, "role": "admin", "org_id": "acme"},
    "reader": {"project_id": P1, "role": "read", "org_id": "acme"},
    "writer": {"project_id": P1, "role": "write", "org_id": "acme"},
    "alice": {"project_id": P1, "role": "write", "org_id": "acme", "user_id": "alice"},
    "bob": {"project_id": P1, "role": "write", "org_id": "acme", "user_id": "bob"},
    "alice_admin": {"project_id": P1, "role": "admin", "org_id": "acme", "user_id": "alice"},
    "other": {"project_id": P2, "role": "admin", "org_id": "globex"},
    "revoked": {"project_id": P1, "role": "admin", "org_id": "acme"},
}


@pytest.fixture(
    scope="module", params=["embedded", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ServerProcess, dict[str, str]]]:
    folder = tmp_path_factory.mktemp("served")
    if request.param == "postgres":
        store = Store.postgres(request.getfixturevalue("postgres_dsn"), folder)
    else:
        store = Store.embedded(folder)
    tokens = store.make_keys(KEYS)
    server = ServerProcess(
        store, "--rate-limit", "0", "--key-cache-seconds", "0", log=folder / "server.log"
    )
    try:
        with server.client(tokens["admin"]) as admin:
            key_id = parse_token(tokens["revoked"])[0]
            assert admin.get("/v1/me").json()["id"] != key_id
        _revoke(store, tokens["revoked"])
        yield server, tokens
    finally:
        server.stop()
        store.drop()


def _revoke(store: Store, token: str) -> None:
    import asyncio

    from sagewai.server import open_state

    async def revoke() -> None:
        state = open_state(store.location, schema=store.schema)
        await state.open()
        await state.revoke(parse_token(token)[0])
        await state.close()

    asyncio.run(revoke())


def problem_of(response: httpx.Response, status: int, error: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert body["type"] == f"urn:sagewai:error:{error}", body
    assert body["status"] == status
    assert body["error"] == error
    return body


ENDPOINTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "/v1/me", None),
    ("GET", "/v1/projects", None),
    ("GET", "/v1/facts", None),
    ("POST", "/v1/facts", {"facts": [{"content": "x"}]}),
    ("GET", "/v1/facts/f1", None),
    ("GET", "/v1/facts/f1/history", None),
    ("GET", "/v1/facts/f1/provenance", None),
    ("POST", "/v1/facts/f1/changes/c1/revert", None),
    ("DELETE", "/v1/facts/f1", None),
    ("POST", "/v1/forget", {"subject": "x", "dry_run": True}),
    ("POST", "/v1/search", {"query": "x"}),
    ("POST", "/v1/memories", {"messages": [{"content": "x"}]}),
    ("GET", "/v1/profile?user_id=alice", None),
    ("GET", "/v1/stats", None),
    ("GET", "/v1/graph", None),
    ("POST", "/v1/consolidations", {"dry_run": True}),
    ("GET", "/v1/consolidations", None),
    ("GET", "/v1/consolidations/r1", None),
    ("GET", "/v1/consolidations/r1/report", None),
    ("GET", "/v1/export", None),
]


def call(client: httpx.Client, method: str, path: str, body: Any = None) -> httpx.Response:
    if body is None:
        return client.request(method, path)
    return client.request(method, path, json=body)


# ---------------------------------------------------------------------- without the server


def test_roles_are_ordered_and_tokens_are_checked() -> None:
    assert [r.value for r in Role] == ["read", "write", "admin"]
    assert Role.WRITE.allows(Role.READ)
    assert not Role.WRITE.allows(Role.ADMIN)
    made = new_key(project_id="p", role="admin")
    assert made.token not in repr(made.key)
    assert made.key.secret_hash not in made.key.public()
    from sagewai.errors import AuthenticationError, InvalidInputError

    for bad in ("", "sgw", "sgw_x_y", "Bearer x", made.token[:-1], "abc_" + made.token[4:]):
        with pytest.raises(AuthenticationError):
            parse_token(bad)
    for spec in ({"project_id": "", "role": "read"}, {"project_id": "p", "role": "root"}):
        with pytest.raises(InvalidInputError):
            new_key(**spec)


def test_the_rate_limiter_is_a_token_bucket_per_key() -> None:
    from sagewai.errors import RateLimitedError

    limiter = RateLimiter(rate=2.0, burst=3)
    for _ in range(3):
        limiter.check("a", now=0.0)
    with pytest.raises(RateLimitedError) as refused:
        limiter.check("a", now=0.0)
    assert refused.value.retry_after == pytest.approx(0.5)
    limiter.check("b", now=0.0)  # another key has its own bucket
    limiter.check("a", now=0.5)
    RateLimiter(rate=0, burst=1).check("a")  # 0: no limit
    assert ServerSettings().cors_origins == ()


# ---------------------------------------------------------------------- health and the schema


def test_health_readiness_and_the_openapi_schema(
    served: tuple[ServerProcess, dict[str, str]],
) -> None:
    server, _ = served
    with server.client() as anonymous:
        assert anonymous.get("/v1/health").json()["status"] == "ok"
        assert anonymous.get("/v1/ready").json()["status"] == "ok"
        schema = anonymous.get("/v1/openapi.json").json()
        problem_of(anonymous.get("/v1/nowhere"), 404, "NotFound")
        assert anonymous.get("/docs").status_code == 404  # no CDN-loaded docs page
    assert schema["openapi"].startswith("3.1")
    assert all(path.startswith("/v1/") for path in schema["paths"])
    assert {"/v1/search", "/v1/facts", "/v1/memories", "/v1/forget"} <= set(schema["paths"])


# ---------------------------------------------------------------------- keys and roles


def test_every_endpoint_needs_a_valid_key(served: tuple[ServerProcess, dict[str, str]]) -> None:
    server, tokens = served
    unknown = new_key(project_id=P1, role="admin").token
    headers = [
        {},
        {"authorization": "Bearer nonsense"},
        {"authorization": "Basic dXNlcjpwYXNz"},
        {"authorization": f"Bearer {unknown}"},
        {"x-api-key": unknown},
        {"authorization": f"Bearer {tokens['revoked']}"},
        {"authorization": f"Bearer {tokens['admin'][:-2]}xx"},
    ]
    for header in headers:
        with server.client(**header) as client:
            for method, path, body in ENDPOINTS:
                response = call(client, method, path, body)
                problem_of(response, 401, "AuthenticationError")
                assert response.headers["www-authenticate"].startswith("Bearer")
    with server.client(**{"x-api-key": tokens["reader"]}) as client:
        assert client.get("/v1/me").json()["role"] == "read"


def test_roles_decide_what_a_key_may_do(served: tuple[ServerProcess, dict[str, str]]) -> None:
    server, tokens = served
    writes = [
        e for e in ENDPOINTS if e[0] != "GET" and e[1] not in ("/v1/consolidations", "/v1/search")
    ]
    with server.client(tokens["reader"]) as reader:
        for method, path, body in [
            *writes,
            ("POST", "/v1/consolidations", {}),
            ("GET", "/v1/export", None),
        ]:
            problem_of(call(reader, method, path, body), 403, "PermissionDeniedError")
        assert reader.get("/v1/facts").status_code == 200
    with server.client(tokens["writer"]) as writer:
        problem_of(writer.post("/v1/consolidations", json={}), 403, "PermissionDeniedError")
        problem_of(writer.get("/v1/export"), 403, "PermissionDeniedError")
        assert (
            writer.post("/v1/facts", json={"facts": [{"content": "roles note"}]}).status_code == 201
        )


def test_a_request_naming_another_project_or_user_is_refused(
    served: tuple[ServerProcess, dict[str, str]],
) -> None:
    server, tokens = served
    with server.client(tokens["alice"]) as alice:
        for method, path, body in [
            ("POST", "/v1/search", {"query": "tea", "project": P2}),
            ("POST", "/v1/search", {"query": "tea", "user_id": "bob"}),
            ("POST", "/v1/facts", {"facts": [{"content": "x", "user_id": "bob"}]}),
            ("POST", "/v1/facts", {"facts": [{"content": "x"}], "project": P2}),
            ("POST", "/v1/facts", {"facts": [{"content": "x", "scope": "project"}]}),
            ("POST", "/v1/memories", {"messages": [{"content": "x"}], "user_id": "bob"}),
            ("POST", "/v1/forget", {"user_id": "bob", "dry_run": True}),
            ("GET", f"/v1/facts?project={P2}", None),
            ("GET", "/v1/facts?user_id=bob", None),
            ("GET", "/v1/profile?user_id=bob", None),
            ("GET", "/v1/graph", None),
            ("GET", "/v1/stats", None),
        ]:
            problem_of(call(alice, method, path, body), 403, "PermissionDeniedError")
    with server.client(tokens["alice_admin"]) as alice_admin:
        problem_of(alice_admin.get("/v1/export"), 403, "PermissionDeniedError")
    with server.client(tokens["other"]) as other:
        problem_of(other.get(f"/v1/facts?project={P1}"), 403, "PermissionDeniedError")


# ---------------------------------------------------------------------- memory


def test_remember_search_provenance_revert_and_history(
    served: tuple[ServerProcess, dict[str, str]],
) -> None:
    server, tokens = served
    with server.client(tokens["alice"]) as alice, server.client(tokens["bob"]) as bob:
        said = alice.post(
            "/v1/memories",
            json={"messages": [{"content": "I live in Lisbon."}], "session_id": "move-1"},
        ).json()
        assert said["user_id"] == "alice"
        assert said["extracted"]
        alice.post(
            "/v1/memories",
            json={"messages": [{"content": "I moved to Porto last week."}], "session_id": "move-2"},
        )
        found = alice.post("/v1/search", json={"query": "where does the user live", "top_k": 10})
        results = found.json()["results"]
        assert results
        assert all(r["fact"]["user_id"] in (None, "alice") for r in results)
        assert {r["standing"] for r in results} <= {"current", "changed", "flagged", "archived"}
        old = next(
            f
            for f in alice.get("/v1/facts", params={"kind": "fact", "status": "superseded"}).json()[
                "facts"
            ]
            if "Lisbon" in f["content"]
        )
        why = alice.get(f"/v1/facts/{old['id']}/provenance").json()
        assert why["sources"][0]["extractor"] == "rules"
        assert [m["content"] for m in why["messages"]] == ["I live in Lisbon."]
        assert "Porto" in why["successor"]["content"]
        change = next(c for c in why["changes"] if c["action"] == "superseded")
        problem_of(
            bob.post(f"/v1/facts/{old['id']}/changes/{change['id']}/revert"),
            404,
            "FactNotFoundError",
        )
        restored = alice.post(f"/v1/facts/{old['id']}/changes/{change['id']}/revert")
        assert restored.status_code == 200
        assert restored.json()["status"] == "active"
        problem_of(
            alice.post(f"/v1/facts/{old['id']}/changes/not-a-change/revert"),
            422,
            "InvalidInputError",
        )
        actions = [
            c["action"] for c in alice.get(f"/v1/facts/{old['id']}/history").json()["changes"]
        ]
        assert actions[0] == "created"
        assert actions[-1] == "restored"
        past = alice.post("/v1/search", json={"query": "Lisbon", "as_of": "2000-01-01T00:00:00Z"})
        assert past.json()["results"] == []


def test_a_users_key_reads_and_changes_its_own_records_only(
    served: tuple[ServerProcess, dict[str, str]],
) -> None:
    server, tokens = served
    with (
        server.client(tokens["alice"]) as alice,
        server.client(tokens["bob"]) as bob,
        server.client(tokens["writer"]) as writer,
        server.client(tokens["other"]) as other,
    ):
        mine = alice.post("/v1/facts", json={"facts": [{"content": "alice's kumquat secret"}]})
        fact = mine.json()["facts"][0]
        assert fact["user_id"] == "alice"
        assert fact["scope"] == "user"
        shared = writer.post("/v1/facts", json={"facts": [{"content": "kumquat policy for all"}]})
        shared_id = shared.json()["facts"][0]["id"]
        for path in (f"/v1/facts/{fact['id']}", f"/v1/facts/{fact['id']}/history"):
            problem_of(bob.get(path), 404, "FactNotFoundError")
            problem_of(other.get(path), 404, "FactNotFoundError")
        problem_of(bob.delete(f"/v1/facts/{fact['id']}"), 404, "FactNotFoundError")
        problem_of(bob.post("/v1/forget", json={"fact_id": fact["id"]}), 404, "FactNotFoundError")
        assert bob.get(f"/v1/facts/{shared_id}").status_code == 200  # project-wide: readable
        problem_of(bob.delete(f"/v1/facts/{shared_id}"), 403, "PermissionDeniedError")
        hits = bob.post("/v1/search", json={"query": "kumquat secret", "top_k": 20}).json()
        assert fact["id"] not in {r["fact"]["id"] for r in hits["results"]}
        assert all(f["user_id"] == "bob" for f in bob.get("/v1/facts").json()["facts"])
        assert writer.get(f"/v1/facts/{fact['id']}").status_code == 200
        gone = alice.delete(f"/v1/facts/{fact['id']}").json()
        assert gone["counts"]["facts"] == 1
        problem_of(alice.get(f"/v1/facts/{fact['id']}"), 404, "FactNotFoundError")
        assert writer.get(f"/v1/facts/{fact['id']}/history").json()["fact"] is None


def test_listing_filters_and_pages(served: tuple[ServerProcess, dict[str, str]]) -> None:
    server, tokens = served
    with server.client(tokens["writer"]) as writer:
        facts = [
            {
                "content": f"paging quince {i}",
                "fact_type": "decision" if i % 3 else "event",
                "user_id": "carol",
                "session_id": f"q{i % 2}",
                "tags": ["quince"],
            }
            for i in range(25)
        ]
        stored = writer.post("/v1/facts", json={"facts": facts}).json()["facts"]
        seen: list[str] = []
        cursor = None
        while True:
            params: dict[str, Any] = {"tag": "quince", "limit": 10}
            if cursor:
                params["cursor"] = cursor
            page = writer.get("/v1/facts", params=params).json()
            seen += [f["id"] for f in page["facts"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert seen == [f["id"] for f in stored]
        events = writer.get(
            "/v1/facts", params={"tag": "quince", "fact_type": "event", "limit": 100}
        )
        assert len(events.json()["facts"]) == 9
        one_session = writer.get(
            "/v1/facts", params={"user_id": "carol", "session_id": "q0", "limit": 100}
        ).json()["facts"]
        assert len(one_session) == 13
        text = writer.get("/v1/facts", params={"q": "QUINCE 2", "limit": 100}).json()["facts"]
        assert {f["content"] for f in text} == {"paging quince 2"} | {
            f"paging quince {i}" for i in range(20, 25)
        }
        middle = stored[10]["created_at"]
        later = writer.get("/v1/facts", params={"tag": "quince", "created_after": middle}).json()
        assert len(later["facts"]) <= 15
        earlier = writer.get(
            "/v1/facts", params={"tag": "quince", "created_before": stored[0]["created_at"]}
        ).json()
        assert earlier["facts"] == []
        problem_of(writer.get("/v1/facts", params={"cursor": "!!"}), 422, "InvalidInputError")
        problem_of(writer.get("/v1/facts", params={"limit": 0}), 422, "InvalidInputError")
        profile = writer.get("/v1/profile", params={"user_id": "carol"}).json()
        assert profile == {"user_id": "carol", "entries": []}
        problem_of(writer.get("/v1/profile"), 422, "InvalidInputError")


def test_profile_is_the_standing_profile_the_agent_shows(
    served: tuple[ServerProcess, dict[str, str]],
) -> None:
    server, tokens = served
    with server.client(tokens["alice"]) as alice, server.client(tokens["bob"]) as bob:
        alice.post(
            "/v1/memories",
            json={
                "messages": [
                    {"content": "I prefer green tea."},
                    {"content": "Always answer in French from now on."},
                ],
                "session_id": "standing-1",
            },
        )
        profile = alice.get("/v1/profile").json()
        assert profile["user_id"] == "alice"
        kinds = [(e["kind"], e["fact"]["content"]) for e in profile["entries"]]
        assert kinds[0][0] == "instruction", kinds
        assert "French" in kinds[0][1], kinds
        assert any(k == "preference" and "green tea" in c for k, c in kinds), kinds
        # A key bound to another user reads that user's profile, never alice's.
        assert all(
            "French" not in e["fact"]["content"] for e in bob.get("/v1/profile").json()["entries"]
        )
        problem_of(
            bob.get("/v1/profile", params={"user_id": "alice"}), 403, "PermissionDeniedError"
        )


def test_forget_previews_then_forgets(served: tuple[ServerProcess, dict[str, str]]) -> None:
    server, tokens = served
    with server.client(tokens["alice"]) as alice, server.client(tokens["bob"]) as bob:
        for client in (alice, bob):
            client.post(
                "/v1/facts",
                json={
                    "facts": [
                        {"content": "Tom likes sailing", "subject": "Tom"},
                        {"content": "Tom's boat is blue", "subject": "tom"},
                    ]
                },
            )
        preview = alice.post("/v1/forget", json={"subject": "Tom", "dry_run": True}).json()
        assert preview["dry_run"]
        assert len(preview["records"]) == 2
        assert {r["user_id"] for r in preview["records"]} == {"alice"}
        assert len(alice.get("/v1/facts", params={"q": "Tom"}).json()["facts"]) == 2
        done = alice.post("/v1/forget", json={"subject": "Tom"}).json()
        assert done["counts"]["facts"] == 2
        assert preview["counts"] == done["counts"]  # the preview is the engine's dry run
        assert done["counts"]["vectors"] == 2
        assert not done["dry_run"]
        assert alice.get("/v1/facts", params={"q": "Tom"}).json()["facts"] == []
        assert len(bob.get("/v1/facts", params={"q": "Tom"}).json()["facts"]) == 2
        problem_of(alice.post("/v1/forget", json={}), 422, "InvalidInputError")
        problem_of(
            alice.post("/v1/forget", json={"fact_id": "x", "subject": "y"}),
            422,
            "InvalidInputError",
        )


def test_consolidation_runs_in_the_background(served: tuple[ServerProcess, dict[str, str]]) -> None:
    server, tokens = served
    with server.client(tokens["admin"]) as admin:
        admin.post(
            "/v1/facts",
            json={"facts": [{"content": "The staging database is db-7.internal"}] * 2},
        )
        started = admin.post("/v1/consolidations", json={"dry_run": False})
        assert started.status_code == 202
        assert started.json()["status"] == "running"
        run_id = started.json()["id"]
        deadline = time.monotonic() + 60
        while (run := admin.get(f"/v1/consolidations/{run_id}").json())["status"] == "running":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert run["status"] == "done", run
        report = admin.get(f"/v1/consolidations/{run_id}/report").json()
        assert report["duplicates_removed"] >= 1
        assert report["project_id"] == P1
        stats = admin.get("/v1/stats").json()
        assert stats["last_consolidation"]["id"] == run_id
        assert stats["duplicates_merged"] >= 1
        assert stats["total"] == sum(n for kind in stats["counts"].values() for n in kind.values())
        assert admin.get("/v1/consolidations").json()["runs"][0]["id"] == run_id
        problem_of(admin.get("/v1/consolidations/nope"), 422, "InvalidInputError")
    with server.client(tokens["other"]) as other:
        problem_of(other.get(f"/v1/consolidations/{run_id}"), 422, "InvalidInputError")
    with server.client(tokens["alice_admin"]) as alice_admin:
        own = alice_admin.post("/v1/consolidations", json={"dry_run": True})
        assert own.status_code == 202


def test_export_graph_and_projects(served: tuple[ServerProcess, dict[str, str]]) -> None:
    server, tokens = served
    with server.client(tokens["admin"]) as admin, server.client(tokens["other"]) as other:
        admin.post("/v1/facts", json={"facts": [{"content": "export me"}]})
        other.post("/v1/facts", json={"facts": [{"content": "bank secret"}]})
        archive = admin.get("/v1/export")
        assert archive.status_code == 200
        lines = gzip.decompress(archive.content).decode().splitlines()
        header = json.loads(lines[0])
        assert header["type"] == "header"
        assert header["project_id"] == P1
        assert all(
            json.loads(line).get("data", {}).get("project_id", P1) == P1 for line in lines[1:]
        )
        assert "bank secret" not in archive.content.decode("latin-1")
        projects = admin.get("/v1/projects").json()["projects"]
        assert [p["project_id"] for p in projects] == [P1]
        assert projects[0]["records"] > 0
        assert [p["project_id"] for p in other.get("/v1/projects").json()["projects"]] == [P2]
        graph = admin.get("/v1/graph", params={"format": "json"})
        if graph.status_code == 200:  # the embedded store keeps a graph, PostgreSQL here none
            assert graph.json()["project_id"] == P1
            page = admin.get("/v1/graph", params={"format": "html"})
            assert page.headers["content-type"].startswith("text/html")
            assert "<svg" in page.text
        else:
            problem_of(graph, 404, "NotFound")


def test_errors_are_problem_details_never_a_500(
    served: tuple[ServerProcess, dict[str, str]],
) -> None:
    server, tokens = served
    with server.client(tokens["admin"]) as admin:
        problem_of(admin.get("/v1/facts/nope"), 404, "FactNotFoundError")
        problem_of(admin.post("/v1/search", json={"query": ""}), 422, "InvalidInputError")
        problem_of(
            admin.post("/v1/search", json={"query": "x", "top_k": 0}), 422, "InvalidInputError"
        )
        problem_of(admin.post("/v1/search", json={"quer": "x"}), 422, "InvalidInputError")
        problem_of(
            admin.post(
                "/v1/search", content=b"{not json", headers={"content-type": "application/json"}
            ),
            422,
            "InvalidInputError",
        )
        problem_of(
            admin.post("/v1/search", json={"query": "x", "scope": "user"}), 422, "ScopeError"
        )
        big = admin.post(
            "/v1/facts",
            content=b"x" * (17 * 1024 * 1024),
            headers={"content-type": "application/json"},
        )
        problem_of(big, 413, "RequestTooLarge")


def test_the_dashboard_is_served_with_a_strict_policy(
    served: tuple[ServerProcess, dict[str, str]],
) -> None:
    server, _ = served
    with server.client() as anonymous:
        page = anonymous.get("/")
        assert page.status_code == 200
        assert "sagewai" in page.text
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy
        assert "unsafe-eval" not in policy
        assert anonymous.get("/static/app.js").headers["content-type"].startswith("text/javascript")
        assert anonymous.get("/static/../_app.py").status_code == 404
        assert (
            "access-control-allow-origin"
            not in anonymous.get("/v1/health", headers={"origin": "https://evil.example"}).headers
        )


def test_rate_limits_and_cors_when_configured(tmp_path: Path) -> None:
    store = Store.embedded(tmp_path)
    tokens = store.make_keys({"k": {"project_id": P1, "role": "read"}})
    server = ServerProcess(
        store,
        "--rate-limit",
        "1",
        "--rate-burst",
        "3",
        "--cors-origin",
        "https://app.example",
        log=tmp_path / "server.log",
    )
    try:
        with server.client(tokens["k"]) as client:
            statuses = [client.get("/v1/me").status_code for _ in range(5)]
            assert statuses[:3] == [200, 200, 200]
            assert 429 in statuses[3:]
            limited = client.get("/v1/me")
            body = problem_of(limited, 429, "RateLimitedError")
            assert int(limited.headers["retry-after"]) >= 1
            assert "retry" in body["detail"]
            allowed = client.options(
                "/v1/search",
                headers={"origin": "https://app.example", "access-control-request-method": "POST"},
            )
            assert allowed.headers["access-control-allow-origin"] == "https://app.example"
            refused = client.options(
                "/v1/search",
                headers={"origin": "https://evil.example", "access-control-request-method": "POST"},
            )
            assert "access-control-allow-origin" not in refused.headers
    finally:
        server.stop()


def test_the_typescript_clients_schema_is_the_servers() -> None:
    """``clients/typescript/openapi.json`` is what ``sagewai serve --openapi`` prints (its
    ``src/schema.ts`` is generated from it; CI checks that with ``npm run check-schema``)."""
    from sagewai.cli._serve import openapi_schema

    committed = Path(__file__).resolve().parent.parent / "clients" / "typescript" / "openapi.json"
    assert json.loads(committed.read_text()) == openapi_schema(), (
        "run: cd clients/typescript && npm run openapi && npm run generate"
    )
    fact = openapi_schema()["components"]["schemas"]["Fact"]
    assert set(fact["required"]) == set(fact["properties"])  # responses carry every field
