// truffle web page: ask, read the answer with its citations, open evidence, rate, regenerate.
// Plain DOM, no dependencies. Text from the server is only ever set through textContent.
"use strict";

const TOKEN_KEY = "truffle.token";
const $ = (sel) => document.querySelector(sel);
const state = { history: [], conversationId: null, keep: null };

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
  loadKeep();
  refreshModel();
  refreshCoverage();
});

function setStatus(text, error) {
  const st = $("#status");
  st.textContent = text;
  st.classList.toggle("error", Boolean(error));
}

function askForToken() {
  $("#token-box").hidden = false;
  $("#token-box").open = true;
  $("#token-input").focus();
}

// the model that answers, as /v1/models names it (a promotion under `truffle serve` changes it)
function showModel(listing) {
  const m = listing && listing.data && listing.data[0];
  if (m) $("#model-line").textContent = "model: " + (m.description || m.id);
}

async function refreshModel() {
  try { showModel(await api("GET", "/v1/models")); } catch (_) { /* the status line reports failures */ }
}

// the token box appears only when this server requires a token (an API call answers 401)
(async function probeToken() {
  const headers = token() ? { "Authorization": "Bearer " + token() } : {};
  try {
    const resp = await fetch("/v1/models", { headers });
    if (resp.status === 401) askForToken();
    else {
      if (token()) $("#token-box").hidden = false;  // one was given: let it be changed
      if (resp.ok) showModel(await resp.json());
      refreshCoverage();
    }
  } catch (_) { /* the status line reports failures when the person asks */ }
})();

async function api(method, path, body) {
  const headers = { "Accept": "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token()) headers["Authorization"] = "Bearer " + token();
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await resp.json(); } catch (_) { data = null; }
  if (!resp.ok) {
    if (resp.status === 401) askForToken();
    const msg = (data && data.error && data.error.message) || resp.statusText || "request failed";
    throw new Error(resp.status + ": " + msg);
  }
  return data;
}

// ---- rendering ----------------------------------------------------------------------------------
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function scrollDown() { window.scrollTo(0, document.body.scrollHeight); }

function showQuestion(text) {
  const q = el("article", "turn question");
  q.appendChild(el("div", "text", text));
  $("#conversation").appendChild(q);
  scrollDown();
}

function showFreshness(watermarks) {
  const entries = Object.entries(watermarks || {}).filter(([, d]) => d);
  if (!entries.length) return;
  const dates = entries.map(([, d]) => String(d).slice(0, 10)).sort();
  const line = $("#freshness");
  line.textContent = "memory current to " + dates[dates.length - 1] +
    (entries.length > 1 ? " (" + entries.length + " chats, oldest " + dates[0] + ")" : "");
  line.title = entries.map(([c, d]) => c + ": " + d).join("\n");
}

// "Building memory: 4 of 10 chats, current to 2024-10-21" while a build runs (as /v1/models says it)
function buildingLine(cov) {
  const b = cov && cov.building;
  if (!b) return "";
  const where = b.stage === "profile" ? "all chats in, writing the profile"
    : b.chats_done + " of " + b.chats_total + " chats";
  return "Building memory: " + where + (cov.current_to ? ", current to " + cov.current_to : "");
}

let coveragePoll = null;

// what the published memory covers (GET /api/memory/coverage): each chat by name with the day it is
// current to; while memory builds, how far it is, asked again every few seconds until it is done
function showCoverage(cov) {
  const list = $("#coverage");
  const chats = (cov && cov.chats) || [];
  const building = buildingLine(cov);
  clearTimeout(coveragePoll);
  if (building) coveragePoll = setTimeout(refreshCoverage, 5000);
  if (!chats.length) {
    $("#freshness").textContent = building ? building + " (the first chat answers once it is in)"
      : "no memory published yet: run truffle ingest";
    list.replaceChildren();
    list.hidden = true;
    return;
  }
  showFreshness(Object.fromEntries(chats.map((c) => [c.name || c.chat_id, c.watermark])));
  if (building) $("#freshness").textContent = building;
  if (cov.published_at) $("#freshness").title += "\npublished " + String(cov.published_at).replace("T", " ");
  list.replaceChildren(...chats.map((c) => {
    const li = el("li", "", (c.name || c.chat_id) + " · " + c.current_to);
    li.dataset.chatId = c.chat_id;
    return li;
  }));
  list.hidden = false;
}

