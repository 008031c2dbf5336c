// truffle memory inspector: the profile, every fact with its validity, confidence and evidence, a
// search box, per-chat watermarks, and forget buttons behind a dry-run confirmation.
// Plain DOM, no dependencies. Text from the server is only ever set through textContent.
"use strict";

const TOKEN_KEY = "truffle.token";  // shared with the chat page (same tab, same origin)
const FACTS_PAGE = 500;
const $ = (sel) => document.querySelector(sel);
const state = { facts: [], factsTotal: 0, category: "", forget: null, opener: null };

// ---- token: ?token= once (then removed from the address bar), else sessionStorage ----------------
(function takeTokenFromUrl() {
  const url = new URL(window.location.href);
  const t = url.searchParams.get("token");
  if (t) {
    sessionStorage.setItem(TOKEN_KEY, t);
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
  }
})();

function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }

$("#token-input").value = token();
$("#token-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const t = $("#token-input").value.trim();
  if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY);
  $("#token-box").open = false;
  setStatus("");
  loadAll();
});

function setStatus(text) { $("#status").textContent = text; }

class ApiFailure extends Error {
  constructor(status, message, code) { super(status + ": " + message); this.status = status; this.code = code; }
}

async function api(method, path, body) {
  const headers = { "Accept": "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token()) headers["Authorization"] = "Bearer " + token();
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await resp.json(); } catch (_) { data = null; }
  if (!resp.ok) {
    if (resp.status === 401) { $("#token-box").open = true; $("#token-input").focus(); }
    const err = (data && data.error) || {};
    throw new ApiFailure(resp.status, err.message || resp.statusText || "request failed", err.code);
  }
  return data;
}

// ---- small DOM helpers ----------------------------------------------------------------------------
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

function button(text, label, onClick, cls) {
  const b = el("button", cls || "", text);
  b.type = "button";
  if (label) b.setAttribute("aria-label", label);
  b.addEventListener("click", onClick);
  return b;
}

function cell(row, label, content) {
  const td = el("td");
  td.dataset.label = label;  // shown before the value when the table stacks on a narrow screen
  if (content instanceof Node) td.appendChild(content); else td.textContent = content == null ? "" : content;
  row.appendChild(td);
  return td;
}

function percent(c) { return c == null ? "?" : Math.round(Number(c) * 100) + " %"; }
function validity(f) { return (f.valid_from || "undated") + " → " + (f.valid_to || "now"); }
function shortTs(ts) { return ts ? String(ts).replace("T", " ").slice(0, 16) : ""; }

let uid = 0;
function nextId(prefix) { uid += 1; return prefix + "-" + uid; }

// ---- evidence: a toggle that loads a fact's messages (redacted by the server) -----------------------
// `shell` (default: the container itself) is what is shown and hidden, e.g. the table row holding it
function evidenceToggle(fact, container, shell) {
  const n = (fact.evidence_message_ids || []).length;
  const id = nextId("evidence");
  shell = shell || container;
  container.id = id;
  shell.hidden = true;
  container.classList.add("evidence");
  const b = button("Evidence (" + n + ")", "Evidence for: " + fact.fact_text + " (" + n + " message" + (n === 1 ? "" : "s") + ")", async () => {
    const open = b.getAttribute("aria-expanded") === "true";
    b.setAttribute("aria-expanded", String(!open));
    shell.hidden = open;
    if (open || container.dataset.loaded) return;
    container.replaceChildren(el("p", "", "Loading…"));
    try {
      const full = await api("GET", "/api/memory/facts/" + encodeURIComponent(fact.fact_id));
      container.dataset.loaded = "1";
      container.replaceChildren(...full.evidence.map(messageItem));
      if (full.missing_evidence && full.missing_evidence.length) {
        container.appendChild(el("p", "hint", full.missing_evidence.length +
          " evidence message(s) are no longer in the memory."));
      }
      if (!full.evidence.length && !(full.missing_evidence || []).length) {
        container.appendChild(el("p", "hint", "No evidence messages recorded."));
      }
    } catch (e) {
      container.replaceChildren(el("p", "error", "Could not load evidence: " + e.message));
    }
  });
  b.setAttribute("aria-expanded", "false");
  b.setAttribute("aria-controls", id);
  if (!n) b.disabled = true;
  return b;
}

