// The client against a real `sagewai serve` process on 127.0.0.1, started by this test with a
// fresh embedded store and keys made by `sagewai keys create`.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";

import { SagewaiClient, SagewaiError } from "../src/index.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const venv = path.resolve(here, "../../../../.venv/bin/python");
const python = process.env.SAGEWAI_PYTHON ?? (existsSync(venv) ? venv : "python3");
const folder = mkdtempSync(path.join(tmpdir(), "sagewai-ts-"));
const store = path.join(folder, "store");
let server: ChildProcess;
let url = "";
const keys: Record<string, string> = {};

function makeKey(name: string, ...args: string[]): void {
  const out = execFileSync(
    python,
    ["-m", "sagewai", "keys", "create", "--store", store, "--json", ...args],
    { encoding: "utf8" },
  );
  keys[name] = (JSON.parse(out) as { key: string }).key;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

function client(name: string): SagewaiClient {
  return new SagewaiClient({ baseUrl: url, apiKey: keys[name] ?? "" });
}

async function refused(call: Promise<unknown>, status: number, error: string): Promise<SagewaiError> {
  try {
    await call;
  } catch (caught) {
    assert.ok(caught instanceof SagewaiError, String(caught));
    assert.equal(caught.status, status);
    assert.equal(caught.error, error);
    assert.equal(caught.problem.type, `urn:sagewai:error:${error}`);
    return caught;
  }
  assert.fail(`expected a ${status} ${error}`);
}

before(async () => {
  makeKey("admin", "--project", "ts-app", "--role", "admin");
  makeKey("reader", "--project", "ts-app", "--role", "read");
  makeKey("alice", "--project", "ts-app", "--role", "write", "--user", "alice");
  makeKey("bob", "--project", "ts-app", "--role", "write", "--user", "bob");
  makeKey("other", "--project", "ts-other", "--role", "admin");
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  server = spawn(
    python,
    ["-m", "sagewai", "serve", "--store", store, "--host", "127.0.0.1", "--port", String(port), "--rate-limit", "0"],
    { stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, HF_HUB_OFFLINE: "1" } },
  );
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      if ((await fetch(url + "/v1/health")).ok) break;
    } catch {
      // not listening yet
    }
    if (server.exitCode !== null) throw new Error("sagewai serve exited");
    if (Date.now() > deadline) throw new Error("sagewai serve did not start");
    await new Promise((done) => setTimeout(done, 200));
  }
});

after(async () => {
  if (server && server.exitCode === null) {
    const stopped = new Promise((done) => server.once("exit", done));
    server.kill("SIGINT");
    await stopped;
  }
  rmSync(folder, { recursive: true, force: true });
});

