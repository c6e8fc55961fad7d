/* Static demos (course/static_demo.py): every state was computed when the book was built and sits in the
   page as JSON (the figure's aria-label and each slider's aria-valuetext follow the state); this script wires the controls to those states and draws figures with Plotly (copied into
   _static by course/sphinx_ext.py). No kernel, no network. Colours follow the theme (light or dark). */
(function () {
  "use strict";

  function isDark() {
    return document.documentElement.dataset.theme === "dark";
  }

  function themed(layout) {
    var dark = isDark();
    var ink = dark ? "#e3e3e3" : "#222222";
    var grid = dark ? "#444444" : "#e5e5e5";
    var out = JSON.parse(JSON.stringify(layout || {}));
    out.paper_bgcolor = "rgba(0,0,0,0)";
    out.plot_bgcolor = "rgba(0,0,0,0)";
    out.font = Object.assign({ color: ink, size: 13 }, out.font || {}, { color: ink });
    if (!out.margin) out.margin = { l: 60, r: 20, t: 40, b: 50 };
    Object.keys(out).forEach(function (k) {
      if (/^[xy]axis\d*$/.test(k)) {
        out[k] = Object.assign({ gridcolor: grid, zerolinecolor: grid, linecolor: grid }, out[k]);
      }
    });
    if (out.title && typeof out.title === "object") {
      out.title.font = Object.assign({}, out.title.font || {}, { color: ink });
    }
    // annotations drawn in the default ink follow the theme; coloured ones keep their colour
    (out.annotations || []).forEach(function (a) {
      if (!a.font || !a.font.color) a.font = Object.assign({}, a.font || {}, { color: ink });
    });
    out.autosize = true;
    delete out.width;
    return out;
  }

  // the figure's name for a screen reader: as course/static_demo.py's figure_label, in the page's edition
  // (the payload's "chart" template, "Chart: {title}. {caption}" translated)
  function figureLabel(layout, root, caption, template, untitled) {
    var t = layout.title, title = root.querySelector(".demo-title");
    var text = (t && typeof t === "object" ? t.text : t) || (title && title.textContent) || untitled || "chart";
    text = String(text).replace(/<[^>]+>/g, " ");
    var label = (template || "Chart: {title}. {caption}").replace(/\{(title|caption)\}/g, function (m, k) {
      return k === "title" ? text : caption;
    });
    return label.replace(/\s+/g, " ").trim();
  }

  function Demo(root) {
    this.root = root;
    this.drawing = Promise.resolve();
    this.p = JSON.parse(root.querySelector("script[data-demo-payload]").textContent);
    this.indices = this.p["default"].slice();
    this.figure = root.querySelector("[data-demo-figure]");
    this.caption = root.querySelector("[data-demo-caption]");
    this.html = root.querySelector("[data-demo-html]");
    this.controls = Array.prototype.slice.call(root.querySelectorAll("[data-demo-control]"));
    Array.prototype.forEach.call(root.querySelectorAll(".demo-frozen"), function (e) { e.remove(); });
    var self = this;
    this.controls.forEach(function (el, k) {
      var kind = el.dataset.demoKind;
      if (kind === "slider") {
        el.querySelector("input").addEventListener("input", function (ev) { self.set(k, +ev.target.value); });
      } else if (kind === "select") {
        el.querySelector("select").addEventListener("change", function (ev) { self.set(k, +ev.target.value); });
      } else {
        Array.prototype.forEach.call(el.querySelectorAll("button"), function (b) {
          b.addEventListener("click", function () { self.set(k, +b.dataset.demoIndex); });
        });
      }
    });
    this.render();
  }

  Demo.prototype.set = function (k, i) {
    this.indices[k] = i;
    var el = this.controls[k];
    if (el.dataset.demoKind === "slider") {
      el.querySelector("output").textContent = this.p.controls[k].labels[i];
      el.querySelector("input").setAttribute("aria-valuetext", this.p.controls[k].texts[i]);
    } else if (el.dataset.demoKind === "buttons") {
      Array.prototype.forEach.call(el.querySelectorAll("button"), function (b) {
        b.setAttribute("aria-pressed", String(+b.dataset.demoIndex === i));
      });
    }
    this.render();
  };

  Demo.prototype.state = function () {
    var k = 0, c = this.p.controls;
    for (var j = 0; j < c.length; j++) k = k * c[j].labels.length + this.indices[j];
    return this.p.states[k];
  };

  Demo.prototype.render = function () {
    var s = this.state(), pool = this.p.pool;
    this.caption.textContent = s.caption;
    this.html.innerHTML = s.html === undefined ? "" : pool[s.html];
    this.root.dataset.demoIndices = JSON.stringify(this.indices);
    if (window.courseLayout) window.courseLayout();  // page.js: a wider table may now need its scroll hint
    if (this.figure) {
      if (s.data === undefined) {
        this.figure.style.display = "none";
      } else {
        this.figure.style.display = "";
        this.figure.setAttribute("aria-label", figureLabel(JSON.parse(pool[s.layout]), this.root, s.caption, this.p.chart,
            this.p.untitled));
        if (window.Plotly) {
          // Plotly draws asynchronously: lay the page out again once the chart is in (its size may change)
          this.drawing = Promise.resolve(window.Plotly.react(this.figure, JSON.parse(pool[s.data]),
              themed(JSON.parse(pool[s.layout])), { displayModeBar: false, responsive: true }))
            .then(function () { if (window.courseLayout) window.courseLayout(); });
        }
      }
    }
  };

  function start() {
    var demos = Array.prototype.slice.call(document.querySelectorAll("[data-demo]")).map(function (root) {
      return new Demo(root);
    });
    // the theme switch (or the OS) changes data-theme on <html>: redraw in the other colours
    new MutationObserver(function () {
      demos.forEach(function (d) { d.render(); });
    }).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    // resolves once every demo's latest chart is drawn (tests/test_pages.py waits on it before measuring)
    window.courseDemosDrawn = function settled() {
      var now = demos.map(function (d) { return d.drawing; });
      return Promise.all(now).then(function () {
        return demos.some(function (d, i) { return d.drawing !== now[i]; }) ? settled() : undefined;
      });
    };
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