async function refreshCoverage() {
  try { showCoverage(await api("GET", "/api/memory/coverage")); return true; }
  catch (e) {
    if ($("#coverage").hidden) $("#freshness").textContent = "memory: unknown (" + e.message + ")";
    return false;
  }
}

const CITE = /\[msg:([^\]\s]{1,64})\]/g;

// Answer text into `box`: "[msg:<id>]" becomes a numbered link that opens the evidence (never the raw id).
// `numbers` maps message id -> its number in this answer (new ids are numbered as they appear).
function renderText(box, text, numbers, weak) {
  box.replaceChildren();
  let last = 0;
  for (const m of text.matchAll(CITE)) {
    if (m.index > last) box.appendChild(document.createTextNode(text.slice(last, m.index)));
    const id = m[1];
    if (!numbers.has(id)) numbers.set(id, numbers.size + 1);
    const n = numbers.get(id);
    const a = el("a", "cite" + (weak && weak.has(id) ? " weak" : ""), String(n));
    a.href = "#evidence";
    a.dataset.messageId = id;
    a.setAttribute("aria-label", "Source " + n + (weak && weak.has(id) ? " (weak evidence)" : ""));
    a.addEventListener("click", (ev) => { ev.preventDefault(); openEvidence(id); });
    const sup = el("sup", "cite-ref");
    sup.appendChild(a);
    box.appendChild(sup);
    last = m.index + m[0].length;
  }
  if (last < text.length) box.appendChild(document.createTextNode(text.slice(last)));
}

function newAnswerNode(afterNode) {
  const node = $("#answer-tpl").content.firstElementChild.cloneNode(true);
  if (afterNode) afterNode.after(node); else $("#conversation").appendChild(node);
  return node;
}

// turn: {turn_id, answer, citations, uncertain, watermarks, fallback, refused, model, reroll_of?}
function showAnswer(turn, afterNode, node) {
  node = node || newAnswerNode(afterNode);
  node.classList.remove("streaming");
  node.dataset.turnId = turn.turn_id;
  node.querySelector(".meta").textContent = (turn.reroll_of ? "regenerated answer" : "answer") +
    (turn.model ? " · " + turn.model : "");
  const weak = new Set(turn.uncertain || []);
  const numbers = new Map();
  (turn.citations || []).forEach((id) => numbers.set(id, numbers.size + 1));
  renderText(node.querySelector(".text"), turn.answer, numbers, weak);

  const notices = node.querySelector(".notices");
  notices.replaceChildren();
  if (turn.fallback) notices.appendChild(el("div", "", "Retrieval-only answer (model: " + turn.fallback + ")."));
  if (turn.refused) notices.appendChild(el("div", "", "Refused by the memory-safety rule."));
  if (turn.reroll_of && turn.kept === false) {
    notices.appendChild(el("div", "", "Not kept: transcripts are off, so neither answer is saved."));
  }
  if (weak.size) notices.appendChild(el("div", "", "Some cited evidence is weak (marked ?)."));

  const cites = node.querySelector(".citations");
  cites.replaceChildren();
  for (const [id, n] of numbers) {
    const w = weak.has(id);
    const b = el("button", "citation" + (w ? " weak" : ""), "[" + n + (w ? "?" : "") + "]");
    b.type = "button";
    b.title = w ? "weak evidence" : "open the message";
    b.setAttribute("aria-label", "Evidence " + n + ": message " + n + (w ? " (weak evidence)" : ""));
    b.dataset.messageId = id;
    b.addEventListener("click", () => openEvidence(id));
    cites.appendChild(b);
  }

  wireFeedback(node, turn.turn_id);
  const rr = node.querySelector(".reroll");
  rr.replaceWith(rr.cloneNode(true));  // one listener, for this turn
  node.querySelector(".reroll").addEventListener("click", (ev) => reroll(turn.turn_id, node, ev.currentTarget));
  node.querySelector(".actions").hidden = false;

  refreshCoverage().then((ok) => { if (!ok) showFreshness(turn.watermarks); });
  scrollDown();
  return node;
}

