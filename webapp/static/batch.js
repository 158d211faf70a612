// Batch page: send the photos one request at a time (each under the upload limit), start the
// batch, then follow its progress. Without JavaScript the form posts everything at once.
(function () {
  "use strict";
  var _ = window.KDI18N._;  // the page's language (static/i18n.js)
  var meta = document.querySelector('meta[name="csrf-token"]');
  var token = meta ? meta.getAttribute("content") : "";

  function post(url, body) {
    return fetch(url, {
      method: "POST", body: body, credentials: "same-origin",
      headers: {"X-CSRF-Token": token, "X-Requested-With": "fetch", "Accept": "application/json"}
    }).then(function (resp) {
      return resp.json().catch(function () { return {}; }).then(function (data) {
        if (!resp.ok) {
          throw new Error(data.error || _("the server answered %(status)s", { status: resp.status }));
        }
        return data;
      });
    });
  }

  // ---- the form
  var form = document.getElementById("batch-form");
  if (form) {
    var rules = document.getElementById("rules");
    var input = document.getElementById("photos");
    var drop = document.getElementById("drop");
    var text = document.getElementById("drop-text");
    var status = document.getElementById("upload-status");
    var bar = document.getElementById("upload-progress");
    var errorBox = document.getElementById("batch-error");
    var button = document.getElementById("submit");

    var showFiles = function () {
      var n = input.files ? input.files.length : 0;
      var size = 0;
      for (var i = 0; i < n; i++) { size += input.files[i].size; }
      text.textContent = n ? _("files: %(n)s, %(mb)s MB", { n: n, mb: Math.round(size / 1048576) }) :
        _("Choose photos or zip files, or drop them here");
    };
    KDForms.bonusChoices(rules);
    KDForms.dropZone(drop, input, showFiles);

    var fail = function (err) {
      errorBox.textContent = err.message || String(err);
      errorBox.hidden = false;
      button.disabled = false;
      button.textContent = _("Read and score all");
    };

    form.addEventListener("submit", function (e) {
      if (!window.fetch || !window.FormData) { return; }  // plain form post
      e.preventDefault();
      errorBox.hidden = true;
      var files = Array.prototype.slice.call(input.files || []);
      if (!files.length) { fail(new Error(_("choose some photos (or a zip of photos) first"))); return; }
      button.disabled = true;
      button.textContent = _("Sending photos\u2026");
      var fields = new FormData();
      fields.append("rules", rules.value);
      document.querySelectorAll('.bonus input:checked').forEach(function (b) { fields.append("bonus", b.value); });
      var manifest = document.getElementById("manifest");
      if (manifest.files && manifest.files[0]) { fields.append("manifest", manifest.files[0]); }
      bar.hidden = false;
      bar.max = files.length;
      bar.value = 0;
      post(form.getAttribute("action"), fields).then(function (job) {
        var i = 0;
        var next = function () {
          if (i >= files.length) { return post(job.start, new FormData()).then(function () { window.location = job.page; }); }
          var one = new FormData();
          one.append("photos", files[i], files[i].name);
          status.textContent = _("Sending %(i)s of %(n)s: %(name)s", { i: i + 1, n: files.length, name: files[i].name });
          return post(job.upload, one).then(function () { i++; bar.value = i; return next(); });
        };
        return next();
      }).catch(fail);
    });
  }

  // ---- a running batch
  var job = document.getElementById("batch-job");
  if (job && (job.getAttribute("data-state") === "running" || job.getAttribute("data-state") === "uploading")) {
    var url = job.getAttribute("data-progress");
    var poll = function () {
      fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
        .then(function (r) { return r.json(); })
        .then(function (p) {
          var bar = document.getElementById("job-progress");
          document.getElementById("job-done").textContent = p.done;
          document.getElementById("job-total").textContent = p.total;
          if (bar) { bar.max = p.total || 1; bar.value = p.done; }
          if (p.state === "done" || p.state === "failed") { window.location.reload(); return; }
          window.setTimeout(poll, 1000);
        })
        .catch(function () { window.setTimeout(poll, 3000); });
    };
    window.setTimeout(poll, 500);
  }
})();
