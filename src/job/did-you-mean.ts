/**
 * The known name a misspelt one most likely meant, for start-up errors
 * (`retires` → `retry`, `trak` → `track`). `aliases` maps names other
 * libraries use for the same thing (BullMQ's `connection` is wurk's `redis`),
 * which no spelling distance would find.
 */
export function didYouMean(
  name: string,
  known: Iterable<string>,
  aliases: Readonly<Record<string, string>> = {},
): string | undefined {
  if (Object.prototype.hasOwnProperty.call(aliases, name)) return aliases[name];
  const lower = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // Half the name may be wrong, no more: past that the suggestion is noise. (Nothing known leaves the distance
  // infinite.)
  return bestDistance <= Math.max(1, Math.ceil(name.length / 2)) ? best : undefined;
}

/** " (did you mean X?)" or nothing, to append to a reason. */
export function didYouMeanText(
  name: string,
  known: Iterable<string>,
  aliases?: Readonly<Record<string, string>>,
): string {
  const suggestion = didYouMean(name, known, aliases);
  return suggestion === undefined ? '' : `; did you mean ${suggestion}?`;
}

/** Levenshtein distance with adjacent transpositions counted as one edit (`trakc` → `track`). */
function editDistance(a: string, b: string): number {
  // Stryker disable next-line ArrayDeclaration: the zeros are placeholders, each cell is written before it is read.
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      // In the first row or column the character before the first reads undefined, which matches none: no bounds test
      // needed.
      if (a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
