/* MathJax's smallest script size, before MathJax starts (course/sphinx_ext.py loads this after the page's MathJax
   configuration and before MathJax itself, which is deferred). MathML draws a second-level script (a subscript's
   subscript: the MLM under chapter 11's brace) at half the formula's size, 8 px of the 16-px text a formula is set
   in, but never under scriptminsize: "8px" by default, in MathJax's own px (1/16 of an em it takes as 20 CSS px
   here), a floor of 6.3 px that never binds. 0.57em is 9.1 px of that 16-px text, what reads on a phone (course/plots.py's READABLE_PX; tests/test_pages.py
   measures every glyph). page.js then scales a wide formula only as far as keeps its smallest glyph at 9 px, and
   scrolls the rest. */
(function () {
  "use strict";
  var mj = window.MathJax;
  if (!mj || typeof mj !== "object") return;  // a page without formulas
  mj.startup = mj.startup || {};
  var ready = mj.startup.ready;
  mj.startup.ready = function () {
    window.MathJax._.core.MmlTree.MmlNodes.math.MmlMath.defaults.scriptminsize = "0.57em";
    if (ready) ready(); else window.MathJax.startup.defaultReady();
  };
})();
