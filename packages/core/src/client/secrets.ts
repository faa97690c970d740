/**
 * Secrets known to this process and `redact`. Process-wide on purpose: a secret one client registered must not
 * appear in a line another module writes.
 */

const secrets = new Set<string>();
export const REDACTED = '***';

/** Shorter secrets are replaced only as whole tokens: `admin` inside "administrator" hides nothing and garbles text. */
export const WHOLE_TOKEN_BELOW = 8;

/** A character that continues a word: a letter, a digit or `_` (any script). */
const WORD_START = /^[\p{L}\p{N}_]/u;
const WORD_END = /[\p{L}\p{N}_]$/u;

/** `text` with `secret` replaced where no word character continues it (a punctuation side needs no delimiter). */
function replaceWholeTokens(text: string, secret: string): string {
  const guardStart = WORD_START.test(secret);
  const guardEnd = WORD_END.test(secret);
  let out = '';
  let from = 0;
  let at = text.indexOf(secret);
  while (at !== -1) {
    const end = at + secret.length;
    // Two code units each side, so that a letter outside the BMP is seen whole.
    const whole =
      (!guardStart || !WORD_END.test(text.slice(Math.max(0, at - 2), at))) &&
      (!guardEnd || !WORD_START.test(text.slice(end, end + 2)));
    if (whole) {
      out += text.slice(from, at) + REDACTED;
      from = end;
      at = text.indexOf(secret, end);
    } else {
      at = text.indexOf(secret, at + 1);
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Registers a secret (short ones too, replaced as whole tokens); empty strings are ignored. */
export function registerSecret(value: string | undefined | null): void {
  if (!value) return;
  secrets.add(value);
  // Percent-encoded too, as in a URL (proxy credentials, query strings).
  const encoded = encodeURIComponent(value);
  if (encoded !== value) secrets.add(encoded);
  ordered = undefined;
  inJson = undefined;
}

/** Forgets every registered secret (for processes that run many configurations in turn, such as the test suite). */
export function forgetSecrets(): void {
  secrets.clear();
  ordered = undefined;
  inJson = undefined;
}

/** The secrets longest first (so a secret that contains another is replaced whole); sorted again after a change. */
let ordered: string[] | undefined;
/** The secrets as they are and as JSON escapes them, built once per change: the write-ahead log asks per result. */
let inJson: string[] | undefined;

/** Fast path: most redacted strings (titles, paths, statuses) match none of the patterns below. */
const MAY_HOLD_CREDENTIALS =
  /authorization|cookie|basic|bearer|edu-ticket|sessionid|routeid|awsalb|awselb|bigipserver|seraph|xsrf|"session"|"ticket"|\/\/[^/@\s:]+:[^/@\s]+@/i;

/**
 * The cookies a Jira Data Center login sets, wherever they stand: a short route value is not registered as a secret.
 */
const SESSION_COOKIE =
  /\b(\w*SESSIONID\w*|ROUTEID|AWSALB\w*|AWSELB|BIGipServer[\w.-]*|seraph\.rememberme\.cookie|atlassian\.xsrf\.token)=[^;\s"',]+/gi;

/** Replaces every registered secret, every `Authorization` value and URL credentials in `text`. */
export function redact(text: string): string {
  if (!text) return text;
  let out = text;
  ordered ??= [...secrets].sort((a, b) => b.length - a.length);
  for (const s of ordered) {
    if (!out.includes(s)) continue;
    out = [...s].length < WHOLE_TOKEN_BELOW ? replaceWholeTokens(out, s) : out.split(s).join(REDACTED);
  }
  if (!MAY_HOLD_CREDENTIALS.test(out)) return out;
  return (
    out
      .replace(
        /\b(authorization|proxy-authorization|cookie|set-cookie)(["']?\s*[:=]\s*["']?)[^\r\n"',}]+/gi,
        `$1$2${REDACTED}`,
      )
      .replace(/\b(Basic|Bearer|EDU-TICKET)\s+[A-Za-z0-9+/=._~-]{6,}/g, `$1 ${REDACTED}`)
      .replace(SESSION_COOKIE, `$1=${REDACTED}`)
      // Login answers carry a credential before it is registered (in an excerpt of an answer that failed to parse).
      .replace(/("session"\s*:\s*\{[^}]*?"value"\s*:\s*")[^"]*/g, `$1${REDACTED}`)
      .replace(/("ticket"\s*:\s*")[^"]*/g, `$1${REDACTED}`)
      .replace(/(\/\/)[^/@\s:]+:[^/@\s]+@/g, `$1${REDACTED}@`)
  );
}

/** Anything `redact` could change, searched in a JSON text: words only, since JSON escapes quotes. */
const MAY_HOLD_CREDENTIALS_JSON =
  /authorization|cookie|basic|bearer|edu-ticket|session|routeid|awsalb|awselb|bigipserver|seraph|xsrf|ticket|\/\/[^/@\s:]+:[^/@\s]+@/i;

/** Whether `redact` could change a string in `json`; if not, the write-ahead log writes it without copying. */
export function mayNeedRedaction(json: string): boolean {
  inJson ??= [...new Set([...secrets].flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))];
  for (const secret of inJson) if (json.includes(secret)) return true;
  return MAY_HOLD_CREDENTIALS_JSON.test(json);
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

/** An error's message with the secrets removed, for messages and logs. */
export function redactedMessage(err: unknown): string {
  return redact(err instanceof Error ? err.message : String(err));
}
