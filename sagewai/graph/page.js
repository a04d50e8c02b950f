(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var data = JSON.parse(document.getElementById("graph-data").textContent);
  var svg = document.getElementById("canvas");
  var palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
                 "#ff9da7", "#9c755f", "#bab0ac"];
  var colours = {};
  function colourOf(label) {
    if (!(label in colours)) { colours[label] = palette[Object.keys(colours).length % palette.length]; }
    return colours[label];
  }
  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    for (var key in attrs) { node.setAttribute(key, attrs[key]); }
    if (parent) { parent.appendChild(node); }
    return node;
  }

  var index = {};
  var nodes = data.entities.map(function (e, i) {
    index[e.id] = i;
    var angle = i * 2.399963, radius = 12 * Math.sqrt(i + 1);
    return { e: e, x: radius * Math.cos(angle), y: radius * Math.sin(angle), vx: 0, vy: 0,
             fixed: false, degree: 0 };
  });
  var links = data.relations.map(function (r) {
    var s = index[r.subject_id], t = index[r.object_id];
    nodes[s].degree++; nodes[t].degree++;
    return { r: r, s: s, t: t, ended: r.valid_to !== null };
  });
  document.getElementById("stats").textContent =
    nodes.length + " entities \u00b7 " + links.length + " relations";

  var defs = el("defs", {}, svg);
  var marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "18", refY: "5",
                              markerWidth: "6", markerHeight: "6", orient: "auto" }, defs);
  el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#9aa" }, marker);
  var view = el("g", {}, svg);
  var edgeLayer = el("g", {}, view), labelLayer = el("g", {}, view), nodeLayer = el("g", {}, view);
  var showEnded = document.getElementById("expired");
  showEnded.checked = true;

  links.forEach(function (l) {
    l.line = el("line", { "class": l.ended ? "edge ended" : "edge", "marker-end": "url(#arrow)" }, edgeLayer);
    l.label = el("text", { "class": "edge-label", "text-anchor": "middle" }, labelLayer);
    l.label.textContent = l.r.predicate;
  });
  nodes.forEach(function (n, i) {
    n.g = el("g", { "class": "node" }, nodeLayer);
    n.radius = 5 + Math.min(10, Math.sqrt(n.degree) * 2);
    el("circle", { r: n.radius, fill: colourOf(n.e.label) }, n.g);
    var text = el("text", { x: n.radius + 3, y: 4 }, n.g);
    text.textContent = n.e.name;
    var title = el("title", {}, n.g);
    title.textContent = n.e.name + " (" + n.e.label + ")";
    n.g.addEventListener("pointerdown", function (ev) { startDrag(ev, i); });
    n.g.addEventListener("click", function () { showDetails(i); });
  });

  var legend = document.getElementById("legend");
  Object.keys(colours).sort().forEach(function (label) {
    var item = document.createElement("span"), dot = document.createElement("i");
    dot.style.background = colours[label];
    item.appendChild(dot);
    item.appendChild(document.createTextNode(label));
    legend.appendChild(item);
  });

  var alpha = 1;
  function tick() {
    var i, j, n = nodes.length, k = 0.1 * alpha;
    for (i = 0; i < n; i++) {
      var a = nodes[i];
      for (j = i + 1; j < n; j++) {
        var b = nodes[j], dx = a.x - b.x, dy = a.y - b.y, d2 = dx * dx + dy * dy + 0.01;
        if (d2 > 250000) { continue; }
        var f = 900 / d2;
        a.vx += dx * f * k; a.vy += dy * f * k; b.vx -= dx * f * k; b.vy -= dy * f * k;
      }
    }
    links.forEach(function (l) {
      if (l.ended && !showEnded.checked) { return; }
      var a = nodes[l.s], b = nodes[l.t], dx = b.x - a.x, dy = b.y - a.y;
      var d = Math.sqrt(dx * dx + dy * dy) + 0.01, f = (d - 70) / d * 0.5 * k;
      a.vx += dx * f; a.vy += dy * f; b.vx -= dx * f; b.vy -= dy * f;
    });
    nodes.forEach(function (p) {
      p.vx -= p.x * 0.01 * k; p.vy -= p.y * 0.01 * k;
      if (p.fixed) { p.vx = 0; p.vy = 0; return; }
      p.vx *= 0.6; p.vy *= 0.6;
      p.x += Math.max(-30, Math.min(30, p.vx)); p.y += Math.max(-30, Math.min(30, p.vy));
    });
    alpha *= 0.985;
  }
  function draw() {
    links.forEach(function (l) {
      var a = nodes[l.s], b = nodes[l.t], hidden = l.ended && !showEnded.checked;
      l.line.style.display = l.label.style.display = hidden ? "none" : "";
      l.line.setAttribute("x1", a.x); l.line.setAttribute("y1", a.y);
      l.line.setAttribute("x2", b.x); l.line.setAttribute("y2", b.y);
      l.label.setAttribute("x", (a.x + b.x) / 2); l.label.setAttribute("y", (a.y + b.y) / 2 - 2);
    });
    nodes.forEach(function (p) { p.g.setAttribute("transform", "translate(" + p.x + "," + p.y + ")"); });
  }

  var zoom = { k: 1, x: 0, y: 0 };
  function applyZoom() {
    view.setAttribute("transform", "translate(" + zoom.x + "," + zoom.y + ") scale(" + zoom.k + ")");
    labelLayer.style.display = zoom.k < 0.6 ? "none" : "";
  }
  function fit() {
    var box = svg.getBoundingClientRect(), minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    nodes.forEach(function (p) {
      minX = Math.min(minX, p.x); minY = Math.min(minY, p.y); maxX = Math.max(maxX, p.x); maxY = Math.max(maxY, p.y);
    });
    if (!nodes.length) { minX = minY = -1; maxX = maxY = 1; }
    var w = Math.max(maxX - minX, 1) + 160, h = Math.max(maxY - minY, 1) + 80;
    zoom.k = Math.min(2, Math.min(box.width / w, box.height / h));
    zoom.x = box.width / 2 - zoom.k * (minX + maxX) / 2;
    zoom.y = box.height / 2 - zoom.k * (minY + maxY) / 2;
    applyZoom();
  }
  for (var warm = 0; warm < 250 && nodes.length; warm++) { tick(); }
  draw(); fit();
  function frame() {
    if (alpha > 0.003) { tick(); draw(); }
    window.requestAnimationFrame(frame);
  }
  window.requestAnimationFrame(frame);

  function pointer(ev) {
    var box = svg.getBoundingClientRect();
    return { x: (ev.clientX - box.left - zoom.x) / zoom.k, y: (ev.clientY - box.top - zoom.y) / zoom.k };
  }
  var drag = null, pan = null;
  function startDrag(ev, i) {
    ev.stopPropagation();
    drag = i; nodes[i].fixed = true; alpha = Math.max(alpha, 0.3);
    svg.setPointerCapture(ev.pointerId);
  }
  svg.addEventListener("pointerdown", function (ev) {
    if (drag !== null) { return; }
    pan = { x: ev.clientX - zoom.x, y: ev.clientY - zoom.y };
    svg.classList.add("panning");
    svg.setPointerCapture(ev.pointerId);
  });
  svg.addEventListener("pointermove", function (ev) {
    if (drag !== null) {
      var p = pointer(ev); nodes[drag].x = p.x; nodes[drag].y = p.y; draw();
    } else if (pan) {
      zoom.x = ev.clientX - pan.x; zoom.y = ev.clientY - pan.y; applyZoom();
    }
  });
  function release() {
    if (drag !== null) { nodes[drag].fixed = false; drag = null; }
    pan = null; svg.classList.remove("panning");
  }
  svg.addEventListener("pointerup", release);
  svg.addEventListener("pointercancel", release);
  svg.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var box = svg.getBoundingClientRect(), mx = ev.clientX - box.left, my = ev.clientY - box.top;
    var factor = Math.exp(-ev.deltaY * 0.0015), k = Math.max(0.05, Math.min(8, zoom.k * factor));
    zoom.x = mx - (mx - zoom.x) * k / zoom.k; zoom.y = my - (my - zoom.y) * k / zoom.k; zoom.k = k;
    applyZoom();
  }, { passive: false });
  svg.addEventListener("dblclick", fit);

  var details = document.getElementById("details");
  function showDetails(i) {
    var e = nodes[i].e, lines = [e.name + "  [" + e.label + "]"];
    if (e.aliases.length) { lines.push("aliases: " + e.aliases.join(", ")); }
    links.forEach(function (l) {
      if (l.s !== i && l.t !== i) { return; }
      var r = l.r, msgs = r.sources.map(function (s) { return s.message_id; }).filter(Boolean);
      lines.push((l.ended ? "(ended) " : "") + nodes[l.s].e.name + " \u2014" + r.predicate + "\u2192 " +
                 nodes[l.t].e.name + (msgs.length ? "  from " + msgs.join(", ") : ""));
    });
    details.textContent = lines.join("\n");
    details.hidden = false;
  }
  document.getElementById("filter").addEventListener("input", function (ev) {
    var q = ev.target.value.toLowerCase();
    nodes.forEach(function (p) {
      var names = [p.e.name].concat(p.e.aliases).join("\n").toLowerCase();
      var hit = q && names.indexOf(q) >= 0;
      p.g.setAttribute("class", "node" + (q && !hit ? " dim" : "") + (hit ? " hit" : ""));
    });
  });
  showEnded.addEventListener("change", function () { alpha = Math.max(alpha, 0.2); draw(); });
})();
