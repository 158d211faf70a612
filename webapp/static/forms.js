// What the upload and batch forms share: a drop zone for a file input, and bonus choices that
// follow the chosen rule set. Exposed as window.KDForms; plain JavaScript, no framework.
(function () {
  "use strict";

  // Dropping files on `drop` puts them in `input` and calls `changed`; dragging shows `.over`.
  function dropZone(drop, input, changed) {
    input.addEventListener("change", changed);
    ["dragenter", "dragover"].forEach(function (ev) {
      drop.addEventListener(ev, function (e) { e.preventDefault(); drop.classList.add("over"); });
    });
    ["dragleave", "drop"].forEach(function (ev) {
      drop.addEventListener(ev, function (e) { e.preventDefault(); drop.classList.remove("over"); });
    });
    drop.addEventListener("drop", function (e) {
      if (e.dataTransfer && e.dataTransfer.files.length) {
        input.files = e.dataTransfer.files;
        changed();
      }
    });
  }

  // Show only the `.bonus` choices whose data-rules is the selected rule set (unticking the rest).
  function bonusChoices(rules) {
    var sync = function () {
      var shown = 0;
      document.querySelectorAll(".bonus").forEach(function (el) {
        var on = el.getAttribute("data-rules") === rules.value;
        el.hidden = !on;
        if (!on) { el.querySelector("input").checked = false; } else { shown++; }
      });
      document.getElementById("bonuses").hidden = shown === 0;
    };
    rules.addEventListener("change", sync);
    sync();
  }

  window.KDForms = {dropZone: dropZone, bonusChoices: bonusChoices};
})();
