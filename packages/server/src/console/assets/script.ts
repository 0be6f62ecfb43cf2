/**
 * The console's progressive enhancement (every page works without it): dates in the reader's time
 * zone, copy buttons, confirmation of destructive forms, and a page's keyboard shortcuts declared
 * with `data-key` on the buttons or links they press.
 */
export const SCRIPT = `
(function () {
  "use strict";
  var fmt = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  document.querySelectorAll("time[datetime]").forEach(function (el) {
    var d = new Date(el.getAttribute("datetime"));
    if (!isNaN(d.getTime())) { el.textContent = fmt.format(d); el.title = d.toISOString(); }
  });
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var target = document.getElementById(button.getAttribute("data-copy"));
      if (!target) return;
      var text = target.textContent.trim();
      var done = function () { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy"; }, 2000); };
      if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, function () {});
      else { var r = document.createRange(); r.selectNodeContents(target); var s = getSelection(); s.removeAllRanges(); s.addRange(r); document.execCommand("copy"); done(); }
    });
  });
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.getAttribute("data-confirm"))) event.preventDefault();
    });
  });
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    var button = select.form && select.form.querySelector("[data-autosubmit-button]");
    if (button) button.hidden = true;
    select.addEventListener("change", function () { select.form.submit(); });
  });
  // A part of a form that applies only to one choice of another field (data-show-when="type=agent").
  document.querySelectorAll("[data-show-when]").forEach(function (part) {
    var rule = part.getAttribute("data-show-when").split("=");
    var form = part.closest("form");
    if (!form) return;
    var update = function () {
      var chosen = form.querySelector('[name="' + rule[0] + '"]:checked') || form.querySelector('select[name="' + rule[0] + '"]');
      part.hidden = !chosen || chosen.value !== rule[1];
    };
    form.addEventListener("change", update);
    update();
  });
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var t = event.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    var el = document.querySelector('[data-key="' + event.key.replace(/["\\\\]/g, "") + '"]');
    if (!el) return;
    event.preventDefault();
    if (el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA") el.focus(); else el.click();
  });
})();
`;
