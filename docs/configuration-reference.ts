/**
 * `npm run docs:config`: rewrites the generated part of
 * `docs/configuration.md`, one row per option of `WurkModule.forRoot`: each
 * group (`server`, `heartbeat`, ...) followed by its options, and the nested
 * `api` and `server.capsules[]` objects, from the code itself:
 * - the names, types and descriptions from the TSDoc of the option classes
 *   (`src/config/wurk-options.ts` and a file per group, `src/config/*-group.ts`),
 *   read with the TypeScript compiler;
 * - the defaults from `resolveOptions({})`, the function the module calls
 *   (read under the flat names it resolves to, through FLAT_OPTION_PATHS);
 * - the validation from the option rules themselves: each option is given
 *   a few wrong values and the start-up errors they raise are quoted.
 * `test/docs/configuration-reference.test.ts` fails when the committed page
 * and this output disagree, so an option cannot be added without its line.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { getMetadataStorage } from '../src/config/class-validator-parts';
import { resolveApiOptions } from '../src/api/api-options';
import { FLAT_OPTION_PATHS } from '../src/config/flat-options';
import { nestedOptionClasses } from '../src/config/option-rules';
import { CapsuleOptions } from '../src/config/server-group';
import { WurkOptions } from '../src/config/wurk-options';
import { WurkConfigError } from '../src/job/errors';
import { resolveOptions } from '../src/nest/wurk-options';

const ROOT = join(__dirname, '..');
export const CONFIGURATION_PAGE = join(__dirname, 'configuration.md');
export const BEGIN_MARKER = '<!-- BEGIN GENERATED OPTIONS: npm run docs:config -->';
export const END_MARKER = '<!-- END GENERATED OPTIONS -->';

/** One documented option: where it is declared and what its TSDoc says. */
export interface OptionDoc {
  /** The option's path as a user writes it: `server.concurrency`, `api.tokens`, `server.capsules[].name`. */
  path: string;
  /** The declared type, as written in the source. */
  type: string;
  /** The TSDoc comment, on one line; empty when the property has none. */
  description: string;
}

/** Where each group's options are declared (the class or interface with their TSDoc). */
const GROUP_DECLARATIONS: Readonly<Record<string, { file: string; declaration: string }>> = {
  writes: { file: 'src/config/writes-group.ts', declaration: 'WurkWritesOptions' },
  server: { file: 'src/config/server-group.ts', declaration: 'WurkServerOptions' },
  heartbeat: { file: 'src/config/heartbeat-group.ts', declaration: 'WurkHeartbeatOptions' },
  retries: { file: 'src/config/retries-group.ts', declaration: 'WurkRetriesOptions' },
  client: { file: 'src/config/client-group.ts', declaration: 'WurkClientOptions' },
  status: { file: 'src/config/status-group.ts', declaration: 'WurkStatusOptions' },
  history: { file: 'src/config/history-group.ts', declaration: 'WurkHistoryOptions' },
  periodic: { file: 'src/config/periodic-group.ts', declaration: 'WurkPeriodicOptions' },
  encryption: { file: 'src/config/encryption-group.ts', declaration: 'WurkEncryptionOptions' },
  api: { file: 'src/config/api-group.ts', declaration: 'WurkApiOptions' },
};

/** The prefix of the options of one capsule, an element of `server.capsules`. */
const CAPSULE_PREFIX = 'server.capsules[].';

/** The groups of the top level (`server`, `api`, ...): the options whose value is an option object of its own. */
function groupNames(): string[] {
  return [...(nestedOptionClasses.get(WurkOptions) ?? new Map()).keys()];
}

