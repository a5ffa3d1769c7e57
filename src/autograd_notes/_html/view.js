/* autograd_notes.to_html: the interactive view (no library, nothing fetched).
 * Data: autograd_notes.view_data's schema, read once, by name, in decode();
 * items (an Item each: parent, kind, label, title, note, path), the top-level
 * entries first; every node's kind, owner item, inputs, module path, names
 * and saved tensors, a fold's calls as one template call and what differs
 * per call. Only the boxes shown are laid out, with the rule of
 * autograd_notes.layout (AN_LAYERS, in layout.js). */
(function (show) {
  "use strict";
  // Large data comes deflated and base64'd (data-deflate): inflated here with
  // the browser's own DecompressionStream, then shown.
  var data = document.getElementById("an-data");
  if (!data.hasAttribute("data-deflate")) return show(JSON.parse(data.textContent));
  var text = atob(data.textContent), bytes = new Uint8Array(text.length);
  for (var i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  var inflated = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
  new Response(inflated).text().then(function (json) { show(JSON.parse(json)); });
})(function (D) {
  "use strict";
  // The interface in the reader's language: navigator.languages, the first
  // entry that is Chinese or English ("zh..." -> Chinese); {0}, {1}: values.
  var UI = AN_TEXT.ui;
  var LANG = "en";
  (navigator.languages || [navigator.language || ""]).some(function (l) {
    l = String(l).toLowerCase();
    if (l.indexOf("zh") === 0) LANG = "zh";
    return l.indexOf("zh") === 0 || l.indexOf("en") === 0;
  });
  document.documentElement.lang = LANG === "zh" ? "zh-CN" : "en";
  // Light or dark: the notebook's theme where the script beside the frame
  // says it (_notebook.py), else the reader's (prefers-color-scheme).
  var told = false, dark = window.matchMedia ? matchMedia("(prefers-color-scheme: dark)") : null;
  function scheme(s) { document.documentElement.setAttribute("data-scheme", s); }
  scheme(dark && dark.matches ? "dark" : "light");
  if (dark && dark.addEventListener) dark.addEventListener("change", function () { if (!told) scheme(dark.matches ? "dark" : "light"); });
  window.addEventListener("message", function (ev) {
    var s = ev.source === window.parent && ev.data && ev.data["autograd-notes-scheme"];
    if (s === "dark" || s === "light") { told = true; scheme(s); }
  });
  function say(key) { // UI[LANG][key], {0}, {1} ... replaced by the arguments after key
    var args = arguments;
    return UI[LANG][key].replace(/\{(\d)\}/g, function (_, d) { return args[+d + 1]; });
  }
  // A title, note or name the Python side wrote: as it is (a string), or
  // words, said with the reader's table (autograd_notes.words, notes.json):
  // clauses of phrases [key, value, ...]; "" reads as the model, an int as
  // 1,234, a list of phrases as a list.
  var NOTES = AN_NOTES[LANG];
  function said(text) {
    if (typeof text === "string") return text;
    return text.map(function (clause) {
      return clause.map(function (phrase) {
        var t = NOTES.notes[phrase[0]], values = phrase.slice(1);
        if (Array.isArray(t)) t = t[values.filter(function (v) { return typeof v === "number"; })[0] === 1 ? 0 : 1];
        return t.replace(/\{(\d)\}/g, function (_, d) {
          var v = values[+d];
          if (Array.isArray(v)) return v.map(function (p) { return said([[p]]); }).join(NOTES.list);
          return typeof v === "number" ? commas(v) : v || NOTES.model;
        });
      }).join(NOTES.phrase);
    }).join(NOTES.clause);
  }
  var NS = (function () { // the SVG namespace, as the HTML parser gives it
    var d = document.createElement("div");
    d.innerHTML = "<svg></svg>";
    return d.firstChild.namespaceURI;
  })();

  // -- The data -------------------------------------------------------------
  // decode(D): the page's data (autograd_notes.view_data.PageData) with every
  // record read by name (D.fields gives each record type's field order) and
  // every packed list unpacked; the one place that knows how it is written.
  // Node ids: the nodes in no fold first, then each fold's calls, f.size
  // nodes each, rebuilt from the fold's template call.
  function decode(D) {
    var DIGIT = {};
    for (var d = 0; d < D.alphabet.length; d++) DIGIT[D.alphabet[d]] = d;
    function ints(x) { // a list, {s: [first, step, count, ...]} or {r: [pattern, times, ...]} (runs.pack)
      if (Array.isArray(x)) return x;
      var a = [], s = x.s, r = x.r, i, k, j;
      if (s) {
        for (i = 0; i < s.length; i += 3) for (k = 0; k < s[i + 2]; k++) a.push(s[i] + k * s[i + 1]);
        return a;
      }
      for (i = 0; i < r.length; i += 2) {
        var p = r[i], v = typeof p === "string" ? [] : p;
        if (typeof p === "string") for (j = 0; j < p.length; j++) v.push(DIGIT[p[j]]);
        for (k = 0; k < r[i + 1]; k++) for (j = 0; j < v.length; j++) a.push(v[j]);
      }
      return a;
    }
    function record(type, row) {
      var names = D.fields[type], o = {};
      for (var k = 0; k < names.length; k++) o[names[k]] = row[k];
      return o;
    }
    function records(type, rows) { return rows.map(function (row) { return record(type, row); }); }
    var G = {
      title: D.title, box: record("BoxSize", D.box), spread: D.spread, tops: D.tops, root: D.root,
      anomaly: D.anomaly, items: records("Item", D.items), kinds: D.kinds, paths: D.paths,
      shown: records("ShownPath", D.shown), names: records("NodeName", D.names), walk: ints(D.walk),
      saved: D.saved.map(function (rows) { return records("SavedValue", rows); }),
      kind: [], degree: [], path: [], save: [], owner: ints(D.owner), inputs: [], diff: null
    };
    // The nodes in no fold: a NodeType each (kind, number of inputs, path, saved).
    var types = records("NodeType", D.node_types), typeOf = ints(D.node_type), n, k;
    for (n = 0; n < typeOf.length; n++) {
      var t = types[typeOf[n]];
      G.kind.push(t.kind); G.degree.push(t.degree); G.path.push(t.path); G.save.push(t.saved);
    }
    var columns = D.inputs.map(ints), at = columns.map(function () { return 0; });
    for (n = 0; n < typeOf.length; n++) { // each node's inputs, in order (runs.by_slot)
      for (k = 0; k < G.degree[n]; k++) G.inputs.push(n + columns[k][at[k]++]);
    }
    G.folds = D.folds.map(function (f) {
      return {
        item: f.item, calls: f.calls, size: f.size, paths: ints(f.paths), callIndex: ints(f.call_index),
        kind: f.kind, saved: f.saved, rel: f.rel, owner: f.owner, items: records("CallItem", f.items),
        degree: f.degree, inputs: f.inputs, outside: f.outside.map(ints), fixes: records("PathFix", f.fixes)
      };
    });
    if (D.diff) {
      var modules = {};
      Object.keys(D.diff.modules).forEach(function (p) { modules[p] = record("ModuleDiff", D.diff.modules[p]); });
      G.diff = {
        nodes: record("NodeCounts", D.diff.nodes), saved: record("SavedTotals", D.diff.saved), modules: modules,
        items: D.diff.items, added: ints(D.diff.added), removed: records("RemovedNodes", D.diff.removed)
      };
    }
    return G;
  }
  var G = decode(D);
  G.items.forEach(function (item) { item.title = said(item.title); item.note = said(item.note); });
  G.folds.forEach(function (f) { f.items.forEach(function (s) { s.note = said(s.note); }); });
  if (G.title === UI.en.title) document.title = G.title = say("title");

  function commas(k) { return String(k).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function item(parent, kind, title, note, path) { // an item the script makes (no label)
    return { parent: parent, kind: kind, label: "", title: title, note: note, path: path };
  }
  var items = G.items.slice(), R = G.kind.length, N = R, E = G.inputs.length, n, k, f, j, p;
  var printable = {}; // a module path with an unprintable character, escaped
  G.shown.forEach(function (s) { printable[s.path] = s.text; });
  function pathText(i) { return i in printable ? printable[i] : G.paths[i]; }
  var walk = G.walk;
  G.folds.forEach(function (f) {
    f.base = N; N += f.calls * f.size;
    f.slots = 0;
    for (p = 0; p < f.size; p++) f.slots += f.degree[p];
    E += f.calls * f.slots;
    f.fixed = {};
    f.fixes.forEach(function (x) { f.fixed[x.call * f.size + x.position] = x.path; });
    // A fold of more than G.spread calls opens to boxes of calls (calls
    // 0-2,499, ...), each to at most G.spread boxes, down to the calls.
    f.callItem = new Int32Array(f.calls);
    var span = 1;
    while (Math.ceil(f.calls / span) > G.spread) span *= G.spread;
    var stack = [];
    var kids = function (parent, lo, hi, sp) { // sp: calls per child box
      for (var a = Math.ceil((hi - lo) / sp) - 1; a >= 0; a--) {
        stack.push([parent, lo + a * sp, Math.min(hi, lo + (a + 1) * sp), sp]);
      }
    };
    kids(f.item, 0, f.calls, span);
    while (stack.length) {
      var top = stack.pop();
      if (top[3] === 1) { addCall(f, top[0], top[1]); continue; }
      kids(items.length, top[1], top[2], top[3] / G.spread);
      items.push(rangeItem(f, top[0], top[1], top[2]));
    }
  });
  // A box of many nodes (outside modules, or of one module) opens to boxes
  // of nodes, each to at most G.spread boxes, down to the nodes.
  var stretches = {};
  for (n = 0; n < R; n++) {
    var o = G.owner[n];
    if (o >= 0 && G.items[o].kind === "nodes") (stretches[o] = stretches[o] || []).push(n);
  }
  Object.keys(stretches).forEach(function (parent) {
    var members = stretches[parent], span = 1, stack = [];
    while (Math.ceil(members.length / span) > G.spread) span *= G.spread;
    if (span === 1) return; // few enough to show as they are
    var kids = function (parent, lo, hi, sp) {
      for (var a = Math.ceil((hi - lo) / sp) - 1; a >= 0; a--) stack.push([parent, lo + a * sp, Math.min(hi, lo + (a + 1) * sp), sp]);
    };
    kids(+parent, 0, members.length, span);
    while (stack.length) {
      var top = stack.pop(), box = items.length;
      if (top[3] > G.spread) kids(box, top[1], top[2], top[3] / G.spread);
      else for (var m = top[1]; m < top[2]; m++) G.owner[members[m]] = box;
      items.push(item(top[0], "nodes", say("nodesRange", commas(walk[members[top[1]]]), commas(walk[members[top[2] - 1]])),
                      say("nnodes", commas(top[2] - top[1])), null));
    }
  });
  function rangeItem(f, parent, lo, hi) {
    var first = pathText(f.paths[lo]), last = pathText(f.paths[hi - 1]);
    var lowest = commas(f.callIndex[lo]), highest = commas(f.callIndex[hi - 1]);
    var what = first !== last ? say("range", first || say("model"), last || say("model"))
      : first ? say("callsOf", lowest, highest, first) : say("callsOfModel", lowest, highest);
    return item(parent, "calls", what, say("ncalls", commas(hi - lo)), null);
  }
  function addCall(f, parent, j) {
    var at = f.paths[j], path = G.paths[at], seen = pathText(at), call = items.length;
    f.callItem[j] = call;
    items.push(item(parent, "call", say("callOf", seen || say("model"), commas(f.callIndex[j])),
                    say("callNote", commas(f.size)), path));
    f.items.forEach(function (s) {
      var title = typeof s.title === "string" ? seen + s.title : said(s.title); // a path, or words
      items.push(item(s.parent < 0 ? call : call + 1 + s.parent, s.kind, title, s.note, path + s.path));
    });
  }
  var I = items.length, text = {};
  var kindOf = new Int32Array(N), owner = new Int32Array(N);
  var starts = new Int32Array(N + 1), inputs = new Int32Array(E);
  for (n = 0, k = 0; n < R; n++) {
    kindOf[n] = G.kind[n]; owner[n] = G.owner[n];
    starts[n + 1] = starts[n] + G.degree[n];
    for (; k < starts[n + 1]; k++) inputs[k] = G.inputs[k];
  }
  G.folds.forEach(function (f) {
    for (j = 0, n = f.base; j < f.calls; j++) {
      var call = f.callItem[j], here = f.base + j * f.size;
      for (p = 0, k = 0; p < f.size; p++, n++) {
        kindOf[n] = f.kind[p];
        owner[n] = f.owner[p] < 0 ? call : call + 1 + f.owner[p];
        starts[n + 1] = starts[n] + f.degree[p];
        for (var s = starts[n]; s < starts[n + 1]; s++, k++) {
          var c = f.inputs[k];
          inputs[s] = c >= 0 ? here + c : f.outside[-1 - c][j];
        }
      }
    }
  });
  // The decoded data, for tests and the console: every node, every item.
  window.anView = { ui: UI, names: text, tops: G.tops, root: G.root, items: items, kinds: G.kinds, kind: kindOf,
                    owner: owner, starts: starts, inputs: inputs, module: moduleOf, saved: savedOf };
  G.names.forEach(function (x) { text[x.node] = said(x.text); });
  function foldOf(n) { // [fold, call, position] of a node in a fold, or null
    for (var i = G.folds.length - 1; i >= 0; i--) {
      var f = G.folds[i];
      if (n >= f.base) { var r = n - f.base; return [f, Math.floor(r / f.size), r % f.size]; }
    }
    return null;
  }
  function moduleOf(n) {
    if (n < R) return G.paths[G.path[n]];
    var w = foldOf(n), f = w[0], at = w[1] * f.size + w[2];
    return at in f.fixed ? G.paths[f.fixed[at]] : G.paths[f.paths[w[1]]] + f.rel[w[2]];
  }
  function savedOf(n) {
    if (n < R) return G.saved[G.save[n]];
    var w = foldOf(n);
    return G.saved[w[0].saved[w[2]]];
  }
  function kindName(n) { return G.kinds[kindOf[n]]; }
  var CHAR = G.box.char, H = G.box.height, GX = G.box.gap_x, GY = G.box.gap_y, MAXC = G.box.max_chars;
  var open = new Uint8Array(I);
  var count = new Float64Array(I), bytes = new Float64Array(I);
  var selected = -1, hits = null, matched = 0;
  var view = { x: 0, y: 0, s: 1 };
  var nodeBytes = function (n) {
    var t = 0, rows = savedOf(n);
    for (var k = 0; k < rows.length; k++) t += rows[k].bytes;
    return t;
  };
  for (n = 0; n < N; n++) {
    var o = owner[n];
    if (o >= 0) { count[o] += 1; bytes[o] += nodeBytes(n); }
  }
  // A diff (view_data.DiffData): nodes added, each module's change in saved bytes.
  var DF = G.diff, added = new Uint8Array(N), news = new Float64Array(I);
  if (DF) DF.added.forEach(function (n) { added[n] = 1; if (owner[n] >= 0) news[owner[n]] += 1; });
  for (var i = I - 1; i >= 0; i--) {
    var p = items[i].parent;
    if (p >= 0) { count[p] += count[i]; bytes[p] += bytes[i]; news[p] += news[i]; }
  }
  function changeOf(i) { // "-1.5 MiB": the saved bytes of the item's module(s)
    if (!DF) return "";
    if (i < G.items.length) return DF.items[i] || "";
    var m = items[i].path !== null && DF.modules[items[i].path];
    return m ? m.change : "";
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svgEl(tag, attrs) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function fmtBytes(b) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], u = 0;
    while (b >= 1024 && u < units.length - 1) { b /= 1024; u++; }
    return (u ? b.toFixed(1) : String(b)) + " " + units[u];
  }
  function expandable(i) { return items[i].kind !== "node"; }
  function itemText(i) { return (items[i].label ? items[i].label + " " : "") + items[i].title; }
  function repText(r) { // a node in a fold has no walk index of its own
    if (r >= I) return (r - I < R ? "[" + walk[r - I] + "] " : "") + kindName(r - I) + (added[r - I] ? say("isNew") : "");
    var change = changeOf(r);
    return itemText(r) + (change ? say("saved", change) : "") + (news[r] ? say("news", commas(news[r])) : "");
  }
  function cols(text) { return text.replace(/[\u2e80-\u9fff\uff00-\uffef]/g, "  ").length; } // CJK: 2 columns
  function width(text) { return Math.min(cols(text), MAXC) * CHAR + 16; }

  // Which box shows each item (-2: the item is open, its children show).
  function repsOfItems() {
    var r = new Int32Array(I);
    for (var i = 0; i < I; i++) {
      var p = items[i].parent, pr = p < 0 ? -2 : r[p];
      r[i] = pr !== -2 ? pr : (open[i] ? -2 : i);
    }
    return r;
  }
  function repOf(r, n) {
    var o = owner[n];
    var x = o < 0 ? -2 : r[o];
    return x === -2 ? I + n : x;
  }

  // The boxes shown, their links, and the layout: linear in the nodes for
  // the boxes, then only the boxes shown are laid out.
  function visibleGraph() {
    var r = repsOfItems(), index = new Int32Array(I + N).fill(-1), boxes = [], out = [], seen = [];
    for (var n = 0; n < N; n++) {
      var a = repOf(r, n);
      if (index[a] < 0) { index[a] = boxes.length; boxes.push(a); out.push([]); seen.push(new Set()); }
    }
    for (n = 0; n < N; n++) {
      var x = index[repOf(r, n)];
      for (var k = starts[n]; k < starts[n + 1]; k++) {
        var y = index[repOf(r, inputs[k])];
        if (x !== y && !seen[x].has(y)) { seen[x].add(y); out[x].push(y); }
      }
    }
    return { boxes: boxes, out: out, root: index[repOf(r, G.root)] };
  }
  // -- The page ---------------------------------------------------------
  var app = el("div", { id: "an-app" });
  var bar = el("header", { id: "an-bar" });
  bar.appendChild(el("h1", {}, G.title));
  var label = el("label", { for: "an-search" }, say("search"));
  var search = el("input", { id: "an-search", type: "search", placeholder: say("example") });
  label.appendChild(search);
  bar.appendChild(label);
  var closeAll = el("button", { type: "button" }, say("closeAll"));
  var fit = el("button", { type: "button" }, say("fit"));
  bar.appendChild(closeAll); bar.appendChild(fit);
  var status = el("span", { class: "an-muted", role: "status" });
  bar.appendChild(status);
  var main = el("main", { id: "an-canvas", tabindex: "0", "aria-label": say("canvas") });
  var svg = svgEl("svg", { role: "group", "aria-label": say("graph") });
  var port = svgEl("g", {});
  svg.appendChild(port); main.appendChild(svg);
  var side = el("aside", { id: "an-details", "aria-label": say("details") });
  app.appendChild(bar); app.appendChild(main); app.appendChild(side);
  document.body.appendChild(app);

  var shown = null, placed = null;
  function draw() {
    var g = visibleGraph(), m = g.boxes.length, layer = AN_LAYERS(g.out, g.root);
    var rows = [], w = new Float64Array(m), x = new Float64Array(m), y = new Float64Array(m);
    for (var b = 0; b < m; b++) {
      (rows[layer[b]] = rows[layer[b]] || []).push(b);
      w[b] = width(repText(g.boxes[b]));
    }
    var full = 0, r, k;
    for (r = 0; r < rows.length; r++) {
      if (!rows[r]) continue;
      var used = 0;
      for (k = 0; k < rows[r].length; k++) used += w[rows[r][k]] + GX;
      full = Math.max(full, used);
    }
    for (r = 0; r < rows.length; r++) {
      if (!rows[r]) continue;
      var left = 0;
      for (k = 0; k < rows[r].length; k++) left += w[rows[r][k]] + GX;
      left = (full - left) / 2;
      for (k = 0; k < rows[r].length; k++) {
        var c = rows[r][k];
        x[c] = left; y[c] = r * (H + GY); left += w[c] + GX;
      }
    }
    while (port.firstChild) port.removeChild(port.firstChild);
    for (b = 0; b < m; b++) {
      for (k = 0; k < g.out[b].length; k++) {
        var t = g.out[b][k];
        port.appendChild(svgEl("line", { class: "an-edge", x1: x[b] + w[b] / 2, y1: y[b] + H, x2: x[t] + w[t] / 2, y2: y[t] }));
      }
    }
    for (b = 0; b < m; b++) port.appendChild(box(g.boxes[b], x[b], y[b], w[b]));
    shown = g; placed = { x: x, y: y, w: w, width: full, height: rows.length * (H + GY) };
    status.textContent = say("status", m, N) + (hits ? say("match", matched) : "");
    apply(); askHeight();
  }
  // In a notebook's frame, the height the view wants: the bar, the graph at
  // scale 1, the details where they sit below it (_notebook.py sets it).
  function askHeight() {
    if (window.parent === window) return;
    var below = side.offsetTop > main.offsetTop ? side.offsetHeight : 0;
    window.parent.postMessage({ "autograd-notes-height": bar.offsetHeight + placed.height + 60 + below }, "*");
  }
  function box(rep, x, y, w) {
    var text = repText(rep), kind = rep < I ? items[rep].kind : "n";
    var group = kind === "module" || kind === "call" || kind === "calls" || kind === "run" || kind === "nodes";
    var cls = "an-box" + (kind === "fold" ? " an-fold" : group ? " an-group" : "");
    if (rep >= I && added[rep - I]) cls += " an-added";
    if (rep === selected) cls += " an-selected";
    if (hits && hits.has(rep)) cls += " an-hit";
    var more = rep < I && expandable(rep) ? say("open") : "";
    var g = svgEl("g", { class: cls, tabindex: "0", role: "button", "aria-label": text + more });
    var t = svgEl("title", {}); t.textContent = text + (rep < I && items[rep].note ? "\n" + items[rep].note : "");
    g.appendChild(t);
    g.appendChild(svgEl("rect", { x: x, y: y, width: w, height: H, rx: 4 }));
    var s = svgEl("text", { x: x + 8, y: y + 18 });
    var cut = text;
    while (cols(cut) > MAXC - (cut === text ? 0 : 1)) cut = cut.slice(0, -1);
    s.textContent = cut === text ? text : cut + "\u2026";
    g.appendChild(s);
    g.addEventListener("click", function () { choose(rep, true); });
    g.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); ev.stopPropagation(); choose(rep, true); }
    });
    return g;
  }
  function choose(rep, toggle) {
    selected = rep;
    var opening = toggle && rep < I && expandable(rep);
    if (opening) open[rep] = 1;
    draw(); details();
    if (opening) centreInside(rep);
  }
  function centreInside(i) { // on the first box that item i opened to
    for (var b = 0; b < shown.boxes.length; b++) {
      var r = shown.boxes[b], o = r < I ? r : owner[r - I];
      if (o >= 0 && ancestors(o).indexOf(i) >= 0) return centre(r);
    }
  }

  // -- Details ------------------------------------------------------------
  function ancestors(i) {
    var chain = [];
    while (i >= 0) { chain.push(i); i = items[i].parent; }
    return chain;
  }
  function closeButton(i, text) {
    var b = el("button", { type: "button" }, text);
    b.addEventListener("click", function () {
      for (var k = 0; k < I; k++) if (open[k] && ancestors(k).indexOf(i) >= 0) open[k] = 0;
      selected = i; draw(); details();
    });
    return b;
  }
  function removedList(rows) {
    var ul = el("ul", {});
    rows.slice(0, 50).forEach(function (r) {
      var where = r.module === null ? say("outside") : r.module ? say("inside", r.module) : say("insideModel");
      ul.appendChild(el("li", {}, say("row", r.kind, commas(r.nodes), where + (r.call === null ? "" : say("atCall", r.call)))));
    });
    if (rows.length > 50) ul.appendChild(el("li", {}, say("more", commas(rows.length - 50))));
    return ul;
  }
  function legend() {
    side.appendChild(el("h2", {}, say("before")));
    side.appendChild(el("p", {}, say("counts", commas(DF.nodes.before), commas(DF.nodes.after), commas(DF.nodes.added), commas(DF.nodes.removed), DF.saved.before, DF.saved.after, DF.saved.change)));
    side.appendChild(el("p", {}, say("legend")));
    if (DF.removed.length) {
      side.appendChild(el("h3", {}, say("removed")));
      side.appendChild(removedList(DF.removed));
    }
  }
  function changes(i) {
    var f = null, paths = [];
    G.folds.forEach(function (g) { if (g.item === i) f = g; });
    if (f) f.paths.forEach(function (a) { if (paths.indexOf(G.paths[a]) < 0) paths.push(G.paths[a]); });
    else if (items[i].path !== null) paths.push(items[i].path);
    paths.forEach(function (path) {
      var m = DF.modules[path];
      if (!m) return;
      var counts = [m.before, m.after, m.change, commas(m.nodes_before), commas(m.nodes_after)];
      side.appendChild(el("p", {}, say.apply(null, path ? ["byModule", path].concat(counts) : ["byModel"].concat(counts))));
    });
    var gone = DF.removed.filter(function (r) { return paths.indexOf(r.module) >= 0; });
    if (gone.length) { side.appendChild(el("h3", {}, say("removedHere"))); side.appendChild(removedList(gone)); }
    if (news[i]) side.appendChild(el("p", {}, say("addedIn", commas(news[i]))));
  }
  function details() {
    while (side.firstChild) side.removeChild(side.firstChild);
    if (selected < 0) {
      side.appendChild(el("h2", {}, say("heading")));
      side.appendChild(el("p", {}, say("hint")));
      if (!G.anomaly) side.appendChild(el("p", { class: "an-muted" }, say("anomaly")));
      if (DF) legend();
      return;
    }
    var up;
    if (selected < I) {
      var it = items[selected];
      side.appendChild(el("h2", {}, itemText(selected)));
      if (it.note) side.appendChild(el("p", {}, it.note));
      if (it.path !== null) side.appendChild(el("p", {}, say("path", it.path || say("model"))));
      side.appendChild(el("p", {}, say("sum", count[selected], fmtBytes(bytes[selected]))));
      if (DF) changes(selected);
      if (open[selected]) side.appendChild(closeButton(selected, say("closeThis", say(it.kind))));
      up = it.parent;
    } else {
      var n = selected - I, w = n < R ? null : foldOf(n);
      side.appendChild(el("h2", {}, repText(selected)));
      if (w) side.appendChild(el("p", {}, say("nodeOf", commas(w[2] + 1), commas(w[0].size), itemText(w[0].callItem[w[1]]), itemText(w[0].item))));
      var path = moduleOf(n);
      side.appendChild(el("p", {}, path === null ? say("madeOutside") : say("path", path || say("model"))));
      if (text[n]) side.appendChild(el("p", {}, say("names", text[n])));
      if (added[n]) side.appendChild(el("p", {}, say("added")));
      var rows = savedOf(n);
      if (rows.length) {
        var table = el("table", {});
        var head = el("tr", {});
        say("cols").split("|").forEach(function (h) { head.appendChild(el("th", { scope: "col" }, h)); });
        table.appendChild(head);
        rows.forEach(function (row, k) {
          var tr = el("tr", {});
          tr.appendChild(el("td", {}, String(k)));
          tr.appendChild(el("td", {}, "(" + row.shape.join(", ") + (row.shape.length === 1 ? ",)" : ")")));
          tr.appendChild(el("td", {}, row.dtype));
          tr.appendChild(el("td", {}, fmtBytes(row.bytes)));
          table.appendChild(tr);
        });
        side.appendChild(table);
      } else {
        side.appendChild(el("p", {}, say("none")));
      }
      up = owner[n];
    }
    var chain = up >= 0 ? ancestors(up) : [];
    chain.forEach(function (a) { if (open[a]) side.appendChild(closeButton(a, say("close", itemText(a)))); });
  }

  // -- Search ---------------------------------------------------------------
  var results = el("ol", { id: "an-results", "aria-label": say("results") });
  bar.appendChild(results);
  function reveal(n) {
    var o = owner[n];
    if (o >= 0) ancestors(o).forEach(function (a) { if (expandable(a)) open[a] = 1; });
    selected = repOf(repsOfItems(), n); draw(); details(); centre(selected);
  }
  search.addEventListener("input", function () {
    var q = search.value.trim().toLowerCase();
    while (results.firstChild) results.removeChild(results.firstChild);
    hits = null;
    if (q) {
      hits = new Set();
      var r = repsOfItems(), found = 0;
      for (var n = 0; n < N; n++) {
        var kind = kindName(n), path = moduleOf(n) || "";
        if (kind.toLowerCase().indexOf(q) < 0 && path.toLowerCase().indexOf(q) < 0) continue;
        hits.add(repOf(r, n)); found++;
        if (found <= 50) {
          var li = el("li", {}), b = el("button", { type: "button" }, path ? say("found", repText(I + n), path) : repText(I + n));
          b.addEventListener("click", reveal.bind(null, n));
          li.appendChild(b); results.appendChild(li);
        }
      }
      matched = found;
    }
    draw();
    if (fitted) doFit(); // the list of results took room from the graph
    if (hits) showHit();
  });
  function showHit() { // pan to the first box that holds a match, if it is out of sight
    for (var b = 0; b < shown.boxes.length; b++) {
      if (!hits.has(shown.boxes[b])) continue;
      var s = view.s, left = placed.x[b] * s + view.x, top = placed.y[b] * s + view.y;
      if (left < 0 || top < 0 || left + placed.w[b] * s > main.clientWidth || top + H * s > main.clientHeight) centre(shown.boxes[b]);
      return;
    }
  }
  closeAll.addEventListener("click", function () { open.fill(0); selected = -1; draw(); details(); doFit(); });

  // -- Pan and zoom ---------------------------------------------------------
  var fitted = false; // the view is as Fit left it: a new size fits it again
  function apply() { port.setAttribute("transform", "translate(" + view.x + " " + view.y + ") scale(" + view.s + ")"); }
  function doFit() {
    var bw = main.clientWidth || 800, bh = main.clientHeight || 600;
    var s = Math.min(1.5, bw / (placed.width + 40), bh / (placed.height + 40));
    view.s = Math.max(s, 0.05);
    view.x = (bw - placed.width * view.s) / 2; view.y = 20;
    fitted = true; apply();
  }
  function centre(rep) {
    var b = shown.boxes.indexOf(rep);
    if (b < 0) return;
    var bw = main.clientWidth || 800, bh = main.clientHeight || 600;
    view.x = bw / 2 - (placed.x[b] + placed.w[b] / 2) * view.s;
    view.y = bh / 2 - (placed.y[b] + H / 2) * view.s;
    fitted = false; apply();
  }
  function zoom(f, cx, cy) {
    var s = Math.min(8, Math.max(0.02, view.s * f));
    view.x = cx - (cx - view.x) * (s / view.s); view.y = cy - (cy - view.y) * (s / view.s);
    view.s = s; fitted = false; apply();
  }
  main.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var rect = main.getBoundingClientRect();
    zoom(ev.deltaY < 0 ? 1.15 : 1 / 1.15, ev.clientX - rect.left, ev.clientY - rect.top);
  }, { passive: false });
  var drag = null;
  svg.addEventListener("pointerdown", function (ev) { drag = [ev.clientX, ev.clientY, view.x, view.y]; });
  window.addEventListener("pointermove", function (ev) {
    if (!drag) return;
    view.x = drag[2] + ev.clientX - drag[0]; view.y = drag[3] + ev.clientY - drag[1]; fitted = false; apply();
  });
  window.addEventListener("pointerup", function () { drag = null; });
  main.addEventListener("keydown", function (ev) {
    var step = 40, bw = main.clientWidth / 2, bh = main.clientHeight / 2;
    if (ev.key === "ArrowLeft") view.x += step;
    else if (ev.key === "ArrowRight") view.x -= step;
    else if (ev.key === "ArrowUp") view.y += step;
    else if (ev.key === "ArrowDown") view.y -= step;
    else if (ev.key === "+" || ev.key === "=") return zoom(1.25, bw, bh);
    else if (ev.key === "-") return zoom(0.8, bw, bh);
    else if (ev.key === "0") return doFit();
    else return;
    ev.preventDefault(); fitted = false; apply();
  });
  fit.addEventListener("click", doFit);
  window.addEventListener("resize", function () { if (fitted) doFit(); });

  draw(); details(); doFit();
});
