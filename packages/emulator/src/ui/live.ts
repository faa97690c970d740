import type { ServerResponse } from 'node:http';
import { SECURITY_HEADERS } from './layout.js';

/**
 * The only script of the UI, served at `/ui/live.js` (the pages' security policy runs no inline script). On a page
 * with a `data-live-fragment` element it listens to the `data-live-events` stream and fetches the fragment again
 * on every `runs` event; without EventSource it polls every 3 s. Pages work without it: it only saves a reload.
 *
 * Focus survives a refresh when the focused element has an id (or is a link whose target is still there), and the
 * `#live-status` region says when the list changed, politely, for screen readers.
 */
export const LIVE_JS = `(function () {
  'use strict';
  var root = document.querySelector('[data-live-fragment]');
  if (!root) return;
  var fragmentUrl = root.getAttribute('data-live-fragment');
  var eventsUrl = root.getAttribute('data-live-events');
  var status = document.getElementById('live-status');
  var last = null, busy = false, again = false;

  function focusKey(el) {
    if (!el || !root.contains(el)) return null;
    if (el.id) return { id: el.id };
    if (el.getAttribute && el.getAttribute('href')) return { href: el.getAttribute('href') };
    return null;
  }
  function restore(key) {
    if (!key) return;
    var el = key.id ? document.getElementById(key.id) : null;
    if (!el && key.href) {
      var links = root.querySelectorAll('a[href]');
      for (var i = 0; i < links.length; i++) if (links[i].getAttribute('href') === key.href) { el = links[i]; break; }
    }
    if (el) el.focus();
  }
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(fragmentUrl, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (res) {
        if (res.status === 404 && status) status.textContent = 'This cycle no longer exists (was the emulator reset?).';
        return res.ok ? res.text() : null;
      })
      .then(function (text) {
        if (text === null || text === last) return;
        var key = focusKey(document.activeElement);
        var open = [];
        root.querySelectorAll('details[open]').forEach(function (d, i) { var a = d.closest('article'); open.push(a ? a.id : i); });
        root.innerHTML = text;
        last = text;
        root.querySelectorAll('details').forEach(function (d) { var a = d.closest('article'); if (a && open.indexOf(a.id) >= 0) d.open = true; });
        restore(key);
        if (status) status.textContent = 'Runs updated at ' + new Date().toLocaleTimeString() + '.';
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }
  if (typeof window.EventSource === 'function') {
    var source = new EventSource(eventsUrl);
    var opened = false;
    source.addEventListener('runs', refresh);
    // After a dropped stream reconnects, changes made meanwhile were not announced: fetch once.
    source.addEventListener('open', function () { if (opened) refresh(); opened = true; });
  } else {
    setInterval(refresh, 3000);
  }
})();
`;

export function sendLiveJs(res: ServerResponse, method: string): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': 'text/javascript; charset=utf-8',
    'content-length': String(Buffer.byteLength(LIVE_JS)),
  });
  res.end(method === 'HEAD' ? undefined : LIVE_JS);
}
