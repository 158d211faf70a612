// Upload page: drag and drop onto the picker, preview, rule-dependent bonus choices.
(function () {
  "use strict";
  var drop = document.getElementById("drop");
  var input = document.getElementById("photo");
  var preview = document.getElementById("preview");
  var text = document.getElementById("drop-text");
  var rules = document.getElementById("rules");
  var form = document.getElementById("upload-form");

  function showPreview() {
    var file = input.files && input.files[0];
    if (!file) { preview.hidden = true; return; }
    text.textContent = file.name + " (" + Math.round(file.size / 1024) + " KB)";
    if (/^image\//.test(file.type)) {
      preview.src = URL.createObjectURL(file);
      preview.hidden = false;
    }
  }
  input.addEventListener("change", showPreview);
  ["dragenter", "dragover"].forEach(function (ev) {
    drop.addEventListener(ev, function (e) { e.preventDefault(); drop.classList.add("over"); });
  });
  ["dragleave", "drop"].forEach(function (ev) {
    drop.addEventListener(ev, function (e) { e.preventDefault(); drop.classList.remove("over"); });
  });
  drop.addEventListener("drop", function (e) {
    if (e.dataTransfer && e.dataTransfer.files.length) {
      input.files = e.dataTransfer.files;
      showPreview();
    }
  });

  function syncBonuses() {
    var shown = 0;
    document.querySelectorAll(".bonus").forEach(function (el) {
      var on = el.getAttribute("data-rules") === rules.value;
      el.hidden = !on;
      if (!on) { el.querySelector("input").checked = false; } else { shown++; }
    });
    document.getElementById("bonuses").hidden = shown === 0;
  }
  rules.addEventListener("change", syncBonuses);
  syncBonuses();

  form.addEventListener("submit", function () {
    var b = document.getElementById("submit");
    b.disabled = true;
    b.textContent = "Reading the photo\u2026";
  });
})();
