// spoolgate console: live updates without reloads. Every
// <body data-live-every="N"> page fetches itself every N seconds and swaps
// in each [data-live] region whose content changed, except a region that
// holds the focused element or a field edited since it was drawn: what is
// being typed, ticked or picked is never reset. Without this script the
// page refreshes itself (a <noscript> meta refresh). The number of fetches
// swapped in is exposed as <html data-live-count> (tests wait on it).
(function () {
  "use strict";
  var every = Number(document.body.dataset.liveEvery || 0) * 1000;
  if (!every) return;
  var count = 0;
  function edited(region) {
    var a = document.activeElement;
    if (a && a !== document.body && region.contains(a) && a.matches("input,textarea,select,button")) return true;
    var fields = region.querySelectorAll("input,textarea,select");
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.type === "checkbox" || f.type === "radio") {
        if (f.checked !== f.defaultChecked) return true;
      } else if (f.tagName === "SELECT") {
        for (var j = 0; j < f.options.length; j++) {
          if (f.options[j].selected !== f.options[j].defaultSelected) return true;
        }
      } else if (f.type !== "hidden" && f.value !== f.defaultValue) {
        return true;
      }
    }
    return false;
  }
  function swap(html) {
    var next = new DOMParser().parseFromString(html, "text/html");
    document.querySelectorAll("[data-live]").forEach(function (region) {
      var fresh = next.querySelector('[data-live="' + region.dataset.live + '"]');
      if (!fresh || edited(region) || fresh.innerHTML === region.innerHTML) return;
      region.innerHTML = fresh.innerHTML;
    });
    count++;
    document.documentElement.dataset.liveCount = String(count);
    // A page that no longer changes (a task that ended) says so by
    // dropping its period: stop asking.
    return Number(next.body.dataset.liveEvery || 0) > 0;
  }
  function tick() {
    fetch(location.href, { credentials: "same-origin", headers: { "X-Spoolgate-Live": "1" } })
      .then(function (r) {
        // A login that ended (a redirect to /login, 401, 403) or a page
        // gone (404): stop, the page as it is stays readable. Anything
        // else (a restart, a 503) is tried again at the next tick.
        if (r.redirected || r.status === 401 || r.status === 403 || r.status === 404) throw new Error("stop");
        return r.ok ? r.text() : "";
      })
      .then(function (html) {
        if (!html || swap(html)) setTimeout(tick, every);
      })
      .catch(function (e) {
        if (e.message === "stop") {
          document.documentElement.dataset.liveStopped = "1";
        } else {
          setTimeout(tick, every);
        }
      });
  }
  setTimeout(tick, every);
})();