describe("sagewai serve through the TypeScript client", () => {
  test("health, readiness and the key's binding", async () => {
    const admin = client("admin");
    assert.equal((await admin.health()).status, "ok");
    assert.equal((await admin.ready()).status, "ok");
    const me = await admin.me();
    assert.equal(me.project_id, "ts-app");
    assert.equal(me.role, "admin");
  });

  test("a missing, bad or revoked key is a 401 problem", async () => {
    await refused(new SagewaiClient({ baseUrl: url, apiKey: "nope" }).me(), 401, "AuthenticationError");
    await refused(new SagewaiClient({ baseUrl: url, apiKey: "sgw_000000000000_" + "x".repeat(43) }).me(), 401, "AuthenticationError");
  });

  test("roles and bindings are 403 problems", async () => {
    await refused(client("reader").addFacts([{ content: "no" }]), 403, "PermissionDeniedError");
    await refused(client("alice").search({ query: "x", user_id: "bob" }), 403, "PermissionDeniedError");
    await refused(client("alice").search({ query: "x", project: "ts-other" }), 403, "PermissionDeniedError");
    await refused(client("alice").exportArchive(), 403, "PermissionDeniedError");
  });

  test("remember, search, provenance, revert and history", async () => {
    const alice = client("alice");
    const said = await alice.remember({ messages: [{ content: "I live in Oslo." }], session_id: "t1" });
    assert.equal(said.user_id, "alice");
    assert.ok(said.extracted.length > 0);
    await alice.remember({ messages: [{ content: "I moved to Bergen last week." }], session_id: "t2" });
    const found = await alice.search("where does the user live");
    assert.ok(found.results.some((hit) => hit.fact.content.includes("Bergen")));
    for (const hit of found.results) assert.ok([null, undefined, "alice"].includes(hit.fact.user_id));
    const old = (await alice.listFacts({ kind: ["fact"], status: ["superseded"] })).facts.find((f) => f.content.includes("Oslo"));
    assert.ok(old, "the Oslo fact was superseded");
    const why = await alice.provenance(old.id);
    assert.deepEqual(why.messages.map((m) => m.content), ["I live in Oslo."]);
    assert.ok(why.successor?.content.includes("Bergen"));
    const change = why.changes.find((c) => c.action === "superseded");
    assert.ok(change);
    await refused(client("bob").revert(old.id, change.id), 404, "FactNotFoundError");
    const restored = await alice.revert(old.id, change.id);
    assert.equal(restored.status, "active");
    const history = await alice.history(old.id);
    assert.equal(history.changes.at(-1)?.action, "restored");
  });

  test("add, list with paging, get, delete and forget with a dry run", async () => {
    const admin = client("admin");
    const stored = await admin.addFacts(
      Array.from({ length: 12 }, (_, i) => ({ content: `ts note ${i}`, subject: "Tess", tags: ["ts"], user_id: "carol" })),
    );
    assert.equal(stored.length, 12);
    const seen: string[] = [];
    for await (const fact of admin.iterFacts({ tag: ["ts"], limit: 5 })) seen.push(fact.id);
    assert.deepEqual(seen, stored.map((f) => f.id));
    assert.equal((await admin.getFact(stored[0]!.id)).content, "ts note 0");
    await refused(client("alice").getFact(stored[0]!.id), 404, "FactNotFoundError");
    const gone = await admin.deleteFact(stored[0]!.id);
    assert.equal(gone.counts.facts, 1);
    await refused(admin.getFact(stored[0]!.id), 404, "FactNotFoundError");
    const preview = await admin.forget({ subject: "Tess", dry_run: true });
    assert.equal(preview.dry_run, true);
    assert.equal(preview.records.length, 11);
    assert.equal((await admin.listFacts({ tag: ["ts"], limit: 100 })).facts.length, 11);
    const done = await admin.forget({ subject: "Tess" });
    assert.equal(done.counts.facts, 11);
    assert.equal((await admin.listFacts({ tag: ["ts"] })).facts.length, 0);
    await refused(admin.forget({}), 422, "InvalidInputError");
  });

  test("profile, projects, stats, graph, consolidation and export", async () => {
    const alice = client("alice");
    await alice.remember({
      messages: [{ content: "I prefer green tea." }, { content: "Always answer in French." }],
      session_id: "t3",
    });
    const profile = await alice.profile();
    assert.ok(profile.entries.some((e) => e.kind === "preference" && e.fact.content.includes("green tea")));
    const first = profile.entries[0];
    assert.ok(first !== undefined);
    assert.equal(first.kind, "instruction");
    assert.match(first.fact.content, /French/);
    const admin = client("admin");
    assert.deepEqual((await admin.projects()).projects.map((p) => p.project_id), ["ts-app"]);
    await admin.addFacts([{ content: "The build server is ci-7.internal" }, { content: "The build server is ci-7.internal" }]);
    const run = await admin.startConsolidation({ dry_run: false });
    assert.equal(run.status, "running");
    const finished = await admin.waitForConsolidation(run.id);
    assert.equal(finished.status, "done");
    assert.ok((finished.report?.duplicates_removed ?? 0) >= 1);
    const stats = await admin.stats();
    assert.equal(stats.last_consolidation?.id, run.id);
    assert.ok(stats.duplicates_merged >= 1);
    const graph = JSON.parse(await admin.graph("json")) as { project_id: string };
    assert.equal(graph.project_id, "ts-app");
    assert.match(await admin.graph("html"), /<svg/);
    const archive = await admin.exportArchive();
    const lines = gunzipSync(archive).toString("utf8").trim().split("\n");
    assert.equal((JSON.parse(lines[0]!) as { type: string }).type, "header");
    assert.equal((await client("other").listFacts()).facts.length, 0);
  });

  test("bad input is a 422 problem, never a 500", async () => {
    const admin = client("admin");
    await refused(admin.search(""), 422, "InvalidInputError");
    await refused(admin.search({ query: "x", top_k: 0 }), 422, "InvalidInputError");
    await refused(admin.getFact("\u0001"), 422, "InvalidInputError");
    await refused(admin.listFacts({ cursor: "!!" }), 422, "InvalidInputError");
  });
});
