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
});

function setStatus(text) { $("#status").textContent = text; }

async function api(method, path, body) {
  const headers = { "Accept": "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token()) headers["Authorization"] = "Bearer " + token();
  const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await resp.json(); } catch (_) { data = null; }
  if (!resp.ok) {
    if (resp.status === 401) { $("#token-box").open = true; $("#token-input").focus(); }
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

// turn: {turn_id, answer, citations, uncertain, watermarks, fallback, refused, model, reroll_of?}
function showAnswer(turn, afterNode) {
  const node = $("#answer-tpl").content.firstElementChild.cloneNode(true);
  node.dataset.turnId = turn.turn_id;
  node.querySelector(".meta").textContent = (turn.reroll_of ? "regenerated answer" : "answer") +
    (turn.model ? " · " + turn.model : "");
  node.querySelector(".text").textContent = turn.answer;

  const notices = node.querySelector(".notices");
  if (turn.fallback) notices.appendChild(el("div", "", "Retrieval-only answer (model: " + turn.fallback + ")."));
  if (turn.refused) notices.appendChild(el("div", "", "Refused by the memory-safety rule."));
  if (turn.reroll_of && turn.kept === false) {
    notices.appendChild(el("div", "", "Not kept: transcripts are off, so neither answer is saved."));
  }
  const weak = new Set(turn.uncertain || []);
  if (weak.size) notices.appendChild(el("div", "", "Some cited evidence is weak (marked ?)."));

  const cites = node.querySelector(".citations");
  (turn.citations || []).forEach((id, i) => {
    const w = weak.has(id);
    const b = el("button", "citation" + (w ? " weak" : ""), "[" + (i + 1) + (w ? "?" : "") + "]");
    b.type = "button";
    b.title = "message " + id + (w ? " (weak evidence)" : "");
    b.setAttribute("aria-label", "Evidence " + (i + 1) + ": message " + id + (w ? " (weak evidence)" : ""));
    b.dataset.messageId = id;
    b.addEventListener("click", () => openEvidence(id));
    cites.appendChild(b);
  });

  wireFeedback(node, turn.turn_id);
  node.querySelector(".reroll").addEventListener("click", (ev) => reroll(turn.turn_id, node, ev.currentTarget));

  if (afterNode) afterNode.after(node); else $("#conversation").appendChild(node);
  showFreshness(turn.watermarks);
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
    } catch (e) { setStatus("Feedback failed: " + e.message); return false; }
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
  } catch (e) { setStatus("Regenerate failed: " + e.message); }
  finally { button.disabled = false; }
}

async function openEvidence(messageId) {
  const panel = $("#evidence-panel");
  const body = $("#evidence-body");
  panel.hidden = false;
  body.replaceChildren(el("p", "", "Loading…"));
  try {
    const ev = await api("GET", "/api/evidence/" + encodeURIComponent(messageId));
    const item = el("div", "evidence-item");
    item.dataset.messageId = messageId;
    const who = [ev.author || ev.sender, ev.chat_name || ev.chat_id || ev.chat, ev.ts || ev.timestamp]
      .filter(Boolean).join(" · ");
    item.appendChild(el("div", "meta", who));
    item.appendChild(el("div", "text", ev.text || ev.content || ev.text_en || ""));
    item.appendChild(el("div", "meta", "message " + messageId));
    body.replaceChildren(item);
  } catch (e) {
    body.replaceChildren(el("p", "", "Could not load evidence: " + e.message));
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
    setStatus("Could not save what is kept: " + e.message);
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
$("#ask-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const box = $("#question");
  const text = box.value.trim();
  if (!text) return;
  const send = $("#send");
  send.disabled = true;
  setStatus("Thinking…");
  showQuestion(text);
  box.value = "";
  const messages = state.history.map(({ role, content }) => ({ role, content }));
  messages.push({ role: "user", content: text });
  try {
    const body = { model: "truffle", messages };
    if (state.conversationId) body.conversation_id = state.conversationId;
    const data = await api("POST", "/v1/chat/completions", body);
    const t = data.truffle || {};
    const turn = { ...t, answer: data.choices[0].message.content, model: data.model };
    state.conversationId = t.conversation_id || state.conversationId;
    state.history.push({ role: "user", content: text });
    state.history.push({ role: "assistant", content: turn.body || turn.answer, turnId: turn.turn_id });
    setStatus("");
    showAnswer(turn);
  } catch (e) {
    setStatus("Error: " + e.message);
  } finally {
    send.disabled = false;
    box.focus();
  }
});

$("#question").addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); $("#ask-form").requestSubmit(); }
});
