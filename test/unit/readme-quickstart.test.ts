import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as ts from 'typescript';

const ROOT = resolve(__dirname, '..', '..');

/** The README's quick start must compile against the real public surface. */
describe('README quick start', () => {
  it('compiles with `nestjs-wurk` resolved to src/index.ts', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Quick start'));
    const snippet = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
    expect(snippet).toBeDefined();
    const dir = mkdtempSync(join(ROOT, 'test', '.readme-'));
    try {
      const file = join(dir, 'quickstart.ts');
      writeFileSync(file, (snippet as string).replace(/from 'nestjs-wurk'/g, `from ${JSON.stringify(join(ROOT, 'src'))}`));
      const program = ts.createProgram([file], {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.CommonJS,
        strict: true,
        noEmit: true,
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        esModuleInterop: true,
        skipLibCheck: true,
        types: ['node'],
      });
      const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(errors).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