// one message (evidence or search hit): who, where, when, the redacted text, and its forget button
function messageItem(m) {
  const item = el("div", "message");
  item.dataset.messageId = m.message_id;
  item.appendChild(el("div", "meta", [m.author, m.chat_id, shortTs(m.ts)].filter(Boolean).join(" · ")));
  item.appendChild(el("div", "text", m.text || ""));
  const foot = el("div", "meta");
  foot.appendChild(el("span", "", "message " + m.message_id + " "));
  foot.appendChild(button("Forget message", "Forget message " + m.message_id + " from " + (m.chat_id || "its chat"),
    (ev) => openForget({ kind: "message", id: m.message_id,
                         what: "This message from " + (m.author || "?") + " in " + (m.chat_id || "?") + ", " +
                               shortTs(m.ts) + ": “" + (m.text || "") + "”" }, ev.currentTarget), "forget"));
  item.appendChild(foot);
  return item;
}

function forgetFactButton(fact) {
  return button("Forget", "Forget fact: " + fact.fact_text, (ev) =>
    openForget({ kind: "fact", id: fact.fact_id, what: "The fact “" + fact.fact_text + "” (" + validity(fact) + ")." },
               ev.currentTarget), "forget");
}

// ---- profile ---------------------------------------------------------------------------------------
function renderProfile(p) {
  const body = $("#profile-body");
  const parts = [];
  if (!p.categories.length) parts.push(el("p", "", "The profile is empty: no confident current facts yet."));
  for (const cat of p.categories) {
    const sec = el("section", "category");
    const hid = nextId("cat");
    const h = el("h3", "", cat.category);
    h.id = hid;
    sec.setAttribute("aria-labelledby", hid);
    sec.dataset.category = cat.category;
    sec.appendChild(h);
    const ul = el("ul");
    for (const f of cat.facts) {
      const li = el("li");
      li.dataset.factId = f.fact_id;
      li.appendChild(el("span", "fact-text", f.text));
      const bits = ["confidence " + percent(f.confidence)];
      if (f.since) bits.push("since " + f.since);
      bits.push(f.evidence_count + " evidence message" + (f.evidence_count === 1 ? "" : "s"));
      li.appendChild(el("span", "meta", " · " + bits.join(" · ")));
      ul.appendChild(li);
    }
    sec.appendChild(ul);
    parts.push(sec);
  }
  if (p.previously.length) {
    const sec = el("section", "category previously");
    const h = el("h3", "", "Previously");
    h.id = nextId("cat");
    sec.setAttribute("aria-labelledby", h.id);
    sec.appendChild(h);
    const ul = el("ul");
    for (const f of p.previously) {
      const li = el("li");
      li.dataset.factId = f.fact_id;
      li.appendChild(el("span", "fact-text", f.text));
      if (f.until) li.appendChild(el("span", "meta", " · until " + f.until));
      ul.appendChild(li);
    }
    sec.appendChild(ul);
    parts.push(sec);
  }
  const meta = [p.user ? "about " + p.user : "", p.version ? "version " + p.version : "",
                p.generated_at ? "built " + shortTs(p.generated_at) : ""].filter(Boolean).join(" · ");
  if (meta) parts.unshift(el("p", "meta", meta));
  body.replaceChildren(...parts);
}

