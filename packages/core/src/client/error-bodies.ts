import { excerpt } from './errors.js';
import { redact } from './secrets.js';

/** Reading error answers: the service's own message whatever the body's shape, and Jira's CAPTCHA header. */

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Text of an HTML fragment: tags dropped, common entities decoded, whitespace folded. */
function htmlText(html: string): string {
  return html
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#\d+|[a-z]+);/gi, (m, e: string) =>
      e.startsWith('#') ? String.fromCharCode(Number(e.slice(1))) : (ENTITIES[e.toLowerCase()] ?? m),
    )
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The gist of an HTML error page (a servlet container's or a proxy's): its title or first heading, then a short start.
 */
function htmlMessage(html: string): string {
  const heading =
    htmlText(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ?? '') ||
    htmlText(/<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(html)?.[1] ?? '');
  let text = htmlText(html);
  // The title usually opens the page's text as its first heading too.
  while (heading && text.startsWith(heading)) text = text.slice(heading.length).trim();
  const rest = text.length > 160 ? `${text.slice(0, 160)}…` : text;
  return redact(['HTML page', heading, rest].filter(Boolean).join(': '));
}

/**
 * The service's own message in an error answer: JSON (`message`, Jira's `errorMessages` and `errors`, edu-sharing's
 * `error`), plain text (synapseRT's 500s on several bulk routes), or an HTML page.
 */
export function serverMessage(text: string): string {
  const t = text.trim();
  if (!t) return '';
  try {
    const j = JSON.parse(t) as Record<string, unknown>;
    const parts: string[] = [];
    if (typeof j.message === 'string' && j.message) parts.push(j.message);
    if (Array.isArray(j.errorMessages)) parts.push(...j.errorMessages.filter((m) => typeof m === 'string' && m));
    if (j.errors && typeof j.errors === 'object' && !Array.isArray(j.errors)) {
      for (const [k, v] of Object.entries(j.errors as Record<string, unknown>)) parts.push(`${k}: ${String(v)}`);
    }
    if (parts.length) return redact(parts.join('; '));
    if (typeof j.error === 'string') return redact(j.error);
    return excerpt(t) ?? '';
  } catch {
    // Not JSON: a plain-text message, or an HTML page from the servlet container or a proxy.
  }
  if (/^<(!doctype|html|head|body|\?xml)|<\/(html|body|h1|title)>/i.test(t)) return htmlMessage(t);
  return excerpt(t) ?? '';
}

/** Whether a 403 is Jira's CAPTCHA challenge (`X-Authentication-Denied-Reason: CAPTCHA_CHALLENGE; login-url=…`). */
export function captchaChallenge(
  headers: Record<string, string | string[] | undefined>,
): { loginUrl?: string } | undefined {
  const raw = headers['x-authentication-denied-reason'];
  const value = Array.isArray(raw) ? raw.join('; ') : (raw ?? '');
  if (!/\bCAPTCHA_CHALLENGE\b/i.test(value)) return undefined;
  const url = /login-url\s*=\s*([^;\s]+)/i.exec(value)?.[1];
  return url ? { loginUrl: url } : {};
}
