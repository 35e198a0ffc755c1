// Small enhancements; every page works without them.
(function () {
  "use strict";

  // The status length rule, kept in step with the server's, which lives in
  // timeline/domain.py (`normalize_text`, `text_length`, `text_problem`): the text
  // as stored (control characters out, composed: NFC, blanks trimmed) in what a
  // reader sees as one character (grapheme clusters: a family emoji, a flag, a
  // letter with its accents), each link counting URL_LENGTH however long (as
  // Mastodon and its apps count), and RAW_LENGTH_FACTOR times the limit in code
  // points with the links written out.
  var URL_LENGTH = 23;
  var URL_PLACEHOLDER = new Array(URL_LENGTH + 1).join("x");
  var RAW_LENGTH_FACTOR = 10;
  // Grapheme clusters, as the server's `\X` finds them. A browser without
  // Intl.Segmenter counts code points: never fewer than the server counts, so what
  // its counter shows as fitting, the server takes.
  var GRAPHEMES = null;
  try {
    GRAPHEMES = new Intl.Segmenter(undefined, { granularity: "grapheme" });
  } catch (e) {
    GRAPHEMES = null;
  }
  function characterCount(text) {
    if (!GRAPHEMES) return Array.from(text).length;
    var n = 0, it = GRAPHEMES.segment(text)[Symbol.iterator]();
    while (!it.next().done) n++;
    return n;
  }
  // Python's blanks (str.isspace, its regular expressions' \s), line breaks
  // (str.splitlines) and \w ([\p{L}\p{N}_] here).
  var BLANK = "\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029" +
    "\\u202f\\u205f\\u3000";
  var ENDS = new RegExp("^[" + BLANK + "]+|[" + BLANK + "]+$", "g");
  var BREAKS = /\r\n|[\n\x0b\x0c\r\x1c-\x1e\x85\u2028\u2029]/g;
  var CONTROLS = /[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f]/g;
  // Links are found as timeline/richtext.py's `_pieces` finds them: one scan for
  // links, @names and #tags (a name or a tag can hide what follows), a name or tag
  // not after a word character, a link without the sentence's punctuation after it
  // and with a host. (Unicode classes built from strings: a browser without them
  // would refuse a literal, and with it this whole file; there links count as
  // written.)
  var TOKENS = null, WORD_BEFORE = {}, HOST_START = null, HANDLE = null;
  try {
    TOKENS = new RegExp(
      "(?:[Hh][Tt][Tt][Pp][Ss]?://|[Ww][Ww][Ww]\\.)[^" + BLANK + "<>\"`]+" +
        "|@[A-Za-z0-9_]{3,30}(?![\\p{L}\\p{N}_@])" +
        "|#[\\p{L}\\p{N}_][\\p{L}\\p{N}\\p{M}_]*",
      "gu"
    );
    WORD_BEFORE["@"] = new RegExp("[\\p{L}\\p{N}_@#]$", "u");
    WORD_BEFORE["#"] = new RegExp("[\\p{L}\\p{N}\\p{M}_@#&]$", "u");
    HOST_START = new RegExp("^[\\p{L}\\p{N}[]", "u");
    // Another server's handle, counted as its @name (timeline/richtext.py's
    // `_COUNTED_HANDLE`, with Mastodon's word characters: letters, marks, decimal
    // digits, connectors; the character before it is kept by the replacement).
    var HANDLE_WORD = "\\p{L}\\p{M}\\p{Nd}\\p{Pc}";
    HANDLE = new RegExp(
      "(^|[^" + HANDLE_WORD + "/])@([A-Za-z0-9_](?:[A-Za-z0-9_.\\-]*[A-Za-z0-9_])?)" +
        "@[" + HANDLE_WORD + ".\\-]*[" + HANDLE_WORD + "]",
      "gu"
    );
  } catch (e) {
    TOKENS = null;
  }
  // A text that shows nothing (timeline/domain.py's `_shows_something`): blanks,
  // format and control characters, and the ones Unicode says show nothing
  // (`_INVISIBLE`). A warning of them alone is none there, so it counts nothing.
  var SHOWS_NOTHING = null;
  try {
    SHOWS_NOTHING = new RegExp(
      "^[" + BLANK + "\\p{Cf}\\p{Cc}\\p{Cs}" +
        "\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f" +
        "\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\u2800\\u3164" +
        "\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufff8\\u{1bca0}-\\u{1bca3}" +
        "\\u{1d173}-\\u{1d17a}\\u{e0000}-\\u{e0fff}]*$",
      "u"
    );
  } catch (e) {
    SHOWS_NOTHING = null;
  }
  var PAIRS = { ")": "(", "]": "[", "}": "{" };
  function count(text, c) { return text.split(c).length - 1; }
  function urlEnd(url) {
    for (;;) {
      var last = url.charAt(url.length - 1);
      if (!last) return url;
      if (".,!?:;'\"*".indexOf(last) < 0 &&
          !(PAIRS[last] && count(url, PAIRS[last]) < count(url, last))) return url;
      url = url.slice(0, -1);
    }
  }
  function isUrl(url) {
    var scheme = url.indexOf("://");
    var rest = url.slice(0, 4).toLowerCase() === "www." ? url.slice(4)
      : scheme < 0 ? "" : url.slice(scheme + 3);
    return HOST_START.test(rest);
  }
  function statusLength(value) {
    var text = value.replace(BREAKS, "\n").replace(CONTROLS, "");
    if (text.normalize) text = text.normalize("NFC");
    text = text.replace(ENDS, "");
    // Each link is counted as URL_LENGTH characters in its place, as Mastodon
    // counts: a mark or joiner that clings to its edge clings to the placeholder.
    var counted = "", at = 0, match;
    if (TOKENS) {
      TOKENS.lastIndex = 0;
      while ((match = TOKENS.exec(text))) {
        var sign = match[0].charAt(0);
        if (WORD_BEFORE[sign]) {
          if (WORD_BEFORE[sign].test(text.slice(Math.max(0, match.index - 2), match.index))) {
            TOKENS.lastIndex = match.index + 1; // no name or tag here: scan on
          }
          continue;
        }
        var url = urlEnd(match[0]);
        if (isUrl(url)) {
          counted += text.slice(at, match.index) + URL_PLACEHOLDER;
          at = match.index + url.length;
        }
      }
    }
    counted += text.slice(at);
    // Each handle of another server counts as its @name, as Mastodon counts.
    if (HANDLE) counted = counted.replace(HANDLE, "$1@$2");
    return {
      length: characterCount(counted),
      raw: Array.from(text).length,
      links: at > 0
    };
  }

  // "1 character", "2 characters".
  function characters(n) {
    return n + (n === 1 ? " character" : " characters");
  }

  // Live character counter on the compose box.
  function bindCounter(textarea) {
    var max = parseInt(textarea.getAttribute("data-max") || "280", 10);
    var out = document.getElementById(textarea.getAttribute("data-counter"));
    if (!out) return;
    // The content warning counts with the text (timeline/domain.py's
    // `spoiler_length`: its grapheme clusters, links as written, on one line),
    // while its tick box is ticked: unticked, the server posts none (the form's
    // `cw`), as Mastodon's warning button turned off sends none.
    var spoiler = document.getElementById(textarea.getAttribute("data-spoiler"));
    var tick = spoiler && document.getElementById("id_cw");
    function warning() {
      if (!spoiler || (tick && !tick.checked)) return { length: 0, raw: 0 };
      var text = spoiler.value.replace(BREAKS, " ").replace(CONTROLS, "");
      if (text.normalize) text = text.normalize("NFC");
      text = text.replace(ENDS, "");
      if (SHOWS_NOTHING && SHOWS_NOTHING.test(text)) return { length: 0, raw: 0 };
      return { length: characterCount(text), raw: Array.from(text).length };
    }
    // `data-plain` (a report's comment): plain text, counted as the server counts
    // it (Python's len, a line break once), not as a status (links, graphemes).
    var plain = textarea.hasAttribute("data-plain");
    function update() {
      var counted = plain
        ? { length: Array.from(textarea.value.replace(/\r\n/g, "\n")).length, raw: 0 }
        : statusLength(textarea.value);
      var warned = plain ? { length: 0, raw: 0 } : warning();
      var left = max - counted.length - warned.length;
      var rawLeft = plain ? 0 : RAW_LENGTH_FACTOR * max - counted.raw - warned.raw;
      out.textContent = rawLeft < 0 && left >= 0
        ? characters(-rawLeft) + (counted.links
          ? " too many with the links written out"
          : " too many counting each part of an emoji or accent")
        : left < 0 ? characters(-left) + " too many" : characters(left) + " left";
      out.classList.toggle("over", left < 0 || rawLeft < 0);
    }
    textarea.addEventListener("input", update);
    if (spoiler) spoiler.addEventListener("input", update);
    if (tick) {
      tick.addEventListener("change", function () {
        update();
        if (tick.checked) spoiler.focus();
      });
    }
    update();
  }

  // Relative times ("3 minutes ago") that stay fresh.
  var units = [["year", 31536000], ["month", 2592000], ["week", 604800],
               ["day", 86400], ["hour", 3600], ["minute", 60]];
  function relative(date) {
    var seconds = Math.round((Date.now() - date.getTime()) / 1000);
    if (seconds < 45) return "just now";
    for (var i = 0; i < units.length; i++) {
      var n = Math.floor(seconds / units[i][1]);
      if (n >= 1) return n + " " + units[i][0] + (n > 1 ? "s" : "") + " ago";
    }
    return "just now";
  }
  function refreshTimes(root) {
    (root || document).querySelectorAll("time[data-relative]").forEach(function (el) {
      var date = new Date(el.getAttribute("datetime"));
      if (!isNaN(date)) el.textContent = relative(date);
    });
  }

  // "Older" loads the next page in place; without JS it is an ordinary link. The
  // pager names the list it extends (`data-list`, its id): only that list's items
  // of the fetched page join it (a thread page's status and ancestors stay put),
  // and no row the list holds already (same data-status-id): a second guard, the
  // server's pages being meant not to overlap.
  function bindOlder(link) {
    link.addEventListener("click", function (event) {
      var id = link.getAttribute("data-list");
      var list = id && document.getElementById(id);
      if (!list || !window.fetch || !window.DOMParser) return;
      event.preventDefault();
      link.setAttribute("aria-busy", "true");
      link.textContent = "Loading…";
      fetch(link.href, { credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) throw new Error(response.status);
          return response.text();
        })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var shown = {};
          list.querySelectorAll(":scope > li[data-status-id]").forEach(function (item) {
            shown[item.getAttribute("data-status-id")] = true;
          });
          var from = doc.getElementById(id);
          var items = from ? from.querySelectorAll(":scope > li") : [];
          var first = null;
          items.forEach(function (item) {
            var sid = item.getAttribute("data-status-id");
            if (sid && shown[sid]) return;
            if (sid) shown[sid] = true;
            var node = document.importNode(item, true);
            list.appendChild(node);
            if (!first) first = node;
          });
          refreshTimes(list);
          var pager = link.closest(".pager");
          var next = doc.querySelector('.pager a[rel=next][data-list="' + id + '"]');
          if (next) {
            link.href = next.getAttribute("href");
            link.textContent = "Older";
            link.removeAttribute("aria-busy");
          } else if (pager) {
            pager.remove();
          }
          if (first) {
            first.setAttribute("tabindex", "-1");
            first.focus();
          }
        })
        .catch(function () {
          window.location.href = link.href; // fall back to the plain link
        });
    });
  }

  // The notifications page, once shown, marks what it showed as read (a POST with
  // the page's CSRF token; without JS, its "Mark all as read" button does); the
  // messages page likewise, its own badge (`data-badge`) going.
  function markRead(section) {
    var form = section.querySelector("form.notifications-read");
    if (!form || !window.fetch) return;
    fetch(section.getAttribute("data-notifications-read"), {
      method: "POST",
      credentials: "same-origin",
      redirect: "manual",
      body: new FormData(form)
    }).then(function (response) {
      if (response.type !== "opaqueredirect" && !response.ok) return;
      var badge = section.getAttribute("data-badge") || "[data-notifications-badge]";
      document.querySelectorAll(badge).forEach(function (el) {
        el.remove();
      });
    }).catch(function () {}); // still unread: the next visit tries again
  }

  // Search people as you type (the page's own results until then); built with
  // textContent, never HTML, so nothing a name holds runs here.
  function bindPeopleSearch(input) {
    var timer = null;
    var seq = 0;
    function el(tag, cls, text) {
      var node = document.createElement(tag);
      if (cls) node.className = cls;
      if (text) node.textContent = text;
      return node;
    }
    function show(people) {
      var list = document.querySelector("ul.people");
      if (!list) {
        list = el("ul", "people card");
        list.setAttribute("aria-label", "People found");
        input.form.after(list);
      }
      var empty = document.querySelector("p.empty");
      if (empty) empty.remove();
      list.replaceChildren.apply(list, people.map(function (p) {
        var li = el("li", "person");
        var a = el("a", "person-link");
        a.href = p.url;
        var img = el("img", "avatar");
        img.src = p.avatar;
        img.alt = "";
        img.width = img.height = 40;
        a.append(img, " ", el("span", "display-name", p.name), " ",
                 el("span", "handle", "@" + p.username));
        li.append(a);
        return li;
      }));
    }
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        var mine = ++seq;
        var url = input.getAttribute("data-people-search") + "?q=" +
          encodeURIComponent(input.value);
        fetch(url, { credentials: "same-origin" })
          .then(function (r) { return r.json(); })
          .then(function (data) { if (mine === seq) show(data.people); })
          .catch(function () {});
      }, 200);
    });
  }

  // "Schedule for later": the time typed is the writer's own. Their distance from
  // UTC at that date (summer time included) goes with it; the label says so.
  function bindSchedule(input) {
    var tz = document.getElementById(input.getAttribute("data-schedule-tz"));
    if (!tz || !input.form) return;
    var label = input.form.querySelector("[data-timezone-label]");
    if (label) label.textContent = "(your time)";
    input.form.addEventListener("submit", function () {
      var when = input.value ? new Date(input.value) : null;
      tz.value = when && !isNaN(when) ? String(when.getTimezoneOffset()) : "";
    });
  }

  // A time shown as the reader's own (a scheduled status's), from its UTC stamp.
  function localTimes() {
    document.querySelectorAll("time[data-local]").forEach(function (t) {
      var when = new Date(t.getAttribute("datetime"));
      if (!isNaN(when)) {
        t.textContent = when.toLocaleString(undefined, {
          weekday: "short", day: "numeric", month: "short", year: "numeric",
          hour: "2-digit", minute: "2-digit"
        });
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("input[data-schedule-tz]").forEach(bindSchedule);
    localTimes();
    document.querySelectorAll("[data-notifications-read]").forEach(markRead);
    document.querySelectorAll("input[data-people-search]").forEach(bindPeopleSearch);
    document.querySelectorAll("textarea[data-counter]").forEach(bindCounter);
    document.querySelectorAll(".pager a[rel=next][data-list]").forEach(bindOlder);
    refreshTimes();
    setInterval(refreshTimes, 30000);
  });
})();
