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
  KDForms.dropZone(drop, input, showPreview);
  KDForms.bonusChoices(rules);

  form.addEventListener("submit", function () {
    var b = document.getElementById("submit");
    b.disabled = true;
    b.textContent = b.getAttribute("data-busy") || b.textContent;
  });
})();
