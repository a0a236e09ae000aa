/**
 * The console's only script, served from /console/assets/console.js (CSP `script-src 'self'`).
 * Every page works without it; it adds local-time dates, copy buttons and live export status.
 */
export const CLIENT_SCRIPT = `"use strict";
(function () {
  var dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

  function localDates(root) {
    root.querySelectorAll("time[data-local]").forEach(function (el) {
      var date = new Date(el.getAttribute("datetime"));
      if (!isNaN(date.getTime())) el.textContent = dateFormat.format(date);
    });
  }

  function copyButtons(root) {
    root.querySelectorAll("button[data-copy]").forEach(function (button) {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source) return;
      source.addEventListener("focus", function () { source.select(); });
      button.hidden = false;
      button.addEventListener("click", function () {
        var done = function () {
          button.textContent = "Copied";
          setTimeout(function () { button.textContent = "Copy"; }, 2000);
        };
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(source.value).then(done, function () { source.select(); });
        } else {
          source.select();
          if (document.execCommand("copy")) done();
        }
      });
    });
  }

  function liveExports() {
    var box = document.querySelector("[data-live-src]");
    if (!box) return;
    var src = box.getAttribute("data-live-src");
    var announce = document.querySelector("[data-live-announce]");
    var inProgress = function () { return box.querySelector("[data-status=pending], [data-status=running]") !== null; };
    // Poll quickly at first, then back off, so a page left open on a slow export stays cheap.
    var delay = 1000;
    var later = function () {
      delay = Math.min(delay * 1.5, 15000);
      setTimeout(tick, delay);
    };
    var tick = function () {
      if (!inProgress()) return;
      fetch(src, { credentials: "same-origin", cache: "no-store" })
        .then(function (res) { return res.ok ? res.text() : Promise.reject(res.status); })
        .then(function (html) {
          var next = new DOMParser().parseFromString(html, "text/html").querySelector("[data-live-src]");
          if (next) {
            box.innerHTML = next.innerHTML;
            localDates(box);
            hideRefresh();
            if (!inProgress() && announce) announce.textContent = "The export is ready.";
          }
          later();
        }, later);
    };
    var hideRefresh = function () {
      box.querySelectorAll("[data-refresh-link]").forEach(function (link) { link.hidden = true; });
    };
    hideRefresh();
    setTimeout(tick, delay);
  }

  localDates(document);
  copyButtons(document);
  liveExports();
})();
`;
