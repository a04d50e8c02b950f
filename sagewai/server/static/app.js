// The sagewai dashboard: plain JavaScript over the /v1 API, no library, no build step.
// Every piece of memory text is set with textContent, never parsed as HTML. The API key is
// kept in sessionStorage (this tab only) and sent as a bearer token.
"use strict";

const KEY = "sagewai.key";
const KINDS = ["fact", "message", "document"];
const STATUSES = ["active", "superseded", "merged", "flagged", "archived"];
const $ = (id) => document.getElementById(id);
let me = null;
let cursor = null;
let preview = null;

class ApiError extends Error {
  constructor(problem) {
    super(problem.detail || problem.title || "request failed");
    this.problem = problem;
  }
}

async function api(path, options = {}) {
  const headers = { authorization: "Bearer " + sessionStorage.getItem(KEY) };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, {
    method: options.method || "GET",
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const type = response.headers.get("content-type") || "";
  if (!response.ok) {
    const problem = type.includes("json") ? await response.json() : { detail: response.statusText };
    if (response.status === 401) signOut(problem.detail);
    throw new ApiError(problem);
  }
  return type.includes("json") ? response.json() : response.text();
}

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function badge(value) {
  return el("span", value, "badge " + value);
}

function when(iso) {
  return iso ? iso.replace("T", " ").slice(0, 19) : "";
}

function showError(error) {
  $("error").textContent = error ? (error.message || String(error)) : "";
}

// The fact types are the server's FactType enum, read from its OpenAPI schema (served without a
// key), so a new type shows here without a copy of the list in this file.
async function fillFactTypes() {
  try {
    const response = await fetch("/v1/openapi.json");
    const schema = await response.json();
    fill($("f-type"), schema.components.schemas.FactType.enum);
  } catch (error) {
    showError(error);
  }
}

function fill(select, values) {
  for (const value of values) {
    const option = el("option", value);
    option.value = value;
    select.append(option);
  }
}

// ---------------------------------------------------------------- sign in and routing

function signOut(reason) {
  sessionStorage.removeItem(KEY);
  me = null;
  $("main").hidden = true;
  $("nav").hidden = true;
  $("signout").hidden = true;
  $("who").textContent = "";
  $("login").hidden = false;
  $("login-error").textContent = reason || "";
}

async function signIn() {
  try {
    me = await api("/v1/me");
  } catch (error) {
    // A refused key was shown by signOut; anything else (a limit, a network error) is shown.
    if (!(error instanceof ApiError) || error.problem.status !== 401) {
      $("login-error").textContent = error.message;
    }
    return;
  }
  $("login").hidden = true;
  $("main").hidden = false;
  $("nav").hidden = false;
  $("signout").hidden = false;
  const user = me.user_id ? " · user " + me.user_id : "";
  $("who").textContent = `project ${me.project_id} · ${me.role} key ${me.id}${user}`;
  route();
}

const VIEWS = {
  facts: showFacts,
  fact: showFact,
  forget: showForget,
  graph: showGraph,
  health: showHealth,
};

function route() {
  if (!me) return;
  const [name, arg] = location.hash.replace(/^#\/?/, "").split("/");
  const view = VIEWS[name] ? name : "facts";
  for (const section of document.querySelectorAll(".view")) section.hidden = true;
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("active", link.dataset.view === view);
  }
  $("view-" + view).hidden = false;
  showError(null);
  VIEWS[view](arg ? decodeURIComponent(arg) : null).catch(showError);
}

// ---------------------------------------------------------------- facts

function factLink(fact) {
  const link = el("a", fact.content.length > 240 ? fact.content.slice(0, 239) + "…" : fact.content);
  link.href = "#/fact/" + encodeURIComponent(fact.id);
  return link;
}

function factRow(fact, extra) {
  const row = el("tr");
  row.dataset.id = fact.id;
  row.append(
    el("td", when(fact.created_at)),
    el("td", fact.kind),
    el("td", fact.fact_type),
    el("td"),
    el("td", fact.user_id || "—"),
    el("td", fact.session_id || "—"),
  );
  row.children[3].append(badge(extra || fact.status));
  const content = el("td", undefined, "content");
  content.append(factLink(fact));
  row.append(content);
  return row;
}

function listParams() {
  const params = new URLSearchParams({ limit: "100" });
  const set = (name, value) => value && params.append(name, value);
  set("kind", $("f-kind").value);
  set("fact_type", $("f-type").value);
  set("status", $("f-status").value);
  set("user_id", $("f-user").value.trim());
  set("session_id", $("f-session").value.trim());
  set("created_after", $("f-from").value && $("f-from").value + "T00:00:00Z");
  set("created_before", $("f-to").value && $("f-to").value + "T23:59:59Z");
  set("q", $("f-text").value.trim());
  return params;
}

async function showFacts() {
  cursor = null;
  $("facts-table").tBodies[0].replaceChildren();
  const text = $("f-text").value.trim();
  if ($("f-mode").value === "search" && text) return searchFacts(text);
  return listFacts();
}

async function listFacts() {
  const params = listParams();
  if (cursor) params.set("cursor", cursor);
  const page = await api("/v1/facts?" + params);
  const body = $("facts-table").tBodies[0];
  for (const fact of page.facts) body.append(factRow(fact));
  cursor = page.next_cursor;
  $("more").hidden = !cursor;
  $("facts-summary").textContent = `${body.rows.length} records shown` + (cursor ? " (more below)" : "");
}

async function searchFacts(text) {
  const request = { query: text, top_k: 25 };
  const user = $("f-user").value.trim();
  const session = $("f-session").value.trim();
  if (user) request.user_id = user;
  if (session) request.session_id = session;
  if ($("f-type").value) request.fact_types = [$("f-type").value];
  if ($("f-kind").value) request.kinds = [$("f-kind").value];
  if ($("f-status").value) request.statuses = [$("f-status").value];
  const found = await api("/v1/search", { method: "POST", body: request });
  const body = $("facts-table").tBodies[0];
  for (const hit of found.results) {
    const row = factRow(hit.fact, hit.standing);
    row.children[6].append(el("span", ` score ${hit.score.toFixed(3)}`, "muted"));
    body.append(row);
  }
  $("more").hidden = true;
  $("facts-summary").textContent = `${found.results.length} results for “${text}”, best first`;
}

// ---------------------------------------------------------------- one fact

async function showFact(id) {
  const why = await api("/v1/facts/" + encodeURIComponent(id) + "/provenance");
  const fact = why.fact;
  $("fact-content").textContent = fact.content;
  const fields = $("fact-fields");
  fields.replaceChildren();
  const shown = {
    id: fact.id, status: fact.status, kind: fact.kind, type: fact.fact_type, scope: fact.scope,
    user: fact.user_id, session: fact.session_id, subject: fact.subject,
    triple: fact.predicate ? `${fact.subject} · ${fact.predicate} · ${fact.object}` : null,
    confidence: fact.confidence, strength: fact.strength.toFixed(3), created: when(fact.created_at),
    "valid from": when(fact.valid_from), "valid to": when(fact.valid_to), tags: fact.tags.join(", "),
  };
  for (const [name, value] of Object.entries(shown)) {
    if (value === null || value === undefined || value === "") continue;
    fields.append(el("dt", name), el("dd", value));
  }
  const sources = $("fact-sources").tBodies[0];
  sources.replaceChildren();
  for (const s of why.sources) {
    const row = el("tr");
    for (const v of [s.extractor, s.session_id, s.message_id, s.turn_index, s.role, when(s.timestamp)]) {
      row.append(el("td", v === null ? "—" : v));
    }
    sources.append(row);
  }
  const messages = $("fact-messages");
  messages.replaceChildren();
  for (const message of why.messages) {
    messages.append(el("p", "The message it was drawn from:", "muted"), el("blockquote", message.content));
  }
  const successor = $("fact-successor");
  successor.replaceChildren();
  if (why.successor) {
    successor.append(el("p", "Replaced by: ", "muted"));
    successor.firstChild.append(factLink(why.successor));
  }
  const history = $("fact-history").tBodies[0];
  history.replaceChildren();
  for (const change of why.changes) {
    const row = el("tr");
    row.dataset.action = change.action;
    row.append(el("td", when(change.at)), el("td", change.action),
      el("td", `${change.actor} / ${change.rule}`), el("td", change.reason || ""));
    const cell = el("td");
    if (change.before && me.role !== "read") {
      const button = el("button", "Revert");
      button.type = "button";
      button.className = "revert";
      button.addEventListener("click", () => revert(fact.id, change.id).catch(showError));
      cell.append(button);
    }
    row.append(cell);
    history.append(row);
  }
  $("fact-forget").hidden = me.role === "read";
  $("fact-forget").onclick = () => {
    for (const id of ["g-subject", "g-session", "g-user"]) $(id).value = "";
    $("g-fact").value = fact.id;
    location.hash = "#/forget";
  };
}

async function revert(factId, changeId) {
  const path = `/v1/facts/${encodeURIComponent(factId)}/changes/${encodeURIComponent(changeId)}/revert`;
  const restored = await api(path, { method: "POST" });
  await showFact(factId);
  $("fact-status").textContent = `Reverted: the fact is ${restored.status} again.`;
}

// ---------------------------------------------------------------- forget

function forgetRequest() {
  const request = {};
  const set = (name, id) => { const v = $(id).value.trim(); if (v) request[name] = v; };
  set("subject", "g-subject");
  set("session_id", "g-session");
  set("user_id", "g-user");
  set("fact_id", "g-fact");
  return request;
}

function showRecords(records) {
  const body = $("forget-table").tBodies[0];
  body.replaceChildren();
  for (const fact of records) {
    const row = factRow(fact);
    row.children[0].remove();
    body.append(row);
  }
}

async function showForget() {
  $("forget-confirm").disabled = true;
  preview = null;
  $("forget-summary").textContent = "";
  showRecords([]);
  if ($("g-fact").value) await previewForget();
}

async function previewForget() {
  const request = forgetRequest();
  const receipt = await api("/v1/forget", { method: "POST", body: { ...request, dry_run: true } });
  preview = request;
  showRecords(receipt.records);
  $("forget-summary").textContent =
    `Dry run: ${receipt.records.length} records would be forgotten. Nothing has changed.` +
    (receipt.note ? " " + receipt.note + "." : "");
  $("forget-confirm").disabled = receipt.records.length === 0;
}

async function confirmForget() {
  if (!preview || !confirm("Forget these records from every store? This cannot be undone.")) return;
  const receipt = await api("/v1/forget", { method: "POST", body: { ...preview, dry_run: false } });
  const c = receipt.counts;
  $("forget-summary").textContent =
    `Forgotten: ${c.facts} records, ${c.graph_items} graph items, ${c.episodes} episodes.`;
  $("forget-confirm").disabled = true;
  preview = null;
}

// ---------------------------------------------------------------- graph and health

async function showGraph() {
  $("graph-status").textContent = "loading…";
  try {
    // The page is self-contained (its own script and data); a sandboxed frame runs it with no
    // access to this page, its key or the API.
    $("graph-frame").srcdoc = await api("/v1/graph?format=html");
    $("graph-status").textContent = "Drag nodes, scroll to zoom, click an entity for its relations.";
  } catch (error) {
    $("graph-frame").srcdoc = "";
    $("graph-status").textContent = error.message;
  }
}

function card(label, value, id) {
  const node = el("div", undefined, "card");
  node.id = id;
  node.append(el("strong", value), el("span", label));
  return node;
}

async function showHealth() {
  const stats = await api("/v1/stats");
  $("health-cards").replaceChildren(
    card("records", stats.total, "h-total"),
    card("duplicates merged", stats.duplicates_merged, "h-merged"),
    card("contradictions flagged", stats.contradictions_flagged, "h-flagged"),
    card("superseded", stats.superseded, "h-superseded"),
    card("archived", stats.archived, "h-archived"),
  );
  const head = el("tr");
  head.append(el("th", "kind"), ...STATUSES.map((s) => el("th", s)));
  $("health-counts").tHead.replaceChildren(head);
  const body = $("health-counts").tBodies[0];
  body.replaceChildren();
  for (const kind of KINDS) {
    const row = el("tr");
    row.append(el("td", kind), ...STATUSES.map((s) => el("td", stats.counts[kind][s])));
    body.append(row);
  }
  showRun(stats.last_consolidation);
  $("health-actions").hidden = me.role !== "admin";
}

function showRun(run) {
  const box = $("health-run");
  box.replaceChildren();
  if (!run) {
    box.append(el("p", "No consolidation started from this server yet.", "muted"));
    return;
  }
  const mode = run.dry_run ? "dry run" : "run";
  box.append(el("p", `${mode} ${run.id}: ${run.status}, started ${when(run.started_at)}` +
    (run.finished_at ? `, finished ${when(run.finished_at)}` : "")));
  if (run.error) box.append(el("p", run.error, "error"));
  const r = run.report;
  if (!r) return;
  const cards = el("div", undefined, "cards");
  cards.append(
    card("examined", r.total_processed, "r-total"),
    card("duplicates merged", r.duplicates_removed, "r-merged"),
    card("contradictions resolved", r.contradictions_resolved, "r-contradictions"),
    card("decayed", r.facts_decayed, "r-decayed"),
    card("ms", Math.round(r.duration_ms), "r-ms"),
  );
  box.append(cards);
  const list = el("ul", undefined, "actions");
  for (const action of r.actions.slice(0, 20)) {
    list.append(el("li", `${action.kind} ${action.fact_ids.join(", ")}: ${action.reason}`));
  }
  box.append(list);
}

async function consolidate(dryRun) {
  let run = await api("/v1/consolidations", { method: "POST", body: { dry_run: dryRun } });
  showRun(run);
  while (run.status === "running") {
    await new Promise((done) => setTimeout(done, 500));
    run = await api("/v1/consolidations/" + encodeURIComponent(run.id));
  }
  await showHealth();
}

// ---------------------------------------------------------------- wiring

document.addEventListener("DOMContentLoaded", () => {
  fill($("f-kind"), KINDS);
  fillFactTypes();
  fill($("f-status"), STATUSES);
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY, $("key").value.trim());
    $("key").value = "";
    signIn();
  });
  $("signout").addEventListener("click", () => signOut(""));
  $("filters").addEventListener("submit", (event) => {
    event.preventDefault();
    showError(null);
    showFacts().catch(showError);
  });
  $("more").addEventListener("click", () => listFacts().catch(showError));
  $("forget-form").addEventListener("submit", (event) => {
    event.preventDefault();
    showError(null);
    previewForget().catch(showError);
  });
  $("forget-confirm").addEventListener("click", () => confirmForget().catch(showError));
  $("consolidate-dry").addEventListener("click", () => consolidate(true).catch(showError));
  $("consolidate").addEventListener("click", () => consolidate(false).catch(showError));
  window.addEventListener("hashchange", route);
  if (sessionStorage.getItem(KEY)) signIn();
  else signOut("");
});
