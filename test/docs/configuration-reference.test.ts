import { readFileSync } from 'node:fs';
import {
  BEGIN_MARKER,
  CONFIGURATION_PAGE,
  END_MARKER,
  documentedOptions,
  renderOptionsReference,
  validatedKeys,
  withGeneratedReference,
} from '../../docs/configuration-reference';

/**
 * docs/configuration.md's option table is generated from the option classes
 * (their TSDoc, their class-validator rules, resolveOptions' defaults). An
 * option added without a line, or a rule or default changed without
 * regenerating the page, fails here: run `npm run docs:config` and commit.
 */
describe('docs/configuration.md', () => {
  const page = readFileSync(CONFIGURATION_PAGE, 'utf8');

  it('holds the table the option rules generate (after a change: npm run docs:config)', () => {
    expect(withGeneratedReference(page)).toBe(page);
  });

  it('has a line for every option the start-up check knows, and none it does not', () => {
    const generated = page.slice(page.indexOf(BEGIN_MARKER), page.indexOf(END_MARKER));
    const rows = new Set([...generated.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1]));
    const missing = validatedKeys().filter((key) => !rows.has(key));
    expect(missing).toEqual([]);
    expect([...rows].filter((row) => !validatedKeys().includes(row))).toEqual([]);
  });

  it('describes every option in its TSDoc', () => {
    expect(
      documentedOptions()
        .filter((option) => option.description === '')
        .map((option) => option.path),
    ).toEqual([]);
  });

  it('quotes real start-up errors: the table names each rule the validator applies', () => {
    const table = renderOptionsReference();
    expect(table).toContain('| `server.concurrency` | `number` | `10` | must be an integer from 1 to 10000 |');
    expect(table).toContain('must be longer than heartbeat.interval');
    expect(table).toContain('| `server.capsules[].name` |');
  });
});