// ---- facts -----------------------------------------------------------------------------------------
function historyList(fact) {
  const det = el("details", "history");
  det.appendChild(el("summary", "", "Previously (" + fact.history.length + ")"));
  const ul = el("ul");
  for (const h of fact.history) {
    const li = el("li");
    li.dataset.factId = h.fact_id;
    li.appendChild(el("span", "fact-text", h.fact_text));
    li.appendChild(el("span", "meta", " · " + validity(h) + " · confidence " + percent(h.confidence) +
                                      " · replaced by the fact above"));
    const box = el("div");
    const actions = el("div", "row-actions");
    actions.appendChild(evidenceToggle(h, box));
    actions.appendChild(forgetFactButton(h));
    li.appendChild(actions);
    li.appendChild(box);
    ul.appendChild(li);
  }
  det.appendChild(ul);
  return det;
}

function renderFacts() {
  const tbody = $("#facts-body");
  const rows = [];
  for (const f of state.facts) {
    if (state.category && f.category !== state.category) continue;
    const tr = el("tr", "fact " + f.status);
    tr.dataset.factId = f.fact_id;
    const text = el("div");
    text.appendChild(el("span", "fact-text", f.fact_text));
    if (f.status === "ended") text.appendChild(el("span", "badge", "ended"));
    if (f.history && f.history.length) text.appendChild(historyList(f));
    cell(tr, "Fact", text);
    cell(tr, "Category", f.category);
    cell(tr, "Valid", validity(f));
    cell(tr, "Confidence", percent(f.confidence));
    const evRow = el("tr", "evidence-row");
    const evCell = el("td");
    evCell.colSpan = 6;
    const box = el("div");
    evCell.appendChild(box);
    evRow.appendChild(evCell);
    cell(tr, "Evidence", evidenceToggle(f, box, evRow));
    cell(tr, "Forget", forgetFactButton(f));
    rows.push(tr, evRow);
  }
  tbody.replaceChildren(...rows);
  const shown = rows.length / 2;
  const superseded = state.facts.reduce((n, f) => n + (f.history ? f.history.length : 0), 0);
  $("#facts-note").textContent = !state.facts.length ? "No facts in the memory yet." :
    shown + " fact" + (shown === 1 ? "" : "s") + " shown" + (superseded ? ", " + superseded + " earlier value" +
    (superseded === 1 ? "" : "s") + " under Previously" : "") +
    (state.factsTotal > state.facts.length ? " (" + state.facts.length + " of " + state.factsTotal + " loaded)" : ".");
  $("#facts-more").hidden = state.factsTotal <= state.facts.length;
}

async function loadFacts(more) {
  const offset = more ? state.facts.length : 0;
  const data = await api("GET", "/api/memory/facts?limit=" + FACTS_PAGE + "&offset=" + offset);
  state.facts = more ? state.facts.concat(data.facts) : data.facts;
  state.factsTotal = data.total;
  const select = $("#facts-category");
  const keep = select.value;
  select.replaceChildren(new Option("All categories", ""), ...data.categories.map((c) => new Option(c, c)));
  select.value = data.categories.includes(keep) ? keep : "";
  state.category = select.value;
  renderFacts();
}

$("#facts-category").addEventListener("change", (ev) => { state.category = ev.target.value; renderFacts(); });
$("#facts-more").addEventListener("click", () => loadFacts(true).catch((e) => setStatus("Could not load facts: " + e.message)));

// ---- chats -----------------------------------------------------------------------------------------
function renderChats(data) {
  const rows = data.chats.map((c) => {
    const tr = el("tr");
    tr.dataset.chatId = c.chat_id;
    const th = el("th", "", c.chat_id);
    th.scope = "row";
    th.dataset.label = "Chat";
    tr.appendChild(th);
    cell(tr, "Messages", String(c.messages));
    cell(tr, "First day", c.first_day || "");
    cell(tr, "Last day", c.last_day || "");
    cell(tr, "Memory current to", shortTs(c.watermark) || "not indexed");
    cell(tr, "Forget", button("Forget chat", "Forget chat " + c.chat_id, (ev) => openForget(
      { kind: "chat", id: c.chat_id, what: "The whole chat " + c.chat_id + ": " + c.messages +
        " indexed messages from " + (c.first_day || "?") + " to " + (c.last_day || "?") +
        ", and everything the memory built from them." }, ev.currentTarget), "forget"));
    return tr;
  });
  $("#chats-body").replaceChildren(...rows);
  $("#chats-note").textContent = data.chats.length ?
    "Index published " + shortTs(data.published_at) + "." : "No chats in the memory yet.";
  const select = $("#search-chat");
  const keep = select.value;
  select.replaceChildren(new Option("All chats", ""), ...data.chats.map((c) => new Option(c.chat_id, c.chat_id)));
  select.value = data.chats.some((c) => c.chat_id === keep) ? keep : "";
}

