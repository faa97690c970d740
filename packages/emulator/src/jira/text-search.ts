/**
 * Jira's text search (`summary ~ "..."`, `description ~`, `text ~`) as its public page "Search syntax for text
 * fields" describes it: not a substring test but an index search. Text is cut into words at every character that is
 * not a letter, a digit or `_` (so the reserved characters `+ - & | ! ( ) { } [ ] ^ ~ * ? \ : "` and spaces all
 * split words and are never matched), words compare case-insensitively after English stemming and without stop
 * words, and every word of the query must occur in the field, in any order. So `summary ~ "cb-1a2b"` matches any
 * summary holding the words `cb` and `1a2b`, `1a2b cb` included: a client must check its hits exactly.
 *
 * The stemmer is a small suffix stripper (plural `s`/`es`/`ies`, `ed`, `ing`), not Lucene's Porter stemmer: enough
 * to make `failed`, `fails` and `failing` one word, as they are in Jira, and applied alike to text and query.
 */

/** Lucene's English stop words, which Jira's index leaves out. */
const STOP_WORDS = new Set(
  'a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with'.split(
    ' ',
  ),
);

/** `running` → `run`, `passes` → `pass`, `failed` → `fail`, `queries` → `query`; digits and mixed words as they are. */
export function stem(word: string): string {
  if (!/^[a-z]+$/.test(word) || word.length <= 3) return word;
  let w = word;
  if (w.endsWith('ies') && w.length > 4) return `${w.slice(0, -3)}y`;
  if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2);
  else if (/(ss|x|z|ch|sh)es$/.test(w)) return w.slice(0, -2);
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) return w.slice(0, -1);
  else return w;
  // `runn` → `run`, `stopp` → `stop`; but `pass`, `fall`, `buzz` keep their double letter.
  if (/([b-df-hj-km-prtv-y])\1$/.test(w)) w = w.slice(0, -1);
  return w;
}

/** The index terms of a text: lower-cased words, stemmed, stop words left out. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().split(/[^\p{L}\p{N}_]+/u)) {
    if (raw === '' || STOP_WORDS.has(raw)) continue;
    out.push(stem(raw));
  }
  return out;
}

/** The terms of texts searched lately: a query of 50 `~` clauses tests each summary 50 times, and summaries repeat. */
const TERM_SETS = new Map<string, ReadonlySet<string>>();
const TERM_SETS_MAX = 50_000;
/** Longer texts (descriptions, a 5 MB one in the bad-input tests) are cut into terms each time, not kept. */
const TERM_TEXT_MAX = 4_096;

function termSet(text: string): ReadonlySet<string> {
  if (text.length > TERM_TEXT_MAX) return new Set(terms(text));
  let set = TERM_SETS.get(text);
  if (!set) {
    if (TERM_SETS.size >= TERM_SETS_MAX) TERM_SETS.clear();
    set = new Set(terms(text));
    TERM_SETS.set(text, set);
  }
  return set;
}

/** A matcher for one `~` query: true when every term of the query is a term of the text. */
export function textMatcher(query: string, mode: 'tokenised' | 'substring'): (text: string) => boolean {
  if (mode === 'substring') {
    const needle = query.toLowerCase();
    return (text) => text.toLowerCase().includes(needle);
  }
  const wanted = [...new Set(terms(query))];
  // A query of stop words and reserved characters only has nothing to look for: Jira finds nothing.
  if (wanted.length === 0) return () => false;
  return (text) => {
    const have = termSet(text);
    return wanted.every((t) => have.has(t));
  };
}
