// The page scripts' words in the page's language: the server sends the catalog of the page's
// language (/i18n/<locale>.js, from webapp/translations/<locale>.po) before this file.
// KDI18N._("message %(name)s", {name: v}): the translation (or the English message itself);
// KDI18N.p_(context, "message", {...}): the message as a rulebook with words of its own says it
// (a gettext context such as "origins"), else as _ says it.
(function () {
  "use strict";
  var data = window.KDI18N || { messages: {} };
  var own = Object.prototype.hasOwnProperty;
  function fill(text, values) {
    if (!values) { return text; }
    return text.replace(/%\(([a-z_]+)\)s|%%/g, function (all, key) {
      if (all === "%%") { return "%"; }
      return Object.prototype.hasOwnProperty.call(values, key) ? String(values[key]) : all;
    });
  }
  function _(message, values) {
    return fill(own.call(data.messages, message) ? data.messages[message] : message, values);
  }
  function p_(context, message, values) {
    var key = context + "\u0004" + message;  // as the server's catalog keys it (kingdomino.i18n)
    return context && own.call(data.messages, key) ? fill(data.messages[key], values) : _(message, values);
  }
  data._ = _;
  data.p_ = p_;
  window.KDI18N = data;
})();
