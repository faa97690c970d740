/** Jira issue keys in the order people read them: `DEMO-2` before `DEMO-10`, by project, then by number. */
export function compareKeys(a: string, b: string): number {
  const [pa, na] = splitKey(a);
  const [pb, nb] = splitKey(b);
  return pa === pb ? Number(na) - Number(nb) || a.localeCompare(b) : pa.localeCompare(pb);
}

function splitKey(key: string): [string, string] {
  const at = key.lastIndexOf('-');
  return at < 0 ? [key, ''] : [key.slice(0, at), key.slice(at + 1)];
}
