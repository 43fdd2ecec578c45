"""The review page's one stylesheet and one script, served inline (no build step, no static files)."""

STYLE = """
:root { --ink:#1f2328; --muted:#667085; --line:#e4e2dc; --paper:#faf9f6; --card:#fff; --accent:#2f5d8a;
  --yes:#1f7a4d; --yes-bg:#e3f4ea; --no:#b42318; --no-bg:#fdeceb; --mark:#fff1b8; }
* { box-sizing: border-box; }
body { margin:0; background:var(--paper); color:var(--ink);
  font:16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
  padding-bottom:9.5rem; }
code, kbd { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size:.82em; }
kbd { border:1px solid var(--line); border-bottom-width:2px; border-radius:4px; padding:0 .3em;
  background:#fff; color:var(--muted); }
.muted { color:var(--muted); }
.bar { position:sticky; top:0; z-index:2; display:flex; gap:1.5rem; align-items:center; flex-wrap:wrap;
  padding:.55rem 1.5rem; background:#fffdf8ee; border-bottom:1px solid var(--line);
  backdrop-filter:blur(4px); }
.brand { font-weight:600; }
.progress { display:flex; gap:.6rem; align-items:center; color:var(--muted); }
.progress #judged { color:var(--ink); font-weight:600; }
progress { width:9rem; height:.5rem; accent-color:var(--yes); }
.navigation { margin-left:auto; display:flex; gap:1rem; align-items:center; }
.nav { color:var(--accent); text-decoration:none; font-weight:500; }
.nav.disabled { color:#c0c4cc; }
.position { color:var(--muted); }
.only { color:var(--muted); font-size:.9rem; }
.grid { display:grid; grid-template-columns:minmax(0,5fr) minmax(0,6fr); gap:1.25rem; padding:1.25rem 1.5rem;
  max-width:1500px; margin:0 auto; }
@media (max-width: 900px) { .grid { grid-template-columns:1fr; } }
.column { display:flex; flex-direction:column; gap:1rem; min-width:0; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:1rem 1.2rem; }
h1 { font-size:1.45rem; line-height:1.35; margin:.4rem 0 .8rem; font-weight:600; }
h2, .section-title { font-size:.78rem; letter-spacing:.06em; text-transform:uppercase; color:var(--muted);
  margin:0 0 .6rem; font-weight:600; }
h3 { font-size:1.02rem; margin:0 0 .25rem; }
.meta { display:flex; gap:.6rem; align-items:center; }
.kind { font-size:.78rem; padding:.1rem .55rem; border-radius:999px; background:#eef2f7;
  color:var(--accent); }
.kind-false_premise { background:#fff4e5; color:#a15c00; }
.kind-multi_hop { background:#f1ecfb; color:#5b3a9b; }
.sample-id { color:var(--muted); }
.answers { display:flex; flex-wrap:wrap; gap:.4rem; list-style:none; padding:0; margin:0; }
.answer { background:var(--yes-bg); color:#14532d; border-radius:6px; padding:.15rem .6rem; font-weight:600; }
.premise { margin:0; color:#a15c00; }
.changes { margin-top:.7rem; color:var(--muted); font-size:.9rem; }
table.hops { width:100%; border-collapse:collapse; font-size:.95rem; }
.hops th { text-align:left; color:var(--muted); font-weight:500; font-size:.85rem; }
.hops td, .hops th { padding:.3rem .4rem; border-bottom:1px solid var(--line); vertical-align:top; }
.hops .num { color:var(--muted); width:2rem; }
.facts { margin:0; padding-left:1.1rem; }
.facts li { margin:.3rem 0; }
.attributes { display:grid; grid-template-columns:repeat(auto-fill, minmax(9.5rem, 1fr)); gap:.5rem 1rem;
  margin:0; }
.attributes dt { font-size:.78rem; color:var(--muted); }
.attributes dd { margin:0; font-weight:500; overflow-wrap:anywhere; }
.evidence { display:flex; flex-direction:column; gap:1rem; }
.evidence .section-title { margin:0; }
.doc-meta { display:flex; gap:.8rem; flex-wrap:wrap; align-items:baseline; font-size:.85rem;
  margin-bottom:.5rem; }
.url { color:var(--accent); overflow-wrap:anywhere; }
.url.plain { color:var(--muted); }
.passage { margin:0; font-family: Charter, "Bitstream Charter", "Iowan Old Style", Georgia, serif;
  font-size:1.02rem; line-height:1.65; overflow-wrap:anywhere; }
mark strong { font-weight:700; }
mark { background:var(--mark); padding:.05em .1em; border-radius:3px; box-shadow:0 0 0 1px #f2dc7d; }
.warn { color:var(--no); margin:0; }
.judge { position:fixed; left:0; right:0; bottom:0; z-index:2; display:flex; gap:1.5rem; align-items:center;
  flex-wrap:wrap; padding:.8rem 1.5rem; background:#fff; border-top:1px solid var(--line);
  box-shadow:0 -4px 16px #0000000d; }
.criteria { display:flex; flex-direction:column; gap:.35rem; }
.criterion { display:grid; grid-template-columns:8.5rem auto auto; gap:.4rem; align-items:center; }
.criterion .label { font-weight:500; }
.criterion button { font:inherit; font-size:.92rem; padding:.15rem .8rem; border-radius:6px; cursor:pointer;
  border:1px solid var(--line); background:#fff; color:var(--ink); }
.criterion button kbd { margin-left:.2rem; }
.criterion button[data-value=yes][aria-pressed=true] { background:var(--yes-bg); border-color:var(--yes);
  color:var(--yes); font-weight:600; }
.criterion button[data-value=no][aria-pressed=true] { background:var(--no-bg); border-color:var(--no);
  color:var(--no); font-weight:600; }
.note-label { flex:1; min-width:16rem; display:flex; flex-direction:column; gap:.2rem; color:var(--muted);
  font-size:.85rem; }
textarea { font:inherit; font-size:.95rem; color:var(--ink); border:1px solid var(--line); border-radius:6px;
  padding:.4rem .6rem; resize:vertical; }
textarea:focus, button:focus-visible { outline:2px solid var(--accent); outline-offset:1px; }
.status-box { display:flex; flex-direction:column; gap:.3rem; min-width:12rem; }
#status { font-weight:600; }
#status.saving { color:var(--muted); }
#status.error { color:var(--no); }
.keys { font-size:.85rem; color:var(--muted); }
.keys ul { list-style:none; padding:0; margin:.3rem 0 0; position:absolute; bottom:100%; right:1.5rem;
  background:#fff; border:1px solid var(--line); border-radius:8px; padding:.6rem .9rem; }
.keys li { margin:.15rem 0; }
.message { max-width:40rem; margin:4rem auto; }
"""