/** Reads the properties of one class or interface with their types and TSDoc. */
function declaredOptions(file: string, declaration: string, prefix: string): OptionDoc[] {
  const path = join(ROOT, file);
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.ES2022, true);
  const found: OptionDoc[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) && node.name?.text === declaration) {
      for (const member of node.members) {
        if (
          !(ts.isPropertyDeclaration(member) || ts.isPropertySignature(member)) ||
          !member.name ||
          !ts.isIdentifier(member.name)
        )
          continue;
        const docs = ts.getJSDocCommentsAndTags(member).filter(ts.isJSDoc);
        const description = docs.map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? '').join(' ');
        found.push({
          path: `${prefix}${member.name.text}`,
          type: member.type ? member.type.getText(source).replace(/\s+/g, ' ') : 'unknown',
          description: description.replace(/\s+/g, ' ').trim(),
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (found.length === 0) throw new Error(`no options found in ${declaration} (${file})`);
  return found;
}

/** Every documented option in declaration order, each group followed by its options (`server`, `server.tag`). */
export function documentedOptions(): OptionDoc[] {
  return declaredOptions('src/config/wurk-options.ts', 'WurkOptions', '').flatMap((option) => {
    const group = GROUP_DECLARATIONS[option.path];
    if (!group) return [option];
    const inner = declaredOptions(group.file, group.declaration, `${option.path}.`);
    const capsules =
      option.path === 'server' ? declaredOptions('src/config/server-group.ts', 'CapsuleOptions', CAPSULE_PREFIX) : [];
    return [option, ...inner, ...capsules];
  });
}

/**
 * Keys the start-up check admits only to refuse them with a pointer to
 * where they went (`api.mount` is now `WurkApiModule.register({ path })`).
 */
export const RETIRED_KEYS: readonly string[] = ['api.mount'];

/** The keys the start-up check knows, from the option classes' class-validator rules (retired keys left out). */
export function validatedKeys(): string[] {
  const keysOf = (type: new () => object, prefix: string) => [
    ...new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(type, '', false, false)
        .map((entry) => `${prefix}${entry.propertyName}`),
    ),
  ];
  const groups = nestedOptionClasses.get(WurkOptions) ?? new Map<string, () => new () => object>();
  return [
    ...keysOf(WurkOptions, ''),
    ...[...groups].flatMap(([group, type]) => keysOf(type(), `${group}.`)),
    ...keysOf(CapsuleOptions, CAPSULE_PREFIX),
  ].filter((key) => !RETIRED_KEYS.includes(key));
}

/** Wrong values of every kind: each rule refuses at least one of them. */
const PROBES: unknown[] = ['text', -1, 0.5, 1000.5, [], {}, 0, 1, ['probe', 'probe']];

/** The options object that puts `value` at `path` (a capsule gets the members it needs to reach the rule). */
function optionsWith(path: string, value: unknown): Record<string, unknown> {
  if (path.startsWith(CAPSULE_PREFIX))
    return { server: { capsules: [{ name: 'probe', queues: ['probe'], [path.slice(CAPSULE_PREFIX.length)]: value }] } };
  const dot = path.indexOf('.');
  if (dot > 0) return { [path.slice(0, dot)]: { [path.slice(dot + 1)]: value } };
  return { [path]: value };
}

/** Deprecation warnings are the table's business elsewhere (CHANGELOG.md); the probes give none worth printing. */
const quiet = { warn: () => undefined };

/** What the start-up check says about wrong values of an option: its own reasons, without the value quoted. */
export function validationOf(path: string): string[] {
  const reasons = new Set<string>();
  for (const probe of PROBES) {
    try {
      resolveOptions(optionsWith(path, probe) as never, quiet);
    } catch (error) {
      if (!(error instanceof WurkConfigError)) throw error;
      // Only what this option's rules say (a probe can trip another option's rule, e.g. server.capsules[0].queues); a
      // group's row says what the group must be, its options have rows of their own.
      const option = error.option.replace(/\[\d+\]/g, '[]');
      const inner = option.startsWith(`${path}[`) || option.startsWith(`${path}.`);
      if (option !== path && (!inner || groupNames().includes(path))) continue;
      reasons.add(
        `${option === path ? '' : `\`${option}\` `}${error.reason.replace(/\s*\(got [^)]*\)$/, '').replace(/; did you mean.*$/, '')}`,
      );
    }
  }
  return [...reasons];
}

/** The default an app gets when the option is left out, as `resolveOptions` fills it in. */
export function defaultOf(path: string): string {
  const saved = process.env.WURK_API_READ_ONLY;
  delete process.env.WURK_API_READ_ONLY;
  try {
    let value: unknown;
    if (path.startsWith('api.')) {
      const resolved = resolveApiOptions({}) as unknown as Record<string, unknown>;
      value = resolved[path.slice(4)];
    } else if (path.startsWith(CAPSULE_PREFIX)) {
      return path === `${CAPSULE_PREFIX}concurrency` ? '`server.concurrency`' : 'required';
    } else if (groupNames().includes(path)) {
      return 'unset';
    } else {
      const flat = Object.entries(FLAT_OPTION_PATHS).find(([, [group, key]]) => `${group}.${key}` === path)?.[0];
      value = (resolveOptions({}, quiet) as unknown as Record<string, unknown>)[flat ?? path];
    }
    return shownDefault(value);
  } finally {
    if (saved !== undefined) process.env.WURK_API_READ_ONLY = saved;
  }
}

function shownDefault(value: unknown): string {
  if (value === undefined) return 'unset';
  if (typeof value === 'function') return 'built in (see description)';
  if (typeof value === 'number' && !Number.isFinite(value)) return `\`${value}\``;
  return `\`${JSON.stringify(value)}\``;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The generated Markdown: one table row per option, in declaration order. */
export function renderOptionsReference(): string {
  const rows = documentedOptions().map((option) => {
    const validation = validationOf(option.path);
    return `| \`${option.path}\` | \`${cell(option.type)}\` | ${cell(defaultOf(option.path))} | ${cell(validation.length ? validation.join('; ') : 'checked by its own rules (see description)')} | ${cell(option.description)} |`;
  });
  return [
    BEGIN_MARKER,
    '',
    '| option | type | default | validation (the start-up error says) | description |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    END_MARKER,
  ].join('\n');
}

/** The page with its generated part replaced. */
export function withGeneratedReference(page: string): string {
  const begin = page.indexOf(BEGIN_MARKER);
  const end = page.indexOf(END_MARKER);
  if (begin < 0 || end < begin)
    throw new Error(`${CONFIGURATION_PAGE} has no ${BEGIN_MARKER} ... ${END_MARKER} section`);
  return page.slice(0, begin) + renderOptionsReference() + page.slice(end + END_MARKER.length);
}

if (require.main === module) {
  writeFileSync(CONFIGURATION_PAGE, withGeneratedReference(readFileSync(CONFIGURATION_PAGE, 'utf8')));
  console.log(`wrote ${CONFIGURATION_PAGE}`);
}