// ---- search ----------------------------------------------------------------------------------------
$("#search-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const q = $("#search-q").value.trim();
  if (!q) return;
  const out = $("#search-results");
  const go = $("#search-button");
  go.disabled = true;
  out.setAttribute("aria-busy", "true");
  out.replaceChildren(el("p", "", "Searching…"));
  try {
    const params = new URLSearchParams({ q, k: "20" });
    if ($("#search-chat").value) params.set("chat", $("#search-chat").value);
    const data = await api("GET", "/api/memory/search?" + params.toString());
    const parts = [];
    if (data.facts.length) {
      parts.push(el("h3", "", "Facts (" + data.facts.length + ")"));
      const ul = el("ul", "search-facts");
      for (const f of data.facts) {
        const li = el("li");
        li.dataset.factId = f.fact_id;
        li.appendChild(el("span", "fact-text", f.fact_text));
        li.appendChild(el("span", "meta", " · " + f.category + " · " + validity(f) + " · confidence " +
                                          percent(f.confidence) + (f.status === "current" ? "" : " · " + f.status)));
        ul.appendChild(li);
      }
      parts.push(ul);
    }
    parts.push(el("h3", "", "Messages (" + data.messages.length + ")"));
    if (!data.messages.length) parts.push(el("p", "", "No messages found."));
    const list = el("div", "search-messages");
    data.messages.forEach((m) => list.appendChild(messageItem(m)));
    parts.push(list);
    out.replaceChildren(...parts);
  } catch (e) {
    out.replaceChildren(el("p", "error", "Search failed: " + e.message));
  } finally {
    out.removeAttribute("aria-busy");
    go.disabled = false;
  }
});

// ---- forget: dry run first, then the real thing behind an explicit confirmation ---------------------
const dialog = $("#forget-dialog");
const TITLES = { chat: "Forget this chat?", message: "Forget this message?", fact: "Forget this fact?" };
let ticker = null;

function removedList(removed) {
  const entries = Object.entries(removed || {}).filter(([, n]) => n);  // the stores it touches
  if (!entries.length) return el("p", "", "Nothing stored would change.");
  const ul = el("ul", "removed");
  for (const [store, n] of entries) {
    const li = el("li");
    li.dataset.store = store;
    li.textContent = store.replace(/_/g, " ") + ": " + (typeof n === "object" ? JSON.stringify(n) : n);
    ul.appendChild(li);
  }
  return ul;
}

function forgetBusy(busy) {
  dialog.setAttribute("aria-busy", String(busy));
  $("#forget-confirm").disabled = busy;
  $("#forget-cancel").disabled = busy;
}

