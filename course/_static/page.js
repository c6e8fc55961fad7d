/* The book's page script, on every page (course/sphinx_ext.py adds it): what makes a page fit its column and
   read well with a keyboard and a screen reader. No network, no dependency.

   - Formulas wider than their column are scaled down to fit, never so far that their smallest glyph (a
     subscript) falls below READABLE_PX; one still too wide scrolls in its own box.
   - A printed output whose lines are aligned columns (a table printed by a cell, a tensor) keeps its lines:
     it scrolls sideways instead of wrapping one column into the next.
   - A table wider than its column on a phone is stacked: one block per row, each cell led by its column's
     header (the cells carry data-label), so no column is lost off the edge; unless the stack would be more
     than MAX_STACK_GROWTH times the table's height (a grid of short cells): then it scrolls sideways.
   - A figure scaled down to fit a narrow column opens at its natural size when tapped (and again to close).
   - Every box that still scrolls sideways gets a visible hint ("scroll sideways") and keyboard focus
     (tabindex=0, role=region and a name), so it can be scrolled without a mouse.
   - Quiz answers are announced: each quiz has a polite live region that says "A: right" or "B: not this one".
   - The theme's icon buttons whose name does not contain their visible text get their visible text as name.

   tests/test_pages.py checks the result: no element sticks out of its column, every scroll box has the
   hint, and axe-core finds no serious or critical violation. */
