// markmem console: the claim tooltip (a bar's <title>, shown at once and styled). No other script.
(function () {
  "use strict";
  var tip = document.getElementById("tip");
  if (!tip) { return; }
  function show(g, x, y) {
    var title = g.querySelector("title");
    if (!title) { return; }
    tip.textContent = title.textContent;
    tip.hidden = false;
    tip.style.left = Math.min(x + 14, window.innerWidth - tip.offsetWidth - 8) + "px";
    tip.style.top = (y + 14) + "px";
  }
  function hide() { tip.hidden = true; }
  document.querySelectorAll("svg.timeline g.claim").forEach(function (g) {
    g.addEventListener("mousemove", function (e) { show(g, e.clientX, e.clientY); });
    g.addEventListener("mouseleave", hide);
    g.addEventListener("focus", function () { var r = g.getBoundingClientRect(); show(g, r.left, r.bottom); });
    g.addEventListener("blur", hide);
  });
})();
