/**
 * The console's only script, served from /console/assets/console.js (CSP `script-src 'self'`).
 * Every page works without it; it adds local-time dates, copy buttons, live export status and
 * follows a running deploy (status, controls and log) on an app's pages, and counts down to each
 * custom domain's next check, redrawing the Custom domains section once a check is due, and
 * follows an app's runtime output live (SSE) with its search.
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

  // An app page or deploy log while a deploy runs: poll the app's JSON route (and the log's),
  // and redraw the page's live part once the deploy's state changes.
  function liveApp() {
    var box = document.getElementById("app-live");
    if (!box || !box.hasAttribute("data-app-src") || box.getAttribute("data-deploying") !== "true") return;
    var appSrc = box.getAttribute("data-app-src");
    var logSrc = box.getAttribute("data-log-src");
    var announce = document.querySelector("[data-app-announce]");
    var get = function (url) {
      return fetch(url, { credentials: "same-origin", cache: "no-store" }).then(function (res) {
        return res.ok ? res : Promise.reject(res.status);
      });
    };
    var stateOf = function (app) {
      var d = app.latest_deploy;
      return (d ? d.id + ":" + d.status : "none") + ":" + app.status;
    };
    var hideRefresh = function () {
      box.querySelectorAll("[data-refresh-link]").forEach(function (link) { link.hidden = true; });
    };
    // The deploy's log comes line by line over SSE (resumed by the browser with the last event
    // id); the lines received so far are the log shown, also after a redraw of the page.
    var streamed = null;
    var shown = false;
    var showStreamed = function () {
      shown = false;
      var pre = document.getElementById("deploy-log");
      if (!pre || !streamed || streamed.length === 0) return;
      var atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
      pre.textContent = streamed.join("\\n") + "\\n";
      if (atEnd) pre.scrollTop = pre.scrollHeight;
    };
    if (logSrc && window.EventSource && document.getElementById("deploy-log")) {
      streamed = [];
      var logSource = new EventSource(logSrc + "/stream");
      logSource.onmessage = function (event) {
        streamed.push(JSON.parse(event.data).text);
        if (!shown) {
          shown = true;
          setTimeout(showStreamed, 100);
        }
      };
      logSource.addEventListener("end", function () { logSource.close(); });
    }
    var followLog = function () {
      if (!logSrc || streamed) return Promise.resolve();
      return get(logSrc).then(function (res) { return res.text(); }).then(function (text) {
        var pre = document.getElementById("deploy-log");
        if (!pre || !text) return;
        var atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
        pre.textContent = text;
        if (atEnd) pre.scrollTop = pre.scrollHeight;
      });
    };
    var redraw = function () {
      return get(location.pathname).then(function (res) { return res.text(); }).then(function (html) {
        var next = new DOMParser().parseFromString(html, "text/html").getElementById("app-live");
        if (!next) return;
        var focused = document.activeElement && box.contains(document.activeElement) ? document.activeElement.id : "";
        box.innerHTML = next.innerHTML;
        ["data-app-state", "data-deploying"].forEach(function (name) { box.setAttribute(name, next.getAttribute(name)); });
        localDates(box);
        showStreamed();
        var pre = document.getElementById("deploy-log");
        if (pre) pre.scrollTop = pre.scrollHeight;
        if (focused && document.getElementById(focused)) document.getElementById(focused).focus();
        // The page read may be newer than the JSON that asked for it (the deploy ended in between):
        // what the redrawn page shows decides, or its end would never be announced.
        var deploying = next.getAttribute("data-deploying") === "true";
        if (deploying) hideRefresh();
        if (!deploying && announce) {
          var failed = /:failed:/.test(next.getAttribute("data-app-state") || "");
          announce.textContent = failed ? "The deploy failed." : "The deploy is live.";
        }
      });
    };
    var delay = 1000;
    var tick = function () {
      get(appSrc).then(function (res) { return res.json(); }).then(function (app) {
        return followLog().then(function () {
          return stateOf(app) !== box.getAttribute("data-app-state") ? redraw() : undefined;
        }).then(function () { return app; });
      }).then(function (app) {
        if (app.deploy_in_progress) later();
        else hideRefresh();
      }, later);
    };
    var later = function () {
      delay = Math.min(delay * 1.2, 5000);
      setTimeout(tick, delay);
    };
    hideRefresh();
    setTimeout(tick, delay);
  }

  // The Custom domains section: a countdown to each domain's next check; once one is due, the
  // section is fetched again (every 2 s until the check has run) and redrawn, keeping the text
  // typed in the add form.
  function liveDomains() {
    var box = document.getElementById("domains");
    if (!box) return;
    var hideRefresh = function () {
      box.querySelectorAll("[data-domains-refresh]").forEach(function (link) { link.hidden = true; });
    };
    var left = function (ms) {
      var s = Math.max(0, Math.ceil(ms / 1000));
      return s >= 60 ? "in " + Math.floor(s / 60) + " min " + (s % 60) + " s" : "in " + s + " s";
    };
    // Badge changes are said once through the page's status line (the countdowns are not).
    var badges = function () {
      var seen = {};
      box.querySelectorAll("[data-domain]").forEach(function (item) {
        var badge = item.querySelector("[data-domain-status]");
        if (badge) seen[item.getAttribute("data-domain")] = badge.getAttribute("data-domain-status");
      });
      return seen;
    };
    var announce = function (before, after) {
      var status = document.querySelector("[data-domains-announce]");
      var changed = Object.keys(after).filter(function (name) { return before[name] && before[name] !== after[name]; });
      if (status && changed.length > 0) {
        status.textContent = changed.map(function (name) { return name + ": " + after[name]; }).join(". ");
      }
    };
    var lastRefresh = 0;
    var refreshing = false;
    var redraw = function () {
      refreshing = true;
      lastRefresh = Date.now();
      fetch(location.pathname, { credentials: "same-origin", cache: "no-store" })
        .then(function (res) { return res.ok ? res.text() : Promise.reject(res.status); })
        .then(function (html) {
          var next = new DOMParser().parseFromString(html, "text/html").getElementById("domains");
          if (!next) return;
          var input = document.getElementById("f-hostname");
          var typed = input ? input.value : "";
          var focused = input !== null && document.activeElement === input;
          var before = badges();
          box.innerHTML = next.innerHTML;
          announce(before, badges());
          var fresh = document.getElementById("f-hostname");
          if (fresh) {
            fresh.value = typed;
            if (focused) fresh.focus();
          }
          localDates(box);
          copyButtons(box);
          hideRefresh();
          tick();
        })
        .then(function () { refreshing = false; }, function () { refreshing = false; });
    };
    var tick = function () {
      var due = false;
      box.querySelectorAll("[data-countdown]").forEach(function (el) {
        var ms = Date.parse(el.getAttribute("data-countdown")) - Date.now();
        if (ms <= 0) {
          el.textContent = "checking now";
          due = true;
        } else el.textContent = left(ms);
      });
      if (due && !refreshing && Date.now() - lastRefresh >= 2000) redraw();
    };
    hideRefresh();
    tick();
    setInterval(tick, 1000);
  }

  // The Environment section: Add variable adds an empty row in place instead of a round trip, so
  // what was typed in the other rows stays as it is.
  function envRows() {
    var form = document.querySelector("form.env-rows");
    if (!form) return;
    var count = form.querySelector("input[name=rows]");
    var add = form.querySelector("button[name=action][value=add]");
    var rows = form.querySelectorAll("fieldset.env-row");
    if (!count || !add || rows.length === 0) return;
    add.addEventListener("click", function (event) {
      event.preventDefault();
      var all = form.querySelectorAll("fieldset.env-row");
      var last = all[all.length - 1];
      var n = Number(count.value);
      var row = last.cloneNode(true);
      row.setAttribute("data-env-row", String(n));
      row.querySelector("legend").textContent = "Variable " + (n + 1);
      row.querySelectorAll(".env-row-errors").forEach(function (el) { el.remove(); });
      row.querySelectorAll("input, textarea, label[for]").forEach(function (el) {
        ["id", "for", "name"].forEach(function (attr) {
          var value = el.getAttribute(attr);
          if (value) el.setAttribute(attr, value.replace(/[0-9]+$/, String(n)));
        });
        el.removeAttribute("aria-invalid");
        el.removeAttribute("aria-describedby");
        if (el.type === "checkbox") el.checked = false;
        else if (el.tagName !== "LABEL") el.value = "";
      });
      last.after(row);
      count.value = String(n + 1);
      row.querySelector("input[type=text]").focus();
    });
  }

  // The app page's Logs section: the runtime output live over SSE (EventSource resumes with the
  // last event id by itself), the gap fetched from the JSON route when the tab is shown again,
  // and the search form answered from the JSON route without reloading the page.
  function liveLogs() {
    var box = document.getElementById("logs");
    var pre = document.getElementById("live-logs");
    if (!box || !pre || !window.EventSource || !window.fetch) return;
    var status = document.getElementById("logs-status");
    var form = document.getElementById("logs-search");
    var back = box.querySelector("[data-logs-live]");
    var streamSrc = box.getAttribute("data-logs-stream");
    var searchSrc = box.getAttribute("data-logs-search");
    var MAX_ROWS = 2000;
    var source = null;
    var lastId = "";
    var lastAt = 0;
    var seen = [];
    var seenSet = {};
    var searching = box.getAttribute("data-searching") === "true";
    var pad = function (n) { return (n < 10 ? "0" : "") + n; };
    var format = function (line) {
      var d = new Date(line.at);
      var when = d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " + pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + ":" + pad(d.getUTCSeconds());
      return when + (line.stream === "stderr" ? " ! " : "   ") + line.text + "\\n";
    };
    var say = function (text) { if (status) status.textContent = text; };
    // A line already shown (from the stream or a gap fetch) is not shown twice.
    var fresh = function (line) {
      var key = line.at + "|" + line.stream + "|" + line.text;
      if (seenSet[key]) return false;
      seenSet[key] = true;
      seen.push(key);
      if (seen.length > MAX_ROWS * 2) delete seenSet[seen.shift()];
      return true;
    };
    var add = function (line) {
      if (!fresh(line)) return;
      var atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
      var row = document.createElement("span");
      row.className = line.stream === "stderr" ? "log-line log-stderr" : "log-line";
      row.textContent = format(line);
      pre.appendChild(row);
      while (pre.childNodes.length > MAX_ROWS) pre.removeChild(pre.firstChild);
      if (line.at > lastAt) lastAt = line.at;
      if (atEnd) pre.scrollTop = pre.scrollHeight;
    };
    var clear = function () {
      pre.textContent = "";
      seen = [];
      seenSet = {};
    };
    var open = function () {
      if (source) source.close();
      source = new EventSource(streamSrc + (lastId ? "?last_event_id=" + encodeURIComponent(lastId) : ""));
      source.onopen = function () { say("Live."); };
      source.onmessage = function (event) {
        if (event.lastEventId) lastId = event.lastEventId;
        add(JSON.parse(event.data));
      };
      source.onerror = function () {
        if (source && source.readyState === EventSource.CLOSED) say("Disconnected.");
        else say("Reconnecting…");
      };
    };
    var get = function (params) {
      var query = Object.keys(params).filter(function (k) { return params[k] !== ""; }).map(function (k) {
        return encodeURIComponent(k) + "=" + encodeURIComponent(params[k]);
      }).join("&");
      return fetch(searchSrc + (query ? "?" + query : ""), { credentials: "same-origin", cache: "no-store" }).then(function (res) {
        return res.json().then(function (body) { return res.ok ? body : Promise.reject(body.error || res.status); });
      });
    };
    // Back from a hidden tab (the browser may have throttled or dropped the stream): fetch what
    // was printed meanwhile, then make sure the stream is open again.
    var catchUp = function () {
      if (searching || document.hidden) return;
      get({ since: lastAt ? String(lastAt) : "", limit: "1000" }).then(function (body) {
        body.lines.forEach(add);
      }, function () {}).then(function () {
        if (!source || source.readyState === EventSource.CLOSED) open();
      });
    };
    var live = function () {
      searching = false;
      box.setAttribute("data-searching", "false");
      if (back) back.hidden = true;
      clear();
      lastId = "";
      lastAt = 0;
      say("Connecting…");
      open();
    };
    var asUtc = function (value) { return value ? String(Date.parse(value.length === 16 ? value + ":00Z" : value + "Z")) : ""; };
    if (form) {
      form.addEventListener("submit", function (event) {
        event.preventDefault();
        var data = new FormData(form);
        var q = String(data.get("q") || "");
        var since = String(data.get("since") || "");
        var until = String(data.get("until") || "");
        if (!q && !since && !until) return live();
        if (source) source.close();
        source = null;
        searching = true;
        box.setAttribute("data-searching", "true");
        say("Searching…");
        get({ q: q, since: asUtc(since), until: asUtc(until), limit: "1000" }).then(function (body) {
          clear();
          body.lines.forEach(add);
          say(body.lines.length + (body.lines.length === 1 ? " line" : " lines") + " found.");
          if (back) back.hidden = false;
        }, function (error) { say(String(error)); });
      });
    }
    if (back) back.addEventListener("click", function (event) { event.preventDefault(); if (form) form.querySelectorAll("input").forEach(function (input) { input.value = ""; }); live(); });
    document.addEventListener("visibilitychange", catchUp);
    if (!searching) live();
  }

  localDates(document);
  copyButtons(document);
  liveExports();
  liveApp();
  liveDomains();
  envRows();
  liveLogs();
})();
`;
