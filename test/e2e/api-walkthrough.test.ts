import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppModule } from '../../sample/app.module';
import { setUpOpenApi } from '../../sample/http-api';
import { usePrivateRedis } from '../support/private-redis';

const GUIDE = join(__dirname, '..', '..', 'docs', 'http-api.md');
const MARKER = '<!-- walkthrough';
const TOKEN = 'walkthrough-admin-token-000000';

interface Step {
  commands: string[];
  /** The `# …` lines after the commands, joined: what the guide says they print. */
  expected: string;
}

/** The guide's walk-through block, split into steps of commands and the output the guide shows for them. */
function walkthroughSteps(): Step[] {
  const text = readFileSync(GUIDE, 'utf8');
  const start = text.indexOf('```sh', text.indexOf(MARKER));
  const block = text.slice(text.indexOf('\n', start) + 1, text.indexOf('\n```', start));
  const steps: Step[] = [];
  let current: Step = { commands: [], expected: '' };
  for (const line of block.split('\n')) {
    if (line.startsWith('#')) {
      current.expected += line.replace(/^#\s?/, '');
    } else if (line.trim() === '') {
      if (current.commands.length) steps.push(current);
      current = { commands: [], expected: '' };
    } else {
      if (current.expected) {
        steps.push(current);
        current = { commands: [], expected: '' };
      }
      current.commands.push(line);
    }
  }
  if (current.commands.length) steps.push(current);
  return steps;
}

/**
 * Does `actual` have the shape the guide shows? Objects have the same keys,
 * strings are equal unless the guide elides them with "…", numbers are
 * numbers (times and round trips vary), arrays match element by element.
 */
function shapeDifferences(expected: unknown, actual: unknown, path = '$'): string[] {
  if (typeof expected === 'string')
    return expected.includes('…') || expected === actual
      ? []
      : [`${path}: ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`];
  if (typeof expected === 'number')
    return typeof actual === 'number' ? [] : [`${path}: ${JSON.stringify(actual)} is not a number`];
  if (expected === null || typeof expected === 'boolean')
    return expected === actual ? [] : [`${path}: ${JSON.stringify(actual)} is not ${JSON.stringify(expected)}`];
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: not an array`];
    if (expected.every((item) => typeof item === 'string' && item.includes('…'))) return [];
    if (expected.length !== actual.length)
      return [`${path}: ${actual.length} items, the guide shows ${expected.length}`];
    return expected.flatMap((item, index) => shapeDifferences(item, actual[index], `${path}[${index}]`));
  }
  const given = expected as Record<string, unknown>;
  if (actual === null || typeof actual !== 'object') return [`${path}: not an object`];
  const got = actual as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(given), ...Object.keys(got)])];
  return keys.flatMap((key) =>
    !(key in got)
      ? [`${path}.${key}: missing`]
      : !(key in given)
        ? [`${path}.${key}: not in the guide`]
        : shapeDifferences(given[key], got[key], `${path}.${key}`),
  );
}

describe('the HTTP API walk-through of docs/http-api.md, run against the sample', () => {
  const server = usePrivateRedis();
  let app: INestApplication;
  let port: number;
  const saved = { ...process.env };

  beforeAll(async () => {
    process.env.REDIS_URL = server.url;
    process.env.WURK_API_TOKEN = TOKEN;
    app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    setUpOpenApi(app);
    await app.listen(0, '127.0.0.1');
    port = app.getHttpServer().address().port;
  });
  afterAll(async () => {
    await app?.close();
    process.env = saved;
  });

  it('prints what the guide says each curl prints', async () => {
    const steps = walkthroughSteps();
    // The guide starts the sample itself; here it is already listening, on a port of its own.
    const runnable = steps
      .map((step) => ({
        ...step,
        commands: step.commands.filter((line) => !/npm run sample|^export WURK_API_TOKEN=/.test(line)),
      }))
      .filter((step) => step.commands.length > 0);
    expect(runnable.length).toBeGreaterThanOrEqual(8);
    const script = [
      'set -euo pipefail',
      ...runnable.flatMap((step, index) => [
        ...step.commands.map((line) => line.replace(/127\.0\.0\.1:3000/g, `127.0.0.1:${port}`)),
        `echo; echo "@@step ${index}@@"`,
      ]),
    ].join('\n');
    const { stdout } = await promisify(execFile)('bash', ['-c', script], {
      env: { ...process.env, WURK_API_TOKEN: TOKEN },
      timeout: 90_000,
      maxBuffer: 8 * 1024 * 1024,
    });
    const outputs = stdout.split(/@@step \d+@@\n?/);
    const differences = runnable.flatMap((step, index) => {
      if (!step.expected.startsWith('{')) return [];
      const printed = outputs[index]
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .pop();
      if (printed === undefined) return [`step ${index} (${step.commands[0]}) printed no JSON`];
      return shapeDifferences(JSON.parse(step.expected), JSON.parse(printed)).map(
        (difference) => `step ${index} (${step.commands[0]}): ${difference}`,
      );
    });
    expect(differences).toEqual([]);
    // Every step with a JSON answer in the guide was compared.
    expect(runnable.filter((step) => step.expected.startsWith('{')).length).toBeGreaterThanOrEqual(6);
  }, 120_000);
});
