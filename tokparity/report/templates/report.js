// Filters for the mismatch list: every case carries data-model, data-backend, data-cls,
// data-cause and data-tags ("script=Latn lang=en ..."); a select left on "" matches everything.
(function () {
  "use strict";
  var form = document.getElementById("filters");
  if (!form) { return; }
  var selects = form.querySelectorAll("select");
  var cases = document.querySelectorAll(".case");
  var shown = document.getElementById("shown");
  function apply() {
    var want = {};
    selects.forEach(function (s) { want[s.name] = s.value; });
    var n = 0;
    cases.forEach(function (c) {
      var ok = (!want.model || c.dataset.model === want.model) &&
               (!want.backend || c.dataset.backend === want.backend) &&
               (!want.cls || c.dataset.cls === want.cls) &&
               (!want.cause || c.dataset.cause === want.cause) &&
               (!want.tag || (" " + c.dataset.tags + " ").indexOf(" " + want.tag + " ") >= 0);
      c.classList.toggle("hidden", !ok);
      if (ok) { n += 1; }
    });
    shown.textContent = "showing " + n + " of " + cases.length;
  }
  selects.forEach(function (s) { s.addEventListener("change", apply); });
  apply();
})();
