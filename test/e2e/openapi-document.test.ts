import { readFileSync } from 'node:fs';

/**
 * docs/openapi.json is the API's contract as clients see it. Built here
 * from the code, inside the test (Stryker then counts the route
 * descriptions as covered by it), and compared with the committed file: a
 * change to any route, schema or problem shows up in review as a diff.
 */
describe('docs/openapi.json', () => {
  it('is the document the code describes (after a change: npm run openapi, and commit the file)', async () => {
    let build!: typeof import('../../docs/openapi');
    jest.isolateModules(() => {
      build = require('../../docs/openapi') as typeof import('../../docs/openapi');
    });
    const rendered = build.renderOpenApi(await build.wurkOpenApiDocument());
    const committed = readFileSync(build.OPENAPI_FILE, 'utf8');
    expect(JSON.parse(rendered)).toEqual(JSON.parse(committed));
    expect(rendered).toBe(committed);
  });

  it('describes the problem document once and refers to it from every problem response', () => {
    const document = JSON.parse(readFileSync(require.resolve('../../docs/openapi.json'), 'utf8'));
    const problemContents = Object.values(
      document.paths as Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>
      >,
    )
      .flatMap((item) => Object.values(item))
      .flatMap((operation) => Object.values(operation.responses))
      .map((response) => response.content?.['application/problem+json'])
      .filter((content) => content !== undefined);
    expect(problemContents.length).toBeGreaterThan(100);
    expect(new Set(problemContents.map((content) => JSON.stringify(content)))).toEqual(
      new Set([JSON.stringify({ schema: { $ref: '#/components/schemas/WurkProblem' } })]),
    );
    expect(document.components.schemas.WurkProblem.required).toEqual(['type', 'title', 'status', 'detail', 'instance']);
  });
});
