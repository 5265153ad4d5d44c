// evalspec report page. Reads the JSON blocks of this file; fetches nothing; puts every string from the
// results on screen with textContent (never as HTML): answers, prompts and reflections are untrusted.
"use strict";
(function () {
  const F_FAIL = 1, F_NOT_SCORED = 2, F_UNSCORED_POINT = 4, F_ERROR = 8, F_PENDING = 16, F_MISSING = 32;
  const F_REGRESSED = 64, F_IMPROVED = 128, F_CHANGED = 256;
  const ROW_H = 30, OVERSCAN = 8;

  const D = JSON.parse(document.getElementById("evalspec-data").textContent);
  const M = D.models.length, N = D.items.length, RUNS = D.runs.length, NEW = RUNS - 1, DIFF = D.mode === "diff";
  const scores = D.scores.map((a) => Float64Array.from(a, (x) => (x === null ? NaN : x)));
  const flags = D.flags.map((a) => Int32Array.from(a));
  // The details blocks (answers, points, messages) follow this script in the file, in chunks of D.chunk
  // items per run: the page is drawn before the browser has read them (DOMContentLoaded), and a chunk is
  // parsed only when a cell in it is opened or the answers are searched.
  const CHUNK = D.chunk;
  const chunks = [];
  let loaded = document.readyState !== "loading";
  document.addEventListener("DOMContentLoaded", () => { loaded = true; });
  function whenLoaded(fn) {
    if (loaded) fn(); else document.addEventListener("DOMContentLoaded", () => fn(), { once: true });
  }
  function chunk(n, c) {
    const key = n * D.chunks + c;
    if (!chunks[key]) {
      const d = JSON.parse(document.getElementById("evalspec-details-" + n + "-" + c).textContent);
      const strings = d.strings;
      for (const cell of d.cells) {
        if (!cell) continue;
        for (const p of cell[2]) for (const f of [0, 3, 4, 5, 8, 11]) p[f] = p[f] < 0 ? null : strings[p[f]];
      }
      chunks[key] = d;
    }
    return chunks[key];
  }
  function cellDetail(n, i, m) {
    return chunk(n, Math.floor(i / CHUNK)).cells[(i % CHUNK) * M + m];
  }
  function itemInfo(i) {
    return chunk(NEW, Math.floor(i / CHUNK)).items[i % CHUNK];
  }

  // Column headers: the models' names less what they all share (`openai:` in front, `[temp:0]` behind),
  // so five `openai:gpt-…` columns read apart; the full name is the header's title and the select's text.
  const SHORT = (() => {
    const names = D.models;
    if (names.length < 2) return names.slice();
    let pre = names[0], suf = names[0];
    for (const n of names) {
      while (!n.startsWith(pre)) pre = pre.slice(0, -1);
      while (!n.endsWith(suf)) suf = suf.slice(1);
    }
    const cut = Math.max(pre.lastIndexOf(":"), pre.lastIndexOf("/")) + 1;  // at a separator: `openai:`, not `openai:gpt-4`
    pre = pre.slice(0, cut);
    suf = suf.includes("[") ? suf.slice(suf.indexOf("[")) : "";  // `[temp:0]`, not `-mini[temp:0]`
    const out = names.map((n) => n.slice(pre.length, n.length - suf.length) || n);
    if (new Set(out).size !== out.length) return names.slice();
    // Models of several providers: each without its provider while they still read apart (the full id
    // is the header's title and the detail's "model" line).
    const bare = out.map((n) => n.replace(/^[A-Za-z0-9_-]+:(?=.)/, ""));
    return new Set(bare).size === bare.length ? bare : out;
  })();

  const S = { active: false, model: -1, fail: false, ns: false, err: false, reg: false, imp: false, q: "", sort: "file", row: 0, col: 0 };
  let rows = new Int32Array(0), cols = [];
  let hay = null;

  // --- small DOM helpers: text only ----------------------------------------------------------------
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    if (props) for (const k in props) {
      if (k === "class") e.className = props[k];
      else if (k === "text") e.textContent = props[k];
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), props[k]);
      else e.setAttribute(k, props[k]);
    }
    for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : String(c));
    return e;
  }
  function svg(tag, attrs, text) {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const nf = new Intl.NumberFormat("en-US");
  const num = (x) => (x === null || x === undefined ? "—" : nf.format(x));
  const sc = (x) => (x === null || x === undefined || Number.isNaN(x) ? "—" : x.toFixed(2));
  const sc3 = (x) => (x === null || x === undefined ? "—" : x.toFixed(3));
  const dur = (ms) => (ms === null || ms === undefined ? "—" : ms >= 1000 ? (ms / 1000).toLocaleString("en-US", { maximumFractionDigits: 1 }) + " s" : Math.round(ms) + " ms");
  // As the cost table and the terminal write dollars (report/costs.py usd_text): a small cost is not "$0.0000".
  const usd = (x) => (x === null || x === undefined ? "—" : x >= 1 ? "$" + x.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 }) : "$" + x.toFixed(6));

  // The run's own time (its database's sessions added up), not its calls' durations (they overlap):
  // "wall time 9.5 s", "wall time 12.3 s (2 sessions: 8.2 s + 4.1 s)". As report/markdown.py wall_text.
  const secs = (x) => (x < 60 ? x.toFixed(1) + " s" : x < 3600 ? Math.floor(x / 60) + " min " + String(Math.round(x % 60)).padStart(2, "0") + " s"
    : Math.floor(x / 3600) + " h " + String(Math.floor((x % 3600) / 60)).padStart(2, "0") + " min");
  const wallText = (w) => "wall time " + secs(w.reduce((a, b) => a + b, 0)) + (w.length > 1 ? " (" + w.length + " sessions: " + w.map(secs).join(" + ") + ")" : "");

  // --- layout ----------------------------------------------------------------------------------------
  const app = document.getElementById("app");
  const run = D.runs[NEW];
  const header = el("header", { class: "top" });
  header.append(el("h1", { text: (DIFF && D.runs[0].title !== run.title ? D.runs[0].title + " → " : "") + run.title + (DIFF ? " (comparison of two runs)" : "") }));
  for (let n = 0; n < RUNS; n++) {
    const r = D.runs[n];
    // In a comparison each side is named apart (label, then time, then file: report/diff.py run_names).
    const who = DIFF ? (n === 0 ? "old: " : "new: ") + D.diff.names[n] : "run " + (r.label || "—") + " · " + (r.timestamp || "—");
    header.append(el("div", { class: "meta", text: who + (r.wall ? " · " + wallText(r.wall) : "") + " · " + (r.kind === "weval" ? "Weval blueprint" : "AgentV suite") +
      " · " + r.source + (r.evalFile ? " · from " + r.evalFile : "") }));
  }
  const notes = el("ul", { class: "notes" });
  for (const r of D.runs) for (const t of r.notes) notes.append(el("li", { text: t }));
  header.append(notes);
  if (DIFF) {
    const d = D.diff;
    const b = el("div", { class: "banner", id: "diff-banner" },
      el("button", { class: "reg", id: "show-reg", onclick: () => setFlag("reg", true) }, "▼ " + num(d.regressed) + " regressed"),
      el("button", { class: "imp", id: "show-imp", onclick: () => setFlag("imp", true) }, "▲ " + num(d.improved) + " improved"),
      el("span", { class: "kv" }, num(d.changed) + " changed otherwise · " + num(d.added) + " new · " + num(d.removed) + " gone · score changes under " + d.threshold + " not counted"));
    header.append(b);
  }
  app.append(header);

  // The summary, the chart and the costs fold away: open while the whole matrix fits on the screen
  // beside them, folded (one line) once it has more rows than that, so the matrix and the selected cell
  // get the screen. The one line still says the means and the cost.
  const overview = el("section", { class: "overview" });
  overview.append(summaryTable(), chart());
  const fold = el("details", { id: "overview-box" }, el("summary", { id: "overview-line", text: overviewLine() }), overview);
  if (run.costs && run.costs.lines && run.costs.lines.length) fold.append(costTable(run.costs));
  fold.open = N * ROW_H <= Math.max(0, window.innerHeight - 420);
  app.append(fold);

  const q = el("input", { type: "search", id: "q", placeholder: "Search ids, prompts, answers, criteria, reasons  (/)", "aria-label": "Search" });
  const modelSel = el("select", { id: "model", "aria-label": "Model" }, el("option", { value: "-1", text: "All models" }));
  D.models.forEach((m, i) => modelSel.append(el("option", { value: String(i), text: m })));
  const sortSel = el("select", { id: "sort", "aria-label": "Sort" });
  const sorts = [["file", "File order"], ["id", "Id"], ["worst", "Score: worst first"], ["best", "Score: best first"], ["disagree", "Disagreement between models"]];
  if (DIFF) sorts.push(["change", "Change: biggest drop first"]);
  for (const [v, t] of sorts) sortSel.append(el("option", { value: v, text: t }));
  const count = el("span", { class: "count", id: "count", "aria-live": "polite" });
  const check = (id, key, label, k) => el("label", { title: "key: " + k }, el("input", { type: "checkbox", id, onchange: (e) => setFlag(key, e.target.checked) }), " " + label + " ", el("kbd", { text: k }));
  const toolbar = el("div", { class: "toolbar" }, q,
    check("f-fail", "fail", "Failures", "f"), check("f-ns", "ns", "Not scored", "n"), check("f-err", "err", "Errors", "e"),
    DIFF ? check("f-reg", "reg", "Regressions", "r") : null, DIFF ? check("f-imp", "imp", "Improvements", "i") : null,
    modelSel, sortSel, count,
    el("span", { class: "kv" }, "* some points not scored · ", el("kbd", { text: "↑↓←→" }), " move ", el("kbd", { text: "Home/End" }), " ", el("kbd", { text: "Esc" }), " clear"));
  app.append(toolbar);

  const grid = el("div", { id: "grid", tabindex: "0", role: "grid", "aria-label": "Results matrix" });
  const ghead = el("div", { class: "ghead", role: "row" });
  const gbody = el("div", { class: "gbody" });
  grid.append(ghead, gbody);
  const detail = el("aside", { id: "detail", "aria-live": "polite" }, el("p", { class: "hint", text: "Select a cell (click, or arrow keys) to see the prompt, the answer and every point." }));
  app.append(el("main", null, grid, detail));
  app.removeAttribute("aria-busy");

  // --- real tokens and cost (report/costs.py): a role and a model a row, judges apart; unknown stays unknown
  function costTable(c) {
    const money = (x) => (x === null || x === undefined ? "unknown" : x >= 1 ? "$" + x.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 }) : "$" + x.toFixed(6));
    const t = el("table", { class: "summary", id: "costs" });
    t.append(el("caption", { text: "Tokens and cost" }));
    // The way the calls were sent, when some went through a batch API (at its price).
    const via = c.lines.some((x) => x.via === "batch");
    const heads = ["role", "model", ...(via ? ["sent"] : []), "calls", "input tokens", "output tokens", "cost"];
    t.append(el("thead", null, el("tr", null, ...heads.map((h) => el("th", { text: h })))));
    const tb = el("tbody");
    for (const x of c.lines) {
      tb.append(el("tr", null, el("td", { text: x.role }), el("td", { class: "model", text: x.model }),
        ...(via ? [el("td", { class: "via", text: x.via || "interactive" })] : []), el("td", { text: num(x.calls) }),
        el("td", { text: num(x.input_tokens) }), el("td", { text: num(x.output_tokens) }), el("td", { text: money(x.usd) })));
    }
    t.append(tb);
    const unpriced = c.unpriced || [];
    // As report/costs.py total_text: nothing priced reads "unknown", not "at least $0.000000".
    const total = unpriced.length && !c.usd ? "unknown (no price for " + unpriced.join(", ") + ")"
      : (unpriced.length ? "at least " : "") + money(c.usd) + (unpriced.length ? " + unknown for " + unpriced.join(", ") : "");
    const box = el("section", { class: "overview", id: "cost" }, t, el("p", { class: "kv", id: "cost-total", text: "Total cost: " + total }));
    if (c.stopped) box.append(el("p", { class: "kv", id: "cost-stopped", text: "Stopped: " + c.stopped }));
    return box;
  }

  function overviewLine() {
    const means = run.summary.map((s) => SHORT[D.models.indexOf(s.model)] + " " + sc3(s.mean)).join(" · ");
    const c = run.costs;
    const unknown = (c && c.unpriced || []).length;
    const cost = c && c.lines && c.lines.length ? " · total cost " + (unknown && !c.usd ? "unknown" : (unknown ? "at least " : "") + usd(c.usd)) : "";
    return "Summary" + (c && c.lines && c.lines.length ? " and costs" : "") + ": " + (means.length > 160 ? means.slice(0, 159) + "…" : means) + cost;
  }

  // --- summary and chart -------------------------------------------------------------------------------
  function summaryTable() {
    const heads = ["model", "cells", "mean", "pass", "borderline", "fail", "not scored", "errors", "tokens in / out", "cost", "call time"];
    if (DIFF) heads.splice(3, 0, "old mean", "Δ", "regressed", "improved");
    const t = el("table", { class: "summary", id: "summary" });
    t.append(el("thead", null, el("tr", null, ...heads.map((h) => el("th", { text: h })))));
    const tb = el("tbody");
    const per = DIFF ? Object.fromEntries(D.diff.perModel.map((p) => [p.model, p])) : {};
    for (const s of run.summary) {
      const mi = D.models.indexOf(s.model);
      const cells = [el("td", { class: "model", title: "Show only " + s.model, text: s.model, onclick: () => { modelSel.value = String(mi); S.model = mi; S.col = 0; refresh(); } }),
        el("td", { text: num(s.cells) }), el("td", { text: sc3(s.mean) })];
      if (DIFF) {
        const p = per[s.model] || {};
        const delta = p.new_mean !== null && p.old_mean !== null && p.new_mean !== undefined && p.old_mean !== undefined ? p.new_mean - p.old_mean : null;
        cells.push(el("td", { text: sc3(p.old_mean) }), el("td", { class: delta < 0 ? "reg" : delta > 0 ? "imp" : "", text: delta === null ? "—" : (delta > 0 ? "+" : "") + delta.toFixed(3) }),
          el("td", { class: "reg", text: num(p.regressed) }), el("td", { class: "imp", text: num(p.improved) }));
      }
      cells.push(el("td", { text: num(s.pass) }), el("td", { text: num(s.borderline) }), el("td", { text: num(s.fail) }),
        el("td", { text: num(s.notScored) }), el("td", { text: num(s.errors) + (s.pending ? " (" + num(s.pending) + " pending)" : "") }),
        el("td", { text: s.tokensIn === null ? "—" : num(s.tokensIn) + " / " + num(s.tokensOut) }),
        el("td", { text: s.costUnknown ? (s.cost === null ? "unknown" : "at least " + usd(s.cost)) : usd(s.cost), title: "the answers' cost (judges in the cost table)" }),
        el("td", { text: dur(s.durationMs), title: "the model's calls' durations added up (they overlap: not the run's wall time)" }));
      tb.append(el("tr", null, ...cells));
    }
    t.append(tb);
    return t;
  }

  function chart() {
    // Score distribution per model: ten bins from 0 to 1, then not scored and errors.
    const w = 200, rowH = 30, left = 130, top = 16;
    const h = top + rowH * run.summary.length + 16;
    const root = svg("svg", { class: "chart", id: "chart", width: String(left + w + 90), height: String(h), role: "img", "aria-label": "Score distribution per model" });
    root.append(svg("text", { x: String(left), y: "11", class: "axis" }, "scores 0 → 1 · not scored · errors"));
    let max = 1;
    for (const s of run.summary) { for (const b of run.histograms[s.model] || []) max = Math.max(max, b); max = Math.max(max, s.notScored, s.errors); }
    const bw = w / 10;
    run.summary.forEach((s, r) => {
      const y = top + r * rowH;
      const mi = D.models.indexOf(s.model), short = mi >= 0 ? SHORT[mi] : s.model;
      const label = short.length > 20 ? short.slice(0, 19) + "…" : short;
      root.append(svg("text", { x: "0", y: String(y + rowH / 2 + 4) }, label));
      const bars = (run.histograms[s.model] || []).map((n, i) => [n, "b" + (i === 9 ? 10 : i), (i / 10).toFixed(1) + "–" + ((i + 1) / 10).toFixed(1)]);
      bars.push([s.notScored, "ns", "not scored"], [s.errors, "err", "errors"]);
      bars.forEach(([n, cls, what], i) => {
        const bh = Math.round((rowH - 8) * n / max);
        const x = left + i * bw + (i >= 10 ? 10 : 0);
        const rect = svg("rect", { x: String(x + 1), y: String(y + rowH - 4 - bh), width: String(bw - 2), height: String(Math.max(bh, n ? 1 : 0)) });
        if (cls === "ns") rect.style.fill = "var(--ns-bg)";
        else if (cls === "err") rect.style.fill = "var(--err-bg)";
        else rect.setAttribute("class", cls);
        rect.append(svg("title", {}, s.model + ": " + num(n) + " cell(s), " + what));
        root.append(rect);
      });
      root.append(svg("line", { x1: String(left), x2: String(left + w + 2 * bw + 10), y1: String(y + rowH - 4), y2: String(y + rowH - 4), stroke: "currentColor", "stroke-opacity": "0.25" }));
    });
    return root;
  }

  // --- filtering and sorting -----------------------------------------------------------------------
  function itemHay() {
    if (!hay) { hay = new Array(N); for (let i = 0; i < N; i++) hay[i] = (D.items[i] + "\n" + D.snippets[i]).toLowerCase(); }
    return hay;
  }
  // What search reads beyond ids and the prompts' first words, lower-cased, built chunk by chunk (yielding
  // to the page in between): per cell its answer, its points' texts and the reasons given (judges'
  // reflections, hits and misses, why not scored); per item its whole prompt, criteria and ideal answer.
  let answersLower = null, itemsLower = null, answersBuilding = false;
  function pointText(p) {
    return [p[0], p[4], p[5], ...(p[6] || []), ...(p[7] || [])].filter((x) => typeof x === "string").join("\n");
  }
  function buildAnswers(done) {
    if (answersLower) { done(); return; }
    if (answersBuilding) return;
    answersBuilding = true;
    const out = new Array(N * M).fill("");
    const itemsOut = new Array(N).fill("");
    let c = 0;
    const step = () => {
      const start = performance.now();
      while (c < D.chunks && performance.now() - start < 40) {
        const block = chunk(NEW, c);
        const cells = block.cells;
        const base = c * CHUNK * M;
        for (let k = 0; k < cells.length; k++) {
          const d = cells[k];
          if (!d) continue;
          let text = d[0] || "";
          if (d[1]) text += "\n" + d[1].map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
          for (const p of d[2] || []) text += "\n" + pointText(p);
          if (d[3]) text += "\n" + d[3];
          out[base + k] = text.toLowerCase();
        }
        (block.items || []).forEach((info, k) => {
          if (!info) return;
          const [msgs, description, ideal] = info;
          itemsOut[c * CHUNK + k] = [...(msgs || []).map((m) => (typeof m.content === "string" ? m.content : "")), description || "", ideal || ""].join("\n").toLowerCase();
        });
        c++;
      }
      if (c < D.chunks) { count.textContent = "searching the answers… " + Math.round(100 * c / D.chunks) + "%"; setTimeout(step, 0); }
      else { answersLower = out; itemsLower = itemsOut; answersBuilding = false; done(); }
    };
    whenLoaded(step);
  }
  // Which cells and items the search matched (drawn with a mark), for the rows shown.
  let hitCells = null, hitItems = null;

  function recompute() {
    cols = S.model < 0 ? D.models.map((_, i) => i) : [S.model];
    const want = (S.fail ? F_FAIL : 0) | (S.ns ? F_NOT_SCORED | F_UNSCORED_POINT : 0) | (S.err ? F_ERROR : 0) |
      (S.reg ? F_REGRESSED : 0) | (S.imp ? F_IMPROVED : 0);
    const fl = flags[NEW];
    const query = S.q.trim().toLowerCase();
    const h = query ? itemHay() : null;
    const ans = query ? answersLower : null;
    const out = new Int32Array(N);
    hitCells = query ? new Uint8Array(N * M) : null;
    hitItems = query ? new Uint8Array(N) : null;
    let k = 0;
    for (let i = 0; i < N; i++) {
      const base = i * M;
      if (want) {
        let hit = false;
        for (let c = 0; c < cols.length; c++) if (fl[base + cols[c]] & want) { hit = true; break; }
        if (!hit) continue;
      }
      if (query) {
        let hit = h[i].indexOf(query) >= 0 || (itemsLower !== null && itemsLower[i].indexOf(query) >= 0);
        if (hit) hitItems[i] = 1;
        if (ans) for (let c = 0; c < cols.length; c++) if (ans[base + cols[c]].indexOf(query) >= 0) { hit = true; hitCells[base + cols[c]] = 1; }
        if (!hit) continue;
      }
      out[k++] = i;
    }
    rows = out.subarray(0, k);
    sortRows();
  }

  function rowKey(kind) {
    const key = new Float64Array(N);
    const s = scores[NEW];
    for (let i = 0; i < N; i++) {
      let sum = 0, n = 0, lo = Infinity, hi = -Infinity, drop = Infinity;
      for (const c of cols) {
        const v = s[i * M + c];
        if (kind === "change") {
          const o = scores[0][i * M + c];
          if (!Number.isNaN(v) && !Number.isNaN(o)) drop = Math.min(drop, v - o);
          continue;
        }
        if (Number.isNaN(v)) continue;
        sum += v; n++; lo = Math.min(lo, v); hi = Math.max(hi, v);
      }
      if (kind === "change") key[i] = drop === Infinity ? 0 : drop;
      else if (kind === "disagree") key[i] = n > 1 ? -(hi - lo) : 1;  // most disagreement first
      else if (kind === "worst") key[i] = n ? sum / n : 2;
      else key[i] = n ? -(sum / n) : 2;
    }
    return key;
  }

  function sortRows() {
    if (S.sort === "file") return;
    const arr = Array.from(rows);
    if (S.sort === "id") arr.sort((a, b) => (D.items[a] < D.items[b] ? -1 : D.items[a] > D.items[b] ? 1 : 0));
    else { const key = rowKey(S.sort); arr.sort((a, b) => key[a] - key[b] || a - b); }
    rows = Int32Array.from(arr);
  }

  // --- the matrix (only the visible rows are in the DOM) ---------------------------------------------
  // Every row is its own CSS grid (only the visible rows exist), so the columns must not depend on what a
  // row holds: they are fixed pixel widths computed from the pane's width, the same for the header and
  // every row. The item column is clamped (its text ellipsised); model columns share the rest but never
  // get narrower than COL_MIN: then the pane scrolls sideways while the item column stays (sticky).
  // At 1024 px five models fit beside the detail: the item column gives way (down to ITEM_FLOOR) before
  // the model columns scroll sideways, and a cell's label ("0.65", "error", "pending") needs COL_MIN.
  const ITEM_MIN = 160, ITEM_FLOOR = 110, ITEM_MAX = 320, COL_MIN = 72;
  let colW = { item: ITEM_MIN, model: COL_MIN, total: ITEM_MIN };
  function measureColumns() {
    const w = grid.clientWidth || 800;
    let item = Math.round(Math.min(ITEM_MAX, Math.max(ITEM_MIN, w * 0.3)));
    if (w - item < COL_MIN * cols.length) item = Math.max(ITEM_FLOOR, w - COL_MIN * cols.length);
    const model = Math.max(COL_MIN, Math.floor((w - item) / Math.max(1, cols.length)));
    colW = { item, model, total: item + model * cols.length };
  }
  function columns() {
    return colW.item + "px repeat(" + cols.length + ", " + colW.model + "px)";
  }
  function drawHead() {
    measureColumns();
    ghead.style.gridTemplateColumns = columns();
    ghead.style.width = colW.total + "px";
    ghead.replaceChildren(el("div", { text: DIFF ? "item (old → new)" : "item" }), ...cols.map((c) => el("div", { class: "mhead", title: D.models[c], text: SHORT[c] })));
  }
  function cellClass(k, fl) {
    if (fl & F_ERROR) return "cell err";
    if (fl & F_PENDING) return "cell pend";
    if (fl & F_MISSING) return "cell miss";
    if (fl & F_NOT_SCORED) return "cell ns";
    // A failed verdict is never coloured as a pass or borderline, whatever the score (a required check missed).
    return "cell b" + Math.max(0, Math.min(fl & F_FAIL ? 5 : 10, Math.floor(scores[NEW][k] * 10 + 1e-9)));
  }
  function cellLabel(k, fl) {
    if (fl & F_ERROR) return "error";
    if (fl & F_PENDING) return "pending";
    if (fl & F_MISSING) return "—";
    if (fl & F_NOT_SCORED) return "n/s";
    return sc(scores[NEW][k]) + ((fl & F_UNSCORED_POINT) ? "*" : "");  // * some points not scored
  }
  function oldLabel(k) {
    const f = flags[0][k];
    if (f & F_ERROR) return "err";
    if (f & (F_PENDING | F_MISSING)) return "—";
    if (f & F_NOT_SCORED) return "n/s";
    return sc(scores[0][k]);
  }
  function drawRows() {
    const top = grid.scrollTop - ghead.offsetHeight;
    const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const last = Math.min(rows.length, Math.ceil((top + grid.clientHeight) / ROW_H) + OVERSCAN);
    const template = columns();
    const frag = document.createDocumentFragment();
    for (let r = first; r < last; r++) {
      const i = rows[r];
      const row = el("div", { class: "row", role: "row" });
      row.style.top = r * ROW_H + "px";
      row.style.gridTemplateColumns = template;
      row.style.width = colW.total + "px";
      row.append(el("div", { class: "idcell" + (hitItems && hitItems[i] ? " mark-hit" : ""), title: D.items[i] }, el("b", { text: D.items[i] }), el("span", { text: D.snippets[i] })));
      cols.forEach((c, ci) => {
        const k = i * M + c, fl = flags[NEW][k];
        let cls = cellClass(k, fl);
        const cell = el("div", { role: "gridcell", "data-i": String(i), "data-m": String(c), "data-r": String(r), "data-c": String(ci) }, cellLabel(k, fl));
        if (DIFF) {
          if (fl & F_REGRESSED) { cls += " chg-reg"; cell.append(el("span", { class: "arrow reg", text: "▼" })); }
          else if (fl & F_IMPROVED) { cls += " chg-imp"; cell.append(el("span", { class: "arrow imp", text: "▲" })); }
          cell.title = D.models[c] + ": " + oldLabel(k) + " → " + cellLabel(k, fl);
        } else cell.title = D.models[c] + ": " + cellLabel(k, fl);
        const why = D.why[NEW][k];
        if (why >= 0) cell.title += "\n" + D.whyText[why];
        if (hitCells && hitCells[k]) { cls += " mark-hit"; cell.title += "\nmatches the search"; }
        if (r === S.row && ci === S.col) { cls += " sel"; cell.setAttribute("aria-selected", "true"); }
        cell.className = cls;
        row.append(cell);
      });
      frag.append(row);
    }
    gbody.replaceChildren(frag);
    if (!rows.length) gbody.append(el("div", { class: "empty", text: "No item matches the filters." }));
  }
  let pending = false;
  grid.addEventListener("scroll", () => { if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; drawRows(); }); } });
  let paneWidth = 0;  // redraw when the pane's width changes (window resized, scrollbar appearing)
  new ResizeObserver(() => { if (grid.clientWidth !== paneWidth) { paneWidth = grid.clientWidth; drawHead(); drawRows(); } }).observe(grid);
  window.addEventListener("resize", () => drawRows());
  gbody.addEventListener("click", (e) => {
    const cell = e.target.closest(".cell");
    if (!cell) return;
    select(Number(cell.dataset.r), Number(cell.dataset.c));
    grid.focus({ preventScroll: true });
  });

  function refresh() {
    recompute();
    S.row = Math.min(S.row, Math.max(0, rows.length - 1));
    S.col = Math.min(S.col, cols.length - 1);
    count.textContent = num(rows.length) + " of " + num(N) + (D.runs[NEW].kind === "weval" ? " prompts" : " tests");
    // Ids and prompts are searched at once; the answers too once they are indexed (then this runs again).
    if (S.q.trim() && !answersLower) buildAnswers(refresh);
    gbody.style.height = rows.length * ROW_H + "px";
    drawHead();
    drawRows();
    if (rows.length) { if (S.active) showDetail(); } else detail.replaceChildren(el("p", { class: "hint", text: "No item matches the filters." }));
  }

  function select(r, c) {
    if (!rows.length) return;
    S.active = true;
    S.row = Math.max(0, Math.min(rows.length - 1, r));
    S.col = Math.max(0, Math.min(cols.length - 1, c));
    const y = S.row * ROW_H, headH = ghead.offsetHeight;
    if (y < grid.scrollTop) grid.scrollTop = y;
    else if (y + ROW_H + headH > grid.scrollTop + grid.clientHeight) grid.scrollTop = y + ROW_H + headH - grid.clientHeight;
    // sideways too: the column must not sit under the sticky item column nor past the pane's right edge
    const x = colW.item + S.col * colW.model;
    if (x - colW.item < grid.scrollLeft) grid.scrollLeft = x - colW.item;
    else if (x + colW.model > grid.scrollLeft + grid.clientWidth) grid.scrollLeft = x + colW.model - grid.clientWidth;
    drawRows();
    showDetail();
    // The selected cell is in the address (#item/model), so a link to the report can point at it.
    history.replaceState(null, "", "#" + encodeURIComponent(D.items[rows[S.row]]) + "/" + encodeURIComponent(D.models[cols[S.col]]));
  }

  function selectFromAddress() {
    const [item, model] = location.hash.slice(1).split("/").map((x) => { try { return decodeURIComponent(x); } catch (_) { return ""; } });
    const i = D.items.indexOf(item), m = D.models.indexOf(model);
    if (i < 0 || m < 0) return;
    const r = Array.prototype.indexOf.call(rows, i), c = cols.indexOf(m);
    if (r >= 0 && c >= 0) select(r, c);
  }

  // --- answers as Markdown, built as DOM nodes (never HTML): whatever an answer holds stays text ----------
  // Paragraphs, headings, lists, quotes, fenced code, inline code, bold, italic and links (http, https and
  // mailto only, opened in a new tab without a referrer); an image is shown as its text and address, never
  // loaded; raw HTML is text. "raw" shows the answer as it came.
  const SAFE_URL = /^(https?:|mailto:)/i;
  function mdInline(text, into) {
    const re = /(`+)([\s\S]*?[^`])\1(?!`)|!\[([^\]]*)\]\(([^)\s]*)[^)]*\)|\[([^\]]+)\]\(([^)\s]*)[^)]*\)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|\b_([^_\s][^_]*)_\b/g;
    let last = 0, m;
    while ((m = re.exec(text))) {
      if (m.index > last) into.append(text.slice(last, m.index));
      if (m[1]) into.append(el("code", { text: m[2] }));
      else if (m[4] !== undefined && m[0].startsWith("!")) into.append(el("span", { class: "md-img", text: "[image: " + (m[3] || "") + "] " + m[4] }));
      else if (m[5] !== undefined) {
        const url = m[6] || "";
        if (SAFE_URL.test(url)) { const a = el("a", { href: url, target: "_blank", rel: "noopener noreferrer nofollow", referrerpolicy: "no-referrer", title: url }); mdInline(m[5], a); into.append(a); }
        else into.append(m[0]);
      }
      else if (m[7] !== undefined || m[8] !== undefined) { const b = el("strong"); mdInline(m[7] ?? m[8], b); into.append(b); }
      else { const i = el("em"); mdInline(m[9] ?? m[10], i); into.append(i); }
      last = re.lastIndex;
    }
    if (last < text.length) into.append(text.slice(last));
    return into;
  }
  function markdown(text) {
    const root = el("div", { class: "md answer" });
    const lines = String(text).split("\n");
    let para = [], list = null;
    const flush = () => {
      if (para.length) { const p = el("p"); para.forEach((line, k) => { if (k) p.append(el("br")); mdInline(line, p); }); root.append(p); para = []; }
    };
    for (let k = 0; k < lines.length; k++) {
      const line = lines[k];
      const fence = line.match(/^\s*(```|~~~)(.*)$/);
      if (fence) {
        flush(); list = null;
        const body = [];
        while (++k < lines.length && !lines[k].trim().startsWith(fence[1])) body.push(lines[k]);
        root.append(el("pre", { class: "md-code" }, el("code", { text: body.join("\n") })));
        continue;
      }
      const h = line.match(/^(#{1,6})\s+(.*)$/);
      const item = line.match(/^\s*([-*+]|\d{1,9}[.)])\s+(.*)$/);
      const quote = line.match(/^\s*>\s?(.*)$/);
      if (!line.trim()) { flush(); list = null; }
      else if (h) { flush(); list = null; root.append(mdInline(h[2], el("div", { class: "md-h md-h" + h[1].length }))); }
      else if (item) {
        flush();
        const ordered = /\d/.test(item[1]);
        if (!list || list.ordered !== ordered) { list = { ordered, node: el(ordered ? "ol" : "ul") }; root.append(list.node); }
        list.node.append(mdInline(item[2], el("li")));
      }
      else if (quote) { flush(); list = null; root.append(mdInline(quote[1], el("blockquote"))); }
      else if (list && /^\s+\S/.test(line)) { const li = list.node.lastChild; li.append(" "); mdInline(line.trim(), li); }
      else { list = null; para.push(line); }
    }
    flush();
    return root;
  }
  let rawAnswers = false;
  function answerView(text) {
    const box = el("div", { class: "answer-box" });
    const draw = () => {
      const toggle = el("input", { type: "checkbox", class: "raw", title: "the answer as it came (r: off)", onchange: (e) => { rawAnswers = e.target.checked; draw(); } });
      toggle.checked = rawAnswers;
      box.replaceChildren(el("label", { class: "raw-toggle" }, toggle, " raw"),
        rawAnswers ? el("pre", { class: "text answer", text }) : markdown(text));
    };
    draw();
    return box;
  }

  // --- the detail pane --------------------------------------------------------------------------------
  function badge(status, verdict) {
    const kind = status === "ok" ? verdict || "scored" : status;
    return el("span", { class: "badge " + kind, text: kind.replace("_", " ") });
  }
  function statusOf(fl) {
    return fl & F_ERROR ? "error" : fl & F_PENDING ? "pending" : fl & F_MISSING ? "missing" : fl & F_NOT_SCORED ? "not_scored" : "ok";
  }
  // The results' own verdict first: a test failed by a required check keeps "fail" whatever its score.
  function verdictOf(x, fl) { return fl & F_FAIL ? "fail" : Number.isNaN(x) ? null : x >= 0.8 ? "pass" : x >= 0.6 ? "borderline" : "fail"; }
  function messages(list) {
    const box = el("div");
    for (const m of list || []) {
      const content = typeof m.content === "string" ? m.content : m.content === null || m.content === undefined ? "(generated)" : JSON.stringify(m.content, null, 2);
      box.append(el("div", { class: "msg" }, el("span", { class: "role", text: m.role || "" }), el("pre", { class: "text", text: content })));
    }
    return box;
  }
  function pointsTable(pts, firstFailed) {
    const t = el("table", { class: "points" });
    t.append(el("thead", null, el("tr", null, el("th", { text: "" }), el("th", { text: "point / assertion, and why" }), el("th", { text: "score" }), el("th", { text: "weight" }))));
    const tb = el("tbody");
    pts.forEach((p, idx) => {
      const [text, score, weight, kind, note, notScored, hits, misses, path, counted, extra, verdict] = p;
      const failed = counted && score !== null && (verdict ? verdict === "fail" : score < 0.8);
      const mark = score === null ? "–" : !counted ? "·" : failed ? "✗" : "✓";
      const why = el("div", { class: "sub" });
      if (notScored) why.append(el("span", { class: "why", text: "not scored: " + notScored }));
      if (note) why.append(el("div", { text: note }));
      if (hits && hits.length) why.append(el("ul", null, ...hits.map((x) => el("li", { text: "✓ " + x }))));
      if (misses && misses.length) why.append(el("ul", null, ...misses.map((x) => el("li", { text: "✗ " + x }))));
      if (extra) for (const key in extra) why.append(el("div", { class: "kv" }, key + ": ", el("code", { text: typeof extra[key] === "string" ? extra[key] : JSON.stringify(extra[key]) })));
      if (!counted) why.append(el("div", { class: "kv", text: "alternative path " + path + ": another path scored higher, so this one does not count" }));
      const tag = kind === "should_not" ? "should not" : kind === "should" || kind === text ? "" : kind;
      // The why under the point, across the row's width: a narrow column of its own made a judged point
      // with three judges' reflections ~300 px tall.
      const textCell = el("td", null, text, tag ? el("span", { class: "tag", text: tag }) : null,
        path && counted ? el("span", { class: "tag", text: path }) : null, idx === firstFailed ? el("span", { class: "tag reg", text: "← first failed point" }) : null,
        why.childNodes.length ? why : null);
      const tr = el("tr", { class: (failed ? "failed " : "") + (idx === firstFailed ? "first " : "") + (counted ? "" : "alt") },
        el("td", { text: mark }), textCell, el("td", { class: "num", text: score === null ? "—" : score.toFixed(2) }),
        el("td", { class: "num", text: String(weight) }));
      tb.append(tr);
    });
    t.append(tb);
    return t;
  }
  function trialsTable(trials) {
    const t = el("table", { class: "points" });
    t.append(el("thead", null, el("tr", null, ...["attempt", "score", "verdict", "answer / error"].map((h) => el("th", { text: h })))));
    const tb = el("tbody");
    for (const a of trials) {
      const o = a && typeof a === "object" ? a : { value: a };
      const text = o.error ? "error: " + o.error : typeof o.answer === "string" ? o.answer : JSON.stringify(o);
      tb.append(el("tr", null, el("td", { class: "num", text: String(o.attempt ?? "") }),
        el("td", { class: "num", text: typeof o.score === "number" ? o.score.toFixed(2) : "—" }),
        el("td", { text: String(o.verdict ?? "") }), el("td", null, el("div", { text: text.length > 400 ? text.slice(0, 399) + "…" : text }))));
    }
    t.append(tb);
    return t;
  }
  function cellSection(n, i, c, title) {
    const k = i * M + c;
    const d = cellDetail(n, i, c);
    const fl = flags[n][k];
    const box = el("div", { class: "cellres" });
    const s = scores[n][k];
    if (title) box.append(el("h3", { text: title }));
    box.append(el("div", null, badge(statusOf(fl), verdictOf(s, fl)), el("b", { text: Number.isNaN(s) ? "" : "score " + s.toFixed(3) })));
    const unfinished = "Not run yet: the run stopped before this cell had a result; run the same command with --resume to finish it.";
    if (fl & F_PENDING) box.append(el("p", { class: "hint pending-note", text: unfinished }));
    if (!d) { if (!(fl & F_PENDING)) box.append(el("p", { class: "hint", text: "This cell is not in this run." })); return box; }
    const [answer, history, pts, error, tin, tout, cost, ms, extra, firstFailed] = d;
    if (error) box.append(el("h3", { text: "error" }), el("pre", { class: "text error", text: error }));
    if (history) { box.append(el("h3", { text: "conversation" }), messages(history)); }
    else if (answer !== null && answer !== undefined) box.append(el("h3", { text: "answer" }), answerView(answer));
    if (pts.length) {
      const failedN = pts.filter((p) => p[9] && p[1] !== null && (p[11] ? p[11] === "fail" : p[1] < 0.8)).length;
      const unscored = pts.filter((p) => p[1] === null).length;
      box.append(el("h3", { text: "points (" + pts.length + ": " + failedN + " failed" + (unscored ? ", " + unscored + " not scored" : "") + ")" }), pointsTable(pts, firstFailed));
    }
    const usage = [];
    if (tin !== null || tout !== null) usage.push("tokens " + num(tin) + " in / " + num(tout) + " out");
    if (cost !== null) usage.push("cost " + usd(cost));
    if (ms !== null) usage.push("call time " + dur(ms));
    if (usage.length) box.append(el("div", { class: "kv", text: usage.join(" · ") }));
    if (extra && Array.isArray(extra.trials) && extra.trials.length) box.append(el("h3", { text: "trials" }), trialsTable(extra.trials));
    if (extra) {
      const keys = Object.keys(extra).filter((key) => key !== "trials" || !Array.isArray(extra.trials));
      if (keys.length) box.append(el("h3", { text: "other fields" }));
      for (const key of keys) box.append(el("div", { class: "kv" }, key + ":", el("pre", { class: "text", text: typeof extra[key] === "string" ? extra[key] : JSON.stringify(extra[key], null, 2) })));
    }
    return box;
  }
  function showDetail() {
    if (!rows.length) return;
    if (!loaded) {
      detail.replaceChildren(el("p", { class: "hint", text: "Reading the details…" }));
      whenLoaded(showDetail);
      return;
    }
    const i = rows[S.row], c = cols[S.col];
    const info = itemInfo(i);
    const box = el("div");
    box.append(el("h2", { id: "detail-title", text: D.items[i] }), el("div", { class: "kv", id: "detail-model", text: (D.runs[NEW].kind === "weval" ? "model " : "target ") + D.models[c] }));
    if (DIFF) {
      const fl = flags[NEW][i * M + c];
      const what = fl & F_REGRESSED ? "regressed" : fl & F_IMPROVED ? "improved" : fl & F_CHANGED ? "changed" : "unchanged";
      box.append(el("div", { class: "banner " + (what === "regressed" ? "reg" : what === "improved" ? "imp" : ""), id: "detail-change", text: what + ": " + oldLabel(i * M + c) + " → " + cellLabel(i * M + c, fl) }));
    }
    const [msgs, description, ideal] = info || [[], null, null];
    if (description) box.append(el("div", { class: "kv", text: (D.runs[NEW].kind === "agentv" ? "criteria: " : "") + description }));
    // The cell's own result first (its answer on screen without scrolling), then what it was asked.
    if (DIFF) box.append(el("div", { class: "cols" }, cellSection(0, i, c, "old: " + D.diff.names[0]), cellSection(NEW, i, c, "new: " + D.diff.names[1])));
    else box.append(cellSection(NEW, i, c, null));
    const system = (D.systems || {})[D.models[c]];
    if (system) box.append(el("h3", { text: "system prompt" }), el("pre", { class: "text", text: system }));
    box.append(el("h3", { text: "prompt" }), msgs && msgs.length ? messages(msgs) : el("p", { class: "hint", text: "(the prompt is not recorded in these results)" }));
    if (ideal) box.append(el("h3", { text: D.runs[NEW].kind === "weval" ? "ideal answer" : "expected output" }), el("pre", { class: "text", text: ideal }));
    detail.replaceChildren(box);
    detail.scrollTop = 0;
    // The selected cell's answer on screen: when what is above the matrix (a small run's open summary)
    // leaves it below the window, the page scrolls to the matrix and the detail.
    const sides = detail.querySelectorAll(".cellres"), mine = sides[sides.length - 1];
    const shown = mine && (mine.querySelector(".answer") || mine);
    if (shown && shown.getBoundingClientRect().top + 48 > window.innerHeight) detail.parentElement.scrollIntoView({ block: "start" });
  }

  // --- controls and keys --------------------------------------------------------------------------------
  function setFlag(key, on) {
    S[key] = on;
    const box = document.getElementById({ fail: "f-fail", ns: "f-ns", err: "f-err", reg: "f-reg", imp: "f-imp" }[key]);
    if (box) box.checked = on;
    S.row = 0;
    grid.scrollTop = 0;
    refresh();
  }
  let timer = 0;
  q.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => { S.q = q.value; S.row = 0; grid.scrollTop = 0; refresh(); }, 120); });
  modelSel.addEventListener("change", () => { S.model = Number(modelSel.value); S.col = 0; refresh(); });
  sortSel.addEventListener("change", () => { S.sort = sortSel.value; S.row = 0; grid.scrollTop = 0; refresh(); });
  document.addEventListener("keydown", (e) => {
    const t = e.target;
    if (t === q) {
      if (e.key === "Escape") { if (q.value) { q.value = ""; S.q = ""; refresh(); } else grid.focus(); }
      else if (e.key === "Enter" || e.key === "ArrowDown") { clearTimeout(timer); S.q = q.value; refresh(); grid.focus(); e.preventDefault(); }
      return;
    }
    if (t instanceof HTMLSelectElement || e.ctrlKey || e.metaKey || e.altKey) return;
    const page = Math.max(1, Math.floor(grid.clientHeight / ROW_H) - 1);
    const moves = { ArrowDown: [1, 0], j: [1, 0], ArrowUp: [-1, 0], k: [-1, 0], ArrowRight: [0, 1], l: [0, 1], ArrowLeft: [0, -1], h: [0, -1], PageDown: [page, 0], PageUp: [-page, 0] };
    if (moves[e.key]) { const [dr, dc] = moves[e.key]; select(S.row + dr, S.col + dc); e.preventDefault(); return; }
    const toggles = { f: "fail", n: "ns", e: "err", r: "reg", i: "imp" };
    if (e.key === "Home") { select(0, S.col); e.preventDefault(); }
    else if (e.key === "End") { select(rows.length - 1, S.col); e.preventDefault(); }
    else if (e.key === "/") { q.focus(); e.preventDefault(); }
    else if (e.key === "Escape") {  // clears the filters and the search
      for (const key of Object.values(toggles)) if (S[key]) setFlag(key, false);
      if (q.value) { q.value = ""; S.q = ""; refresh(); }
    }
    else if (toggles[e.key] && (DIFF || (e.key !== "r" && e.key !== "i"))) { if (t instanceof HTMLInputElement) return; setFlag(toggles[e.key], !S[toggles[e.key]]); e.preventDefault(); }
  });

  refresh();
  // When the first frame with the summary and the matrix was drawn, from the start of navigation: what
  // bench/report_browser.py reports as "open". `ready` (the tests wait for it) also needs the details.
  requestAnimationFrame(() => setTimeout(() => {
    document.documentElement.dataset.readyMs = String(Math.round(performance.now()));
  }, 0));
  if (location.hash.length > 1) selectFromAddress();
  whenLoaded(() => { document.documentElement.dataset.ready = "1"; });
})();