function wireFeedback(node, turnId) {
  const up = node.querySelector(".thumb.up");
  const down = node.querySelector(".thumb.down");
  const noteForm = node.querySelector(".note-form");
  const note = node.querySelector(".note");
  const ack = node.querySelector(".ack");

  async function rate(rating, text) {
    try {
      const r = await api("POST", "/api/feedback", { turn_id: turnId, rating, note: text || "" });
      if (r && r.recorded === false) {  // the person keeps no ratings: say so, do not pretend
        ack.textContent = "Not recorded: ratings are not being kept (turn on “Keep ratings” above)";
        ack.classList.add("off");
        return false;
      }
      ack.classList.remove("off");
      up.setAttribute("aria-pressed", String(rating === 1));
      down.setAttribute("aria-pressed", String(rating === -1));
      ack.textContent = rating === 0 ? "Rating cleared" : (text ? "Thanks, note sent" : "Thanks");
      return true;
    } catch (e) { setStatus("Feedback failed: " + e.message, true); return false; }
  }

  up.addEventListener("click", async () => {
    const pressed = up.getAttribute("aria-pressed") === "true";
    noteForm.hidden = true;
    await rate(pressed ? 0 : 1);
  });
  down.addEventListener("click", async () => {
    const pressed = down.getAttribute("aria-pressed") === "true";
    if (pressed) { noteForm.hidden = true; await rate(0); return; }
    if (await rate(-1)) { noteForm.hidden = false; note.focus(); }
  });
  noteForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (await rate(-1, note.value.trim())) noteForm.hidden = true;
  });
}

async function reroll(turnId, node, button) {
  button.disabled = true;
  setStatus("Regenerating…");
  try {
    const turn = await api("POST", "/api/reroll", { turn_id: turnId });
    setStatus("");
    let anchor = node;  // after this answer's earlier regenerations
    while (anchor.nextElementSibling && anchor.nextElementSibling.classList.contains("answer")) {
      anchor = anchor.nextElementSibling;
    }
    showAnswer(turn, anchor);
    // the newest answer is what the conversation continues from; both stay on the page and in the store
    for (const h of state.history) {
      if (h.turnId === turnId) { h.content = turn.body || turn.answer; h.turnId = turn.turn_id; }
    }
  } catch (e) { setStatus("Regenerate failed: " + e.message, true); }
  finally { button.disabled = false; }
}

function evidenceItem(m, cited) {
  const item = el("div", "evidence-item" + (cited ? " cited" : ""));
  item.dataset.messageId = m.message_id;
  if (cited) item.setAttribute("aria-current", "true");
  const when = String(m.ts || "").replace("T", " ").slice(0, 16);
  item.appendChild(el("div", "meta", [m.author, when].filter(Boolean).join(" · ")));
  item.appendChild(el("div", "text", m.text || ""));
  return item;
}

function dayLink(chat, day, messageId) {
  const a = el("a", "day-link", "Whole day: " + day + " in " + chat);
  a.href = "#day";
  a.addEventListener("click", (ev) => { ev.preventDefault(); openDay(chat, day, messageId); });
  return a;
}

async function openEvidence(messageId) {
  const panel = $("#evidence-panel");
  const body = $("#evidence-body");
  panel.hidden = false;
  body.replaceChildren(el("p", "", "Loading…"));
  try {
    const ev = await api("GET", "/api/evidence/" + encodeURIComponent(messageId) + "?around=3");
    const list = el("div", "evidence-list");
    for (const m of (ev.neighbours && ev.neighbours.length ? ev.neighbours : [ev])) {
      list.appendChild(evidenceItem(m, m.message_id === messageId));
    }
    const head = el("p", "evidence-where", (ev.chat_id || "") + (ev.day ? " · " + ev.day : ""));
    const parts = [head, list];
    if (ev.day && ev.chat_id) parts.push(dayLink(ev.chat_id, ev.day, messageId));
    body.replaceChildren(...parts);
    const cited = list.querySelector(".cited");
    if (cited) cited.scrollIntoView({ block: "nearest" });
  } catch (e) {
    body.replaceChildren(el("p", "", "Could not load evidence: " + e.message));
  }
}

async function openDay(chat, day, messageId) {
  const body = $("#evidence-body");
  body.replaceChildren(el("p", "", "Loading " + day + "…"));
  try {
    const d = await api("GET", "/api/day/" + encodeURIComponent(chat) + "/" + encodeURIComponent(day));
    const list = el("div", "evidence-list day");
    for (const m of d.messages) list.appendChild(evidenceItem(m, m.message_id === messageId));
    body.replaceChildren(el("p", "evidence-where", chat + " · " + day + " · " + d.messages.length + " messages"), list);
    const cited = list.querySelector(".cited");
    if (cited) cited.scrollIntoView({ block: "center" });
  } catch (e) {
    body.replaceChildren(el("p", "", "Could not load the day: " + e.message));
  }
}
$("#evidence-close").addEventListener("click", () => { $("#evidence-panel").hidden = true; });