(function () {
  "use strict";

  var READABLE_PX = 9;  // the smallest text a page shows on a phone (course/plots.py's READABLE_PX)
  var MAX_STACK_GROWTH = 2;  // a stacked table at most twice as tall as the table it stacks
  var SCROLL_CANDIDATES = [
    ".bd-article pre", ".bd-article div.highlight", ".bd-article .cell_output .output",
    ".bd-article .cell_output", ".bd-article .pst-scrollable-table-container", ".bd-article div.math",
    ".bd-article .math-wrapper", ".bd-article mjx-container[display='true']", ".bd-article .static-demo .demo-html",
    ".bd-article .course-figure-zoomed", ".bd-article .cell_output table",
    ".bd-article .course-scrolls"  // marked before: unmarked when it no longer scrolls (a figure closed again)
  ].join(",");

  function article() { return document.querySelector(".bd-article") || document.body; }

  function overflows(e) { return e.scrollWidth > e.clientWidth + 1; }

  // --- formulas ------------------------------------------------------------------------------------------
  // The smallest glyph of a formula as it is drawn now, in px (MathJax draws each character as an mjx-c).
  function smallestGlyph(m) {
    var least = Infinity;
    Array.prototype.forEach.call(m.querySelectorAll("mjx-c"), function (c) {
      least = Math.min(least, parseFloat(getComputedStyle(c).fontSize) || Infinity);
    });
    return least;
  }

  // Scale formula m to fit `room` px, but no smaller than keeps its smallest glyph READABLE_PX.
  function fitTo(m, room, need) {
    if (!(room > 0 && need > room + 1)) return;
    var least = smallestGlyph(m);
    var floor = least < Infinity ? Math.min(1, READABLE_PX / least) : 1;
    var scale = Math.max(floor, Math.floor((room - 2) / need * 100) / 100);
    if (scale < 1) m.style.fontSize = (Math.ceil(scale * 1000) / 10) + "%";
  }

  function fitMath() {
    // an inline formula wider than the column (a phone) is scaled to the column too
    Array.prototype.forEach.call(document.querySelectorAll(".bd-article mjx-container:not([display='true'])"), function (m) {
      var col = (m.closest("p, li, td, dd, div") || article()).clientWidth;
      m.style.fontSize = "";
      fitTo(m, col, m.getBoundingClientRect().width);
    });
    Array.prototype.forEach.call(document.querySelectorAll(".bd-article mjx-container[display='true']"), function (m) {
      var box = m.parentElement;
      m.style.fontSize = "";
      var room = box.clientWidth, need = m.scrollWidth;
      var inner = m.firstElementChild;
      if (inner && inner.getBoundingClientRect) need = Math.max(need, inner.getBoundingClientRect().width);
      fitTo(m, room, need);
    });
  }

  // --- printed outputs ------------------------------------------------------------------------------------
  // Aligned columns: at least two lines with a gap of two or more spaces between words (a printed table, a
  // tensor). Such an output scrolls sideways rather than wrap (course.css: pre.course-columns).
  function printedColumns() {
    Array.prototype.forEach.call(document.querySelectorAll(".bd-article .cell_output pre"), function (pre) {
      if (pre.dataset.courseColumns) return;
      var aligned = pre.textContent.split("\n").filter(function (line) { return /\S {2,}\S/.test(line); });
      pre.dataset.courseColumns = aligned.length >= 2 ? "yes" : "no";
      if (aligned.length >= 2) pre.classList.add("course-columns");
    });
  }

  // --- tables ---------------------------------------------------------------------------------------------
  function labelCells(table) {
    var heads = Array.prototype.map.call(table.querySelectorAll("thead th"), function (th) {
      return th.textContent.trim();
    });
    if (!heads.length) return false;
    Array.prototype.forEach.call(table.querySelectorAll("tbody tr"), function (tr) {
      Array.prototype.forEach.call(tr.children, function (td, i) {
        if (heads[i] && !td.hasAttribute("data-label")) td.setAttribute("data-label", heads[i]);
      });
    });
    return true;
  }

  function stackTables() {
    var phone = window.matchMedia("(max-width: 600px)").matches;
    Array.prototype.forEach.call(document.querySelectorAll(".bd-article table"), function (t) {
      if (t.closest(".static-demo")) return;  // a demo's table is a grid of positions: it scrolls instead
      t.classList.remove("course-stacked", "course-grid");
      if (!phone) return;
      var box = t.parentElement;
      if ((t.scrollWidth > box.clientWidth + 1 || t.getBoundingClientRect().width > box.clientWidth + 1) &&
          labelCells(t)) {
        var flat = t.getBoundingClientRect().height;
        t.classList.add("course-stacked");
        // a grid of short cells (positions, numbers) would become a long column of cards: it scrolls instead
        if (t.getBoundingClientRect().height > MAX_STACK_GROWTH * flat) {
          t.classList.remove("course-stacked");
          t.classList.add("course-grid");  // its cells keep to one line (course.css)
        }
      }
    });
  }

  // --- figures --------------------------------------------------------------------------------------------
  function zoomableFigures() {
    Array.prototype.forEach.call(document.querySelectorAll(".bd-article .cell_output img"), function (img) {
      if (img.dataset.courseZoom) return;
      img.dataset.courseZoom = "1";
      img.addEventListener("click", function () {
        if (img.naturalWidth <= img.getBoundingClientRect().width + 1 && !img.classList.contains("course-natural")) return;
        var box = img.closest("figure") || img.parentElement;
        img.classList.toggle("course-natural");
        box.classList.toggle("course-figure-zoomed", img.classList.contains("course-natural"));
        markScrollBoxes();
      });
    });
  }

  // --- boxes that scroll sideways ---------------------------------------------------------------------------
  // the page's edition's words (the Chinese pages say lang="zh-CN"; issue 31)
  var WORDS = (document.documentElement.lang || "").indexOf("zh") === 0
    ? {code: "代码", formula: "公式", table: "表格", figure: "图", output: "输出", scrolls: "，可左右滚动",
       hint: "\u21c6 左右滑动查看其余部分"}
    : {code: "code", formula: "formula", table: "table", figure: "figure", output: "output", scrolls: ", scrolls sideways",
       hint: "\u21c6 scroll sideways for the rest"};
  function describe(e) {
    if (e.matches("pre, div.highlight")) return WORDS.code;
    if (e.matches("mjx-container, div.math, .math-wrapper")) return WORDS.formula;
    if (e.querySelector("table") || e.matches("table")) return WORDS.table;
    if (e.querySelector("img")) return WORDS.figure;
    return WORDS.output;
  }

  function markScrollBoxes() {
    var seen = [], named = {};
    Array.prototype.forEach.call(document.querySelectorAll(SCROLL_CANDIDATES), function (e) {
      var style = getComputedStyle(e);
      var scrolls = (style.overflowX === "auto" || style.overflowX === "scroll") && overflows(e);
      // a box inside another marked box needs no hint of its own
      if (scrolls && seen.some(function (s) { return s.contains(e); })) scrolls = false;
      var hint = e.nextElementSibling && e.nextElementSibling.classList.contains("course-scroll-hint")
        ? e.nextElementSibling : null;
      if (scrolls) {
        seen.push(e);
        e.classList.add("course-scrolls");
        if (!e.hasAttribute("tabindex")) { e.setAttribute("tabindex", "0"); e.dataset.courseTabindex = "1"; }
        // a <figure> keeps its own role (ARIA allows no region there); its label and focus suffice
        if (!e.hasAttribute("role") && !e.matches("figure")) { e.setAttribute("role", "region"); e.dataset.courseRole = "1"; }
        if (!e.hasAttribute("aria-label") || e.dataset.courseLabel) {
          // numbered by kind in page order: two regions never share a name (axe's landmark-unique)
          var kind = describe(e);
          named[kind] = (named[kind] || 0) + 1;
          e.setAttribute("aria-label", kind + " " + named[kind] + WORDS.scrolls); e.dataset.courseLabel = "1";
        }
        if (!hint) {
          hint = document.createElement("div");
          hint.className = "course-scroll-hint";
          hint.setAttribute("aria-hidden", "true");
          hint.textContent = WORDS.hint;
          e.insertAdjacentElement("afterend", hint);
        }
      } else if (e.classList.contains("course-scrolls")) {
        e.classList.remove("course-scrolls");
        if (e.dataset.courseTabindex) { e.removeAttribute("tabindex"); delete e.dataset.courseTabindex; }
        if (e.dataset.courseRole) { e.removeAttribute("role"); delete e.dataset.courseRole; }
        if (e.dataset.courseLabel) { e.removeAttribute("aria-label"); delete e.dataset.courseLabel; }
        if (hint) hint.remove();
      }
    });
    // the primary sidebar (the book's title and contents) is a landmark, so nothing on the page is outside one
    var sidebar = document.querySelector(".bd-sidebar-primary");
    if (sidebar && !sidebar.hasAttribute("role")) {
      sidebar.setAttribute("role", "complementary"); sidebar.setAttribute("aria-label", "The book's contents");
    }
    // the theme's own scrolling panes (sidebars, the table of contents) take keyboard focus too
    Array.prototype.forEach.call(document.querySelectorAll(".bd-sidebar-primary .sidebar-primary-items__end, " +
        ".bd-sidebar-primary, .bd-sidebar-secondary, .bd-toc-nav, nav.bd-links"), function (e) {
      if (e.scrollHeight > e.clientHeight + 1 && !e.hasAttribute("tabindex") && !e.querySelector("a, button, input")) {
        e.setAttribute("tabindex", "0");
      }
    });
  }

  // --- quizzes: a live region per quiz ---------------------------------------------------------------------
  function announceQuizzes() {
    Array.prototype.forEach.call(document.querySelectorAll(".bert-quiz"), function (quiz) {
      if (quiz.querySelector(".course-quiz-live")) return;
      var live = document.createElement("p");
      live.className = "course-quiz-live";
      live.setAttribute("aria-live", "polite");
      live.setAttribute("role", "status");
      quiz.appendChild(live);
      quiz.addEventListener("change", function (ev) {
        var input = ev.target;
        if (!input || input.type !== "radio") return;
        var label = input.closest("label"), q = input.closest("li.q");
        var ok = label && label.querySelector(".fb.ok");
        var n = q ? Array.prototype.indexOf.call(q.parentElement.children, q) + 1 : "";
        // the quiz's own edition's words (course/quiz.py: data-quiz-live, each mark's data-verdict)
        var mark = label && label.querySelector(".fb"), verdict = mark && mark.dataset.verdict;
        var words = { n: n, letter: input.value, verdict: verdict || (ok ? "right" : "not this one") };
        live.textContent = (quiz.dataset.quizLive || "Question {n}, {letter}: {verdict}")
          .replace(/\{(n|letter|verdict)\}/g, function (m, k) { return words[k]; });
      });
    });
  }

  // --- the theme's buttons: their accessible name contains their visible text (WCAG 2.5.3) ---------------------
  function nameButtons() {
    Array.prototype.forEach.call(document.querySelectorAll("button[aria-label], a[aria-label], summary[aria-label]"), function (b) {
      // icons inside a named button are decoration: their <title> ("Light", "Dark") is not the button's name
      Array.prototype.forEach.call(b.querySelectorAll("svg, i"), function (icon) {
        icon.setAttribute("aria-hidden", "true");
        icon.removeAttribute("role");
        icon.removeAttribute("aria-labelledby");
        Array.prototype.forEach.call(icon.querySelectorAll("title"), function (t) { t.remove(); });
      });
      var text = (b.innerText || "").replace(/\s+/g, " ").trim();
      var name = b.getAttribute("aria-label");
      if (text && name && name.toLowerCase().indexOf(text.toLowerCase()) === -1) {
        b.setAttribute("aria-label", text + " (" + name + ")");
      }
    });
  }

  var pending = 0;
  function layout() {
    if (pending) return;
    pending = window.requestAnimationFrame(function () {
      pending = 0;
      nameButtons();  // again: Font Awesome swaps its <i> icons for <svg> after this script first ran
      fitMath();
      printedColumns();
      stackTables();
      zoomableFigures();
      markScrollBoxes();
      document.documentElement.dataset.courseLayout = "done";
    });
  }

  function start() {
    announceQuizzes();
    nameButtons();
    layout();
    window.addEventListener("resize", layout);
    window.addEventListener("load", layout);
    if (document.fonts && document.fonts.ready) document.fonts.ready.then(layout);
    window.courseLayout = layout;  // static_demo.js calls it after a demo draws a new state
    // a box that changes size without a window resize (a demo's new table, a late font, the theme's sidebars)
    if (window.ResizeObserver) {
      var watched = new ResizeObserver(function () { layout(); });
      Array.prototype.forEach.call(document.querySelectorAll(".bd-article, .bd-article .static-demo"), function (e) {
        watched.observe(e);
      });
    }
    Array.prototype.forEach.call(document.images, function (img) {
      if (!img.complete) img.addEventListener("load", layout);
    });
    // MathJax typesets after this script: lay out again once it is done
    var tries = 0;
    if (!document.querySelector("script[src*='mathjax'], script[src*='tex-']")) {
      document.documentElement.dataset.courseMath = "none";
      return;
    }
    (function waitForMathJax() {
      var mj = window.MathJax;
      if (mj && mj.startup && mj.startup.promise) {
        mj.startup.promise.then(function () { document.documentElement.dataset.courseMath = "done"; layout(); });
      } else if (tries++ < 100) {
        window.setTimeout(waitForMathJax, 50);
      } else {
        document.documentElement.dataset.courseMath = "none";
      }
    })();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
