import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { CodeBlock, codeBlocks, documentationFiles, read, ROOT } from './markdown';

/**
 * Every ```ts block of README.md and docs/ must compile against the
 * package's source, with `nestjs-wurk` and its subpaths mapped to src/ the
 * way package.json's exports map them to dist/. A block that is a fragment
 * on purpose says so on its fence (```ts partial) and is left out.
 */
const TS_LANGUAGES = new Set(['ts', 'typescript']);

/** `nestjs-wurk` and `nestjs-wurk/<subpath>` → the source file behind the published `types`. */
function packagePaths(): Record<string, string[]> {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, { types?: string } | string>;
  };
  const paths: Record<string, string[]> = {};
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    if (typeof target === 'string' || !target.types) continue;
    const source = target.types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts');
    paths[subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`] = [source];
  }
  return paths;
}

function checkedBlocks(): CodeBlock[] {
  return documentationFiles()
    .flatMap((file) => codeBlocks(file, read(file)))
    .filter((block) => TS_LANGUAGES.has(block.language) && !block.flags.includes('partial'));
}

describe('TypeScript examples in README.md and docs/', () => {
  const blocks = checkedBlocks();

  it('are found, the README quick start among them', () => {
    expect(blocks.length).toBeGreaterThan(20);
    expect(blocks.some((block) => block.file === 'README.md' && block.code.includes('WurkModule.forRoot'))).toBe(true);
  });

  it('maps every package entry to its source', () => {
    expect(Object.keys(packagePaths()).sort()).toEqual(
      [
        'nestjs-wurk',
        'nestjs-wurk/admin',
        'nestjs-wurk/batches',
        'nestjs-wurk/flows',
        'nestjs-wurk/health',
        'nestjs-wurk/internals',
        'nestjs-wurk/iterable',
        'nestjs-wurk/metrics',
        'nestjs-wurk/testing',
        'nestjs-wurk/tracing',
        'nestjs-wurk/worker',
      ].sort(),
    );
  });

  it('compile against the package as written (mark a deliberate fragment ```ts partial)', () => {
    const dir = mkdtempSync(join(ROOT, 'test', '.readme-examples-'));
    try {
      const where = new Map<string, CodeBlock>();
      const files = blocks.map((block, index) => {
        const path = join(dir, `${block.file.replace(/[^A-Za-z0-9]+/g, '_')}_${block.line}_${index}.ts`);
        // Each block is a module of its own, so two examples may both declare an AppModule.
        writeFileSync(path, `${block.code}\nexport {};\n`);
        where.set(path, block);
        return path;
      });
      const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
      const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
      const program = ts.createProgram(files, { ...options, noEmit: true, baseUrl: ROOT, paths: packagePaths() });
      const errors = ts
        .getPreEmitDiagnostics(program)
        .filter((diagnostic) => diagnostic.file && where.has(diagnostic.file.fileName))
        .map((diagnostic) => {
          const block = where.get(diagnostic.file!.fileName)!;
          const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
          return `${block.file}:${block.line + 1 + line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
        });
      expect(errors).toEqual([]);
      // An error in the package itself would also fail the examples that use it: reported by tsc -p, not here.
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
