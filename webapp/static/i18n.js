// The page scripts' words in the page's language: the server sends the catalog of the page's
// language (/i18n/<locale>.js, from webapp/translations/<locale>.po) before this file.
// KDI18N._("message %(name)s", {name: v}): the translation (or the English message itself).
(function () {
  "use strict";
  var data = window.KDI18N || { messages: {} };
  function _(message, values) {
    var text = Object.prototype.hasOwnProperty.call(data.messages, message) ? data.messages[message] : message;
    if (!values) { return text; }
    return text.replace(/%\(([a-z_]+)\)s|%%/g, function (all, key) {
      if (all === "%%") { return "%"; }
      return Object.prototype.hasOwnProperty.call(values, key) ? String(values[key]) : all;
    });
  }
  data._ = _;
  window.KDI18N = data;
})();