// ---- what is kept: the person's choice, GET/PUT /api/settings (saved in the chat's store) ----------
const keepBoxes = { transcripts: $("#keep-transcripts"), content: $("#keep-content"), feedback: $("#keep-feedback") };

function showKeep(s) {
  state.keep = s;
  $("#keep-state").textContent = s.summary;
  for (const [k, box] of Object.entries(keepBoxes)) box.checked = Boolean(s[k]);
  keepBoxes.content.disabled = !s.transcripts;  // text is only kept alongside its transcript
  const days = $("#keep-days");
  if (document.activeElement !== days) days.value = String(s.retention_days);  // never under the person's typing
}

async function loadKeep() {
  try { showKeep(await api("GET", "/api/settings")); }
  catch (e) { $("#keep-state").textContent = "What is kept: unknown (" + e.message + ")"; }
}

async function saveKeep(change) {
  try { showKeep(await api("PUT", "/api/settings", change)); }
  catch (e) {
    setStatus("Could not save what is kept: " + e.message, true);
    if (state.keep) showKeep(state.keep);
  }
}

for (const [k, box] of Object.entries(keepBoxes)) {
  box.addEventListener("change", () => saveKeep({ [k]: box.checked }));
}
function commitDays() {
  const box = $("#keep-days");
  const n = Number(box.value);
  if (state.keep && n === state.keep.retention_days) return;
  if (Number.isInteger(n) && n >= 1 && n <= 3650) saveKeep({ retention_days: n });
  else if (state.keep) box.value = String(state.keep.retention_days);
}
$("#keep-days").addEventListener("change", commitDays);
$("#keep-days").addEventListener("keydown", (ev) => { if (ev.key === "Enter") { ev.preventDefault(); commitDays(); } });
loadKeep();

// ---- asking ---------------------------------------------------------------------------------------
// POST /v1/chat/completions with stream: true; the answer grows as the model writes it
async function askStreaming(messages, node) {
  const headers = { "Content-Type": "application/json", "Accept": "text/event-stream" };
  if (token()) headers["Authorization"] = "Bearer " + token();
  const body = { model: "truffle", messages, stream: true };
  if (state.conversationId) body.conversation_id = state.conversationId;
  const resp = await fetch("/v1/chat/completions", { method: "POST", headers, body: JSON.stringify(body) });
  if (!resp.ok) {
    let data = null;
    try { data = await resp.json(); } catch (_) { data = null; }
    if (resp.status === 401) askForToken();
    throw new Error(resp.status + ": " + ((data && data.error && data.error.message) || resp.statusText));
  }
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  const textBox = node.querySelector(".text");
  const numbers = new Map();
  let buf = "", text = "", final = null, model = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const event = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const data = event.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
      if (!data || data === "[DONE]") continue;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(chunk.error.message);
      model = chunk.model || model;
      const delta = (chunk.choices && chunk.choices[0] && chunk.choices[0].delta) || {};
      if (delta.content) {
        text += delta.content;
        if (!final) setStatus("");
        renderText(textBox, text, numbers);
        node.dataset.chunks = String(Number(node.dataset.chunks || 0) + 1);
      }
      if (chunk.truffle) final = chunk.truffle;
    }
  }
  if (!final) throw new Error("the answer stream ended early");
  return { ...final, answer: final.answer || text, model };
}

$("#ask-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const box = $("#question");
  const text = box.value.trim();
  if (!text) return;
  const send = $("#send");
  send.disabled = true;
  setStatus("Searching your memory…");
  showQuestion(text);
  box.value = "";
  const messages = state.history.map(({ role, content }) => ({ role, content }));
  messages.push({ role: "user", content: text });
  const node = newAnswerNode();
  node.classList.add("streaming");
  node.querySelector(".meta").textContent = "answer";
  node.querySelector(".actions").hidden = true;
  scrollDown();
  try {
    const turn = await askStreaming(messages, node);
    state.conversationId = turn.conversation_id || state.conversationId;
    state.history.push({ role: "user", content: text });
    state.history.push({ role: "assistant", content: turn.body || turn.answer, turnId: turn.turn_id });
    setStatus("");
    showAnswer(turn, null, node);
    refreshModel();
  } catch (e) {
    node.remove();
    setStatus("Error: " + e.message, true);
  } finally {
    send.disabled = false;
    box.focus();
  }
});

$("#question").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); $("#ask-form").requestSubmit(); }
});