async function openForget(target, opener) {
  state.forget = { ...target, running: false, done: false };
  state.opener = opener || null;
  $("#forget-title").textContent = TITLES[target.kind] || "Forget?";
  $("#forget-what").textContent = target.what;
  $("#forget-progress").textContent = "";
  $("#forget-cancel").textContent = "Cancel";
  $("#forget-cancel").disabled = false;
  $("#forget-confirm").hidden = false;
  $("#forget-confirm").disabled = true;
  $("#forget-preview").replaceChildren(el("p", "", "Checking what would be removed…"));
  dialog.showModal();
  $("#forget-cancel").focus();
  const asked = state.forget;
  try {
    const data = await api("POST", "/api/forget", { kind: target.kind, id: target.id, dry_run: true });
    if (state.forget !== asked) return;  // closed (or another forget opened) meanwhile
    const preview = [el("p", "", "This would remove:"), removedList(data.removed),
                     el("p", "hint", "The memory is rebuilt without it; this cannot be undone from here.")];
    $("#forget-preview").replaceChildren(...preview);
    $("#forget-confirm").disabled = false;
  } catch (e) {
    if (state.forget !== asked) return;
    const reason = e.status === 404 && e.code !== "not_found" ? e.message :
      e.status === 404 || e.status === 405 ? e.message + " (is forgetting available on this server?)" : e.message;
    $("#forget-preview").replaceChildren(el("p", "error", "Could not check what would be removed: " + reason));
  }
}

$("#forget-confirm").addEventListener("click", async () => {
  const target = state.forget;
  if (!target || target.running) return;
  target.running = true;
  forgetBusy(true);
  const started = Date.now();
  const progress = $("#forget-progress");
  const tick = () => {
    progress.textContent = "Forgetting… rebuilding the memory for the affected months (this can take a minute). " +
      Math.round((Date.now() - started) / 1000) + " s";
  };
  tick();
  ticker = setInterval(tick, 1000);
  try {
    const data = await api("POST", "/api/forget", { kind: target.kind, id: target.id, dry_run: false });
    target.done = true;
    $("#forget-preview").replaceChildren(el("p", "", "Forgotten. Removed:"), removedList(data.removed));
    progress.textContent = "Done in " + Math.round((Date.now() - started) / 1000) + " s.";
    $("#forget-confirm").hidden = true;
    $("#forget-cancel").textContent = "Close";
    setStatus("Forgotten: " + target.kind + " " + target.id + ".");
    loadAll();
  } catch (e) {
    progress.textContent = "";
    $("#forget-preview").replaceChildren(el("p", "error", "Forget failed: " + e.message));
    $("#forget-cancel").textContent = "Close";
  } finally {
    clearInterval(ticker);
    target.running = false;
    forgetBusy(false);
    $("#forget-confirm").disabled = target.done || $("#forget-confirm").disabled;
    $("#forget-cancel").focus();
  }
});

$("#forget-cancel").addEventListener("click", () => dialog.close());
// Escape while the forget runs would hide the progress of something that cannot be stopped
dialog.addEventListener("cancel", (ev) => { if (state.forget && state.forget.running) ev.preventDefault(); });
dialog.addEventListener("close", () => {
  state.forget = null;
  const opener = state.opener;
  state.opener = null;
  if (opener && document.body.contains(opener)) opener.focus();
  else $("#facts-heading").focus();
});

// ---- loading ---------------------------------------------------------------------------------------
async function loadAll() {
  const failures = [];
  const tasks = [
    api("GET", "/api/memory/profile").then(renderProfile).catch((e) => {
      failures.push(e);
      $("#profile-body").replaceChildren(el("p", "error", "Could not load the profile: " + e.message));
    }),
    loadFacts(false).catch((e) => {
      failures.push(e);
      $("#facts-body").replaceChildren();
      $("#facts-note").textContent = "Could not load the facts: " + e.message;
    }),
    api("GET", "/api/memory/chats").then(renderChats).catch((e) => {
      failures.push(e);
      $("#chats-body").replaceChildren();
      $("#chats-note").textContent = "Could not load the chats: " + e.message;
    }),
  ];
  await Promise.all(tasks);
  if (failures.some((e) => e.status === 401)) setStatus("Enter the access token to see the memory.");
  else if (failures.some((e) => e.code === "memory_not_published")) setStatus("No published memory yet: run `truffle ingest` first.");
  document.body.dataset.loaded = "1";
}

$("#facts-heading").tabIndex = -1;  // a focus target when the button that opened a dialog is gone
loadAll();
