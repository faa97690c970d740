import type { ServerResponse } from 'node:http';
import type { User } from '../store/store.js';
import { html, type SafeHtml, trusted } from './html.js';
import { displayName } from './model.js';

/**
 * The shared page layout: a skip link, a header with the main navigation and who is viewing, the page's own
 * `<main>`, and inline CSS (no files to fetch, no build step). Pages are readable at 400 px: everything wraps, and
 * only wide tables scroll, inside their own focusable container.
 */

/** Who is looking at a page and under which access rules. */
export interface Viewer {
  /** Undefined only on pages that need no login (the login page itself). */
  user: User | undefined;
  /** The emulator listens on the loopback: pages are open and `user` is the loopback viewer's session. */
  loopback: boolean;
}

export interface PageOptions {
  title: string;
  viewer: Viewer;
  main: SafeHtml;
  /** Path of the navigation entry to mark as current. */
  section?: '/' | '/rehearsal/requests' | '/rehearsal/faults' | '/rehearsal/jira' | '/rehearsal/reset';
  /** Breadcrumbs before the page's heading (the last one is the page itself and is not linked). */
  crumbs?: { label: string; href?: string }[];
  /** Load the live-update script. */
  live?: boolean;
}

const CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#172b4d;background:#f4f5f7;overflow-wrap:anywhere}
a{color:#0052cc}
a:hover{color:#0747a6}
:focus-visible{outline:3px solid #2684ff;outline-offset:2px}
.skip{position:absolute;left:.5rem;top:-4rem;background:#fff;padding:.5rem 1rem;z-index:10;border:2px solid #0052cc}
.skip:focus{top:.5rem}
.top{background:#0747a6;color:#fff;padding:.5rem 1rem;display:flex;flex-wrap:wrap;gap:.25rem 1.5rem;align-items:center}
.top a{color:#fff}
.brand{font-weight:600}
.brand small{font-weight:400;opacity:.9}
.top nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
.top nav a[aria-current]{font-weight:700;text-decoration-thickness:3px}
.who{margin-left:auto;display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.who form{margin:0}
.who button{background:transparent;color:#fff;border:1px solid #fff;border-radius:3px;padding:.1rem .6rem;font:inherit;cursor:pointer}
main{max-width:75rem;margin:0 auto;padding:1rem}
main:focus{outline:none}
h1{font-size:1.6rem;margin:.25rem 0 1rem;line-height:1.25}
h2{font-size:1.3rem;margin:1.75rem 0 .5rem}
h3{font-size:1.1rem;margin:0}
h4{font-size:1rem;margin:1rem 0 .25rem}
.crumbs ol{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem;font-size:.9rem}
.crumbs li+li::before{content:"/";margin-right:.25rem;color:#5e6c84}
.muted{color:#5e6c84}
.panel{background:#fff;border:1px solid #dfe1e6;border-radius:4px;padding:1rem;margin:.75rem 0}
.panel>h2:first-child{margin-top:0}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(9rem,1fr));gap:.5rem 1rem;margin:.5rem 0}
.facts div{min-width:0}
.facts dt{font-size:.8rem;color:#5e6c84;text-transform:uppercase;letter-spacing:.02em}
.facts dd{margin:0}
.text{white-space:pre-wrap;margin:.25rem 0}
.table-wrap{overflow-x:auto;max-width:100%;border:1px solid #dfe1e6;border-radius:4px;background:#fff;margin:.5rem 0}
table{border-collapse:collapse;width:100%;font-size:.95rem;overflow-wrap:break-word}
th,td{text-align:left;vertical-align:top;padding:.4rem .6rem;border-bottom:1px solid #dfe1e6}
thead th{background:#f4f5f7;font-size:.85rem;white-space:nowrap}
tbody th{font-weight:600}
.wide{min-width:44rem}
.status{display:inline-block;border-radius:3px;padding:0 .45rem;font-size:.8rem;font-weight:700;text-transform:uppercase;letter-spacing:.02em;white-space:nowrap;border:1px solid rgba(0,0,0,.25)}
.progress{display:flex;flex-direction:column;gap:.25rem;min-width:10rem}
.bar{display:flex;height:.8rem;border-radius:3px;overflow:hidden;background:#dfe1e6;border:1px solid #c1c7d0}
.bar span{display:block;height:100%}
.counts{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.1rem .75rem;font-size:.85rem}
.swatch{display:inline-block;width:.7rem;height:.7rem;border-radius:2px;margin-right:.25rem;vertical-align:-.05rem;border:1px solid rgba(0,0,0,.3)}
.filter ul{list-style:none;margin:.5rem 0;padding:0;display:flex;flex-wrap:wrap;gap:.4rem}
.filter a{display:inline-block;padding:.15rem .6rem;border:1px solid #c1c7d0;border-radius:1rem;background:#fff;text-decoration:none}
.filter a[aria-current]{background:#0052cc;color:#fff;border-color:#0052cc}
.runs{list-style:none;margin:0;padding:0}
.run{background:#fff;border:1px solid #dfe1e6;border-left:6px solid var(--status,#999);border-radius:4px;padding:.75rem 1rem;margin:.75rem 0;scroll-margin-top:1rem}
.run:target{box-shadow:0 0 0 3px #2684ff}
.run-head{display:flex;flex-wrap:wrap;gap:.5rem;align-items:baseline;justify-content:space-between}
.attachments{list-style:none;margin:.25rem 0;padding:0;display:flex;flex-wrap:wrap;gap:1rem}
.attachments figure{margin:0;max-width:100%}
.attachments img{display:block;max-width:100%;max-height:22rem;height:auto;border:1px solid #c1c7d0;background:#fff}
.attachments figcaption{font-size:.85rem}
details summary{cursor:pointer}
.history{margin:.25rem 0;padding-left:1.25rem;font-size:.9rem}
.notice{border-left:4px solid #0052cc;background:#deebff;padding:.5rem .75rem;margin:.75rem 0}
.error{border-left:4px solid #bf2600;background:#ffebe6;padding:.5rem .75rem;margin:.75rem 0}
form.stack{display:grid;gap:.75rem;max-width:40rem}
.field{display:flex;flex-direction:column;gap:.2rem}
.field input,.field select,.field textarea{font:inherit;padding:.35rem .5rem;border:1px solid #7a869a;border-radius:3px;max-width:100%;background:#fff;color:inherit}
.row{display:flex;flex-wrap:wrap;gap:.75rem}
.row .field{flex:1 1 9rem}
fieldset{border:1px solid #c1c7d0;border-radius:4px;padding:.5rem .75rem}
legend{font-weight:600;padding:0 .25rem}
button.primary,button.danger,button.plain{font:inherit;padding:.4rem 1rem;border-radius:3px;cursor:pointer;border:1px solid transparent}
button.primary{background:#0052cc;color:#fff}
button.danger{background:#bf2600;color:#fff}
button.plain{background:#fff;color:#172b4d;border-color:#7a869a}
.inline{display:inline}
.visually-hidden{position:absolute!important;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
.tree{margin:.25rem 0;padding-left:1.25rem}
footer{max-width:75rem;margin:2rem auto 1rem;padding:0 1rem;font-size:.85rem;color:#5e6c84}
@media (max-width:40rem){h1{font-size:1.35rem}main{padding:.75rem}.who{margin-left:0}}
`;

function who(viewer: Viewer): SafeHtml {
  const { user, loopback } = viewer;
  if (!user) return html`<a href="/login.jsp">Log in</a>`;
  const name = displayName(user);
  if (loopback) {
    return html`<span>Viewing as ${name}</span> <a href="/login.jsp">Switch user</a>`;
  }
  return html`<span>Logged in as ${name}</span>
    <form method="post" action="/logout"><button type="submit">Log out</button></form>`;
}

function nav(viewer: Viewer, section: PageOptions['section']): SafeHtml {
  const admin = viewer.loopback || viewer.user?.admin === true;
  const items: [string, string][] = [['/', 'Projects']];
  if (admin) {
    items.push(
      ['/rehearsal/requests', 'Requests'],
      ['/rehearsal/faults', 'Faults'],
      ['/rehearsal/jira', 'Jira'],
      ['/rehearsal/reset', 'Reset'],
    );
  }
  items.push(['/swagger', 'API browser']);
  return html`<nav aria-label="Main"><ul>
    ${items.map(
      ([path, label]) =>
        html`<li><a href="${path}"${path === section ? trusted(' aria-current="page"') : ''}>${label}</a></li>`,
    )}
  </ul></nav>`;
}

function crumbs(list: PageOptions['crumbs']): SafeHtml {
  if (!list?.length) return html``;
  return html`<nav class="crumbs" aria-label="Breadcrumbs"><ol>
    ${list.map((c, i) =>
      c.href && i < list.length - 1
        ? html`<li><a href="${c.href}">${c.label}</a></li>`
        : html`<li><span aria-current="page">${c.label}</span></li>`,
    )}
  </ol></nav>`;
}

/** A whole page. */
export function page(o: PageOptions): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} - casebridge emulator</title>
<style>${trusted(CSS)}</style>
${o.live ? html`<script src="/ui/live.js" defer></script>` : ''}
</head>
<body>
<a class="skip" href="#main">Skip to main content</a>
<header class="top">
  <div class="brand"><a href="/">casebridge emulator</a> <small>synapseRT test management</small></div>
  ${nav(o.viewer, o.section)}
  <div class="who">${who(o.viewer)}</div>
</header>
<main id="main" tabindex="-1">
${crumbs(o.crumbs)}
${o.main}
</main>
<footer>A local stand-in for Jira with synapseRT, for rehearsals and demos. Data lives in this emulator only.</footer>
</body>
</html>
`;
}

/**
 * Headers of every UI answer: no caching (pages show live state), and a content security policy that runs only the
 * emulator's own script file, so even markup that slipped through escaping could not execute.
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

/** Sends a page or fragment (HEAD: headers only). */
export function sendHtml(
  res: ServerResponse,
  method: string,
  status: number,
  body: SafeHtml,
  headers: Record<string, string | string[]> = {},
): void {
  const text = body.text;
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(method === 'HEAD' ? undefined : text);
}

/** A redirect after a form post or to the login page (303: the browser follows with GET). */
export function redirect(res: ServerResponse, location: string, headers: Record<string, string | string[]> = {}): void {
  res.writeHead(303, { ...SECURITY_HEADERS, location, 'content-length': '0', ...headers });
  res.end();
}

/** A plain-text answer (fragments and events refused to a caller without a session). */
export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': 'text/plain; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

/** A page with one message (404, 403, a done notice). */
export function messagePage(viewer: Viewer, title: string, message: SafeHtml): SafeHtml {
  return page({ title, viewer, main: html`<h1>${title}</h1>${message}` });
}