SCRIPT = """
(() => {
  const page = document.body;
  const token = document.querySelector('meta[name="review-token"]').content;
  const criteria = ["well_formed", "answer_correct", "supported"];
  const keys = {q: ["well_formed", true], a: ["well_formed", false], w: ["answer_correct", true],
    s: ["answer_correct", false], e: ["supported", true], d: ["supported", false]};
  const state = JSON.parse(page.dataset.judgment);
  const note = document.getElementById("note");
  const status = document.getElementById("status");
  const only = document.getElementById("only");
  let noteChanged = false;
  let saving = Promise.resolve();
  only.checked = localStorage.getItem("irbgen-review-only") === "1";

  function paint() {
    for (const button of document.querySelectorAll("button[data-criterion]")) {
      const value = state[button.dataset.criterion];
      const pressed = value !== null && value === (button.dataset.value === "yes");
      button.setAttribute("aria-pressed", String(pressed));
    }
  }

  function show(text, kind) { status.textContent = text; status.className = kind || ""; }

  function save() {
    noteChanged = false;
    const body = JSON.stringify({sample: page.dataset.sample, well_formed: state.well_formed,
      answer_correct: state.answer_correct, supported: state.supported, note: note.value});
    show("saving…", "saving");
    saving = saving.then(() => fetch("/judge", {method: "POST", body: body,
        headers: {"Content-Type": "application/json", "X-Review-Token": token}}))
      .then((response) => {
        if (!response.ok) { throw new Error("HTTP " + response.status); }
        return response.json();
      })
      .then((reply) => {
        document.getElementById("judged").textContent = reply.judged;
        document.getElementById("meter").value = reply.judged;
        show(reply.status, "saved");
      })
      .catch((error) => show("not saved: " + error.message, "error"));
    return saving;
  }

  function set(name, value) { state[name] = value; paint(); save(); }

  function go(target) {
    if (!target) { show(only.checked ? "no other unjudged sample" : "no more samples", "saved"); return; }
    (noteChanged ? save() : saving).then(() => { location.href = target; });
  }

  function step(direction) {
    go(only.checked ? page.dataset[direction + "Unjudged"] : page.dataset[direction]);
  }

  for (const button of document.querySelectorAll("button[data-criterion]")) {
    button.addEventListener("click", () => set(button.dataset.criterion, button.dataset.value === "yes"));
  }
  for (const link of document.querySelectorAll("a.nav")) {
    link.addEventListener("click", (event) => { event.preventDefault(); go(link.getAttribute("href")); });
  }
  note.addEventListener("input", () => { noteChanged = true; });
  note.addEventListener("blur", () => { if (noteChanged) { save(); } });
  only.addEventListener("change", () => localStorage.setItem("irbgen-review-only", only.checked ? "1" : "0"));

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (event.target === note) {
      if (event.key === "Escape") { note.blur(); }
      return;
    }
    if (event.target instanceof HTMLInputElement) { return; }
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (key in keys) { set(...keys[key]); }
    else if (key === "y") { for (const name of criteria) { state[name] = true; } paint(); save(); }
    else if (key === "j" || key === "ArrowRight") { step("next"); }
    else if (key === "k" || key === "ArrowLeft") { step("prev"); }
    else if (key === "u" || key === "Enter") { go(page.dataset.nextUnjudged); }
    else if (key === "n") { note.focus(); }
    else if (key === "o") { only.checked = !only.checked; only.dispatchEvent(new Event("change")); }
    else { return; }
    event.preventDefault();
  });
  paint();
})();
"""
