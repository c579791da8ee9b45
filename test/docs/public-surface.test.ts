import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { codeBlocks, ROOT } from './markdown';

/**
 * The root entry is what an application uses, and stays small enough to
 * read: at most 60 names (values and types). What embedders need lives in
 * `nestjs-wurk/admin` and `nestjs-wurk/internals` (docs/package-entries.md).
 */
const MAX_ROOT_NAMES = 60;

function exportsOf(entry: string): string[] {
  const file = join(ROOT, entry);
  const program = ts.createProgram([file], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    experimentalDecorators: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  return checker.getExportsOfModule(module).map((symbol) => symbol.name);
}

describe('the public surface', () => {
  const root = exportsOf('src/index.ts');

  it(`exports at most ${MAX_ROOT_NAMES} names from the root entry`, () => {
    expect(root.length).toBeGreaterThan(20);
    expect(root.length).toBeLessThanOrEqual(MAX_ROOT_NAMES);
  });

  it('keeps at the root every name the README imports from nestjs-wurk', () => {
    const readme = codeBlocks('README.md', readFileSync(join(ROOT, 'README.md'), 'utf8'));
    const imported = readme.flatMap((block) =>
      [...block.code.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'nestjs-wurk'/g)].flatMap((match) =>
        match[1].split(',').map((name) => name.replace(/^\s*type\s+/, '').trim()),
      ),
    );
    expect(imported.length).toBeGreaterThan(0);
    expect(imported.filter((name) => name && !root.includes(name))).toEqual([]);
  });

  it('leaves no name in two entries: admin and internals hold what the root does not', () => {
    const admin = exportsOf('src/entries/admin.ts');
    const internals = exportsOf('src/entries/internals.ts');
    expect(admin.filter((name) => root.includes(name) || internals.includes(name))).toEqual([]);
    expect(internals.filter((name) => root.includes(name))).toEqual([]);
  });
});
