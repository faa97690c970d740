/**
 * Secrets known to this process (passwords, tokens, tickets, session ids, Basic credentials) and the one function
 * that removes them from any text before it leaves the client: error messages, body excerpts, log lines.
 *
 * The registry is process-wide on purpose: a reporter logs through many modules, and a secret that one client
 * registered must not appear in a line another module writes.
 */

const secrets = new Set<string>();
/** The replacement; short and obviously not a value. */
export const REDACTED = '***';

/**
 * Registers a secret. Values shorter than 4 characters are registered too (a 3-letter password is still a
 * password), but empty strings are ignored. The Basic-auth encoding of `user:secret` is registered by the auth code.
 */
export function registerSecret(value: string | undefined | null): void {
  if (!value) return;
  secrets.add(value);
  // The same value percent-encoded, as it may appear in a URL (proxy credentials, query strings).
  const encoded = encodeURIComponent(value);
  if (encoded !== value) secrets.add(encoded);
}

/** Replaces every registered secret, every `Authorization` value and URL credentials in `text`. */
export function redact(text: string): string {
  if (!text) return text;
  let out = text;
  // Longest first, so a secret that contains another is replaced whole.
  const ordered = [...secrets].sort((a, b) => b.length - a.length);
  for (const s of ordered) {
    if (out.includes(s)) out = out.split(s).join(REDACTED);
  }
  return (
    out
      .replace(
        /\b(authorization|proxy-authorization|cookie|set-cookie)(["']?\s*[:=]\s*["']?)[^\r\n"',}]+/gi,
        `$1$2${REDACTED}`,
      )
      .replace(/\b(Basic|Bearer|EDU-TICKET)\s+[A-Za-z0-9+/=._~-]{6,}/g, `$1 ${REDACTED}`)
      .replace(/(JSESSIONID=)[^;\s"',]+/g, `$1${REDACTED}`)
      // Login answers carry a credential before the client has registered it (a body excerpt of an answer that
      // could not be parsed): Jira's `{"session": {"name": "JSESSIONID", "value": ...}}`, a repository `"ticket"`.
      .replace(/("session"\s*:\s*\{[^}]*?"value"\s*:\s*")[^"]*/g, `$1${REDACTED}`)
      .replace(/("ticket"\s*:\s*")[^"]*/g, `$1${REDACTED}`)
      .replace(/(\/\/)[^/@\s:]+:[^/@\s]+@/g, `$1${REDACTED}@`)
  );
}

/** A URL with its credentials and query removed, for messages. */
export function safeUrl(url: string | URL): string {
  try {
    const u = new URL(String(url));
    u.username = '';
    u.password = '';
    return redact(u.toString());
  } catch {
    return redact(String(url));
  }
}
