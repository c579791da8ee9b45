/**
 * A Stryker reporter that saves a unit's progress while it runs: every minute, the mutants decided so far
 * are written to the unit's incremental file in the report format Stryker's incremental mode reads, marked
 * `wurkCheckpoint`. Stryker writes that file only when a run completes, so a unit that outlasts a working
 * session used to keep nothing; with a checkpoint the next run of the unit reuses every decided mutant
 * whose code and tests did not change, and tests only the rest. A run that completes overwrites the
 * checkpoint with Stryker's own full report.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { extname, isAbsolute, relative, resolve, sep } from 'node:path';
import { commonTokens, declareClassPlugin, PluginKind } from '@stryker-mutator/api/plugin';

const WRITE_EVERY_MS = Number(process.env.WURK_CHECKPOINT_MS ?? 60000);

/** A path of the project or of a Stryker sandbox copy of it, relative to the project root with `/`. */
export function projectPath(fileName, root = process.cwd()) {
  const absolute = isAbsolute(fileName) ? fileName : resolve(root, fileName);
  const inSandbox = /[\\/]\.stryker-tmp[\\/][^\\/]+[\\/]sandbox-[^\\/]+[\\/](.*)$/.exec(absolute);
  const path = inSandbox ? inSandbox[1] : relative(root, absolute);
  return path.split(sep).join('/');
}

/** A test's start in the report: Stryker's positions are 0-based, the report's 1-based. */
function schemaPosition({ line, column }) {
  return { line: line + 1, column: column + 1 };
}

export class CheckpointReporter {
  static inject = [commonTokens.options, commonTokens.logger];

  constructor(options, log) {
    this.options = options;
    this.log = log;
    this.tests = [];
    this.planned = 0;
    this.decided = new Map();
    this.lastWrite = Date.now();
    this.sources = new Map();
  }

  onDryRunCompleted({ result }) {
    this.tests = result.tests ?? [];
  }

  onMutationTestingPlanReady({ mutantPlans }) {
    this.planned = mutantPlans.length;
    // Read now, before any mutant is decided: the checkpoint must pair each mutant with the source it was
    // decided against, not with an edit made to the tree while the run goes on.
    for (const { mutant } of mutantPlans) this.source(projectPath(mutant.fileName));
    for (const test of this.tests) if (test.fileName) this.source(projectPath(test.fileName));
  }

  onMutantTested(result) {
    this.decided.set(result.id, result);
    if (this.options.incremental && Date.now() - this.lastWrite >= WRITE_EVERY_MS) this.write();
  }

  source(path) {
    if (!this.sources.has(path)) this.sources.set(path, readFileSync(resolve(process.cwd(), path), 'utf8'));
    return this.sources.get(path);
  }

  /** The decided mutants as a mutation-testing-report-schema document; test ids stay Stryker's own. */
  report() {
    const files = {};
    for (const mutant of this.decided.values()) {
      const path = projectPath(mutant.fileName);
      files[path] ??= {
        language: extname(path) === '.ts' ? 'typescript' : 'javascript',
        source: this.source(path),
        mutants: [],
      };
      files[path].mutants.push({
        id: mutant.id,
        mutatorName: mutant.mutatorName,
        replacement: mutant.replacement,
        statusReason: mutant.statusReason,
        status: mutant.status,
        testsCompleted: mutant.testsCompleted,
        static: mutant.static,
        killedBy: mutant.killedBy,
        coveredBy: mutant.coveredBy,
        // Already the report's (1-based) location: Stryker converts it before reporting a mutant.
        location: mutant.location,
      });
    }
    const testFiles = {};
    for (const test of this.tests) {
      const path = test.fileName ? projectPath(test.fileName) : '';
      testFiles[path] ??= { source: path ? this.source(path) : undefined, tests: [] };
      testFiles[path].tests.push({
        id: test.id,
        name: test.name,
        location: test.startPosition ? { start: schemaPosition(test.startPosition) } : undefined,
      });
    }
    return {
      files,
      schemaVersion: '1.0',
      thresholds: this.options.thresholds,
      testFiles,
      projectRoot: process.cwd(),
      wurkCheckpoint: { decided: this.decided.size, planned: this.planned, at: new Date().toISOString() },
    };
  }

  write() {
    this.lastWrite = Date.now();
    const file = resolve(process.cwd(), this.options.incrementalFile);
    try {
      // Written aside and renamed, so a run killed mid-write leaves the previous checkpoint whole.
      writeFileSync(`${file}.tmp`, JSON.stringify(this.report(), null, 2));
      renameSync(`${file}.tmp`, file);
      this.log.info(
        `checkpoint: ${this.decided.size} of ${this.planned} mutants decided, saved to ${this.options.incrementalFile}`,
      );
    } catch (error) {
      this.log.warn(`checkpoint not saved: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Reporter, 'wurk-checkpoint', CheckpointReporter)];
