import { applyDecorators, Type } from '@nestjs/common';
import type { ApiRoute } from '../../api/route-table';
import { RouteDoc, SCHEMAS } from '../../api/openapi';
import { WURK_ROUTE } from './wurk-api.tokens';

/**
 * The security scheme name wurk's operations refer to; add it to your DocumentBuilder with `.addBearerAuth(undefined,
 * WURK_BEARER_SCHEME)`.
 */
export const WURK_BEARER_SCHEME = 'wurk-bearer';

type Decorator = ClassDecorator & MethodDecorator;
type Swagger = Record<string, (...args: unknown[]) => Decorator>;

let loaded: Swagger | null | undefined;

/**
 * `@nestjs/swagger` is an optional peer, loaded only when an app registers
 * WurkApiModule (it takes seconds to load: a worker process that never
 * serves HTTP must not pay for it). Without it the routes are served
 * undocumented. Only its absence is tolerated; any other failure to load
 * it is rethrown, so a broken install says why.
 */
function swagger(): Swagger | null {
  if (loaded !== undefined) return loaded;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, loaded only if installed
    loaded = require('@nestjs/swagger') as Swagger;
  } catch (error) {
    const code = (error as { code?: string }).code;
    const missing =
      (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') &&
      String((error as Error).message).includes('@nestjs/swagger');
    if (!missing) throw error;
    loaded = null;
  }
  return loaded;
}

/** The problem document's schema, as a model Swagger's scan files under components/schemas. */
class WurkProblem {}

let problemDescribed = false;

/**
 * Every route answers problems with the same schema: described once, as
 * `#/components/schemas/WurkProblem`, and referred to from each response
 * (inline, the copies made up three quarters of the document).
 */
function problemSchema(api: Swagger): { $ref: string } {
  if (!problemDescribed) {
    problemDescribed = true;
    const { properties, required, description } = SCHEMAS.Problem as {
      properties: Record<string, object>;
      required: string[];
      description: string;
    };
    for (const [name, property] of Object.entries(properties)) {
      api.ApiProperty({ ...property, required: required.includes(name) })(
        WurkProblem.prototype as never,
        name,
        undefined as never,
      );
    }
    api.ApiSchema?.({ name: 'WurkProblem', description })(WurkProblem as never, undefined as never, undefined as never);
  }
  return { $ref: (api.getSchemaPath as unknown as (model: Function) => string)(WurkProblem) };
}

/** A response's content, with the shared problem schema as a reference. */
function contentOf(
  api: Swagger,
  content: RouteDoc['responses'][number]['content'],
): RouteDoc['responses'][number]['content'] {
  return Object.fromEntries(
    Object.entries(content).map(([type, media]) => [
      type,
      media.schema === SCHEMAS.Problem ? { schema: problemSchema(api) } : media,
    ]),
  );
}

function routeDecorators(api: Swagger, { doc, scope }: ApiRoute): Decorator[] {
  const decorators: Decorator[] = [api.ApiOperation({ summary: doc.summary, description: `Scope: ${scope}.` })];
  for (const parameter of doc.parameters) {
    const { in: place, ...rest } = parameter;
    if (place === 'path') decorators.push(api.ApiParam(rest));
    else if (place === 'query') decorators.push(api.ApiQuery(rest));
    else decorators.push(api.ApiHeader(rest));
  }
  if (doc.requestBody) decorators.push(api.ApiBody({ required: true, schema: doc.requestBody }));
  for (const [status, response] of Object.entries(doc.responses)) {
    decorators.push(
      api.ApiResponse({
        status: Number(status),
        description: response.description,
        content: contentOf(api, response.content),
      }),
    );
  }
  return decorators;
}

const documented = new WeakSet<Function>();

/**
 * Adds the Swagger metadata of every handler of `controller` that names a
 * route (`WURK_ROUTE`), from the description in that route's row, and tags
 * the class; handlers that name none stay out of the document. Once per class.
 */
export function documentController(controller: Type<unknown>, routes: readonly ApiRoute[]): void {
  const api = swagger();
  if (!api || documented.has(controller)) return;
  documented.add(controller);
  const prototype = controller.prototype as Record<string, unknown>;
  for (const key of Object.getOwnPropertyNames(prototype)) {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, key);
    if (key === 'constructor' || typeof descriptor?.value !== 'function') continue;
    const name = Reflect.getMetadata(WURK_ROUTE, descriptor.value) as string | undefined;
    const served = name === undefined ? undefined : routes.find((route) => route.name === name);
    if (name !== undefined && served === undefined)
      throw new Error(`${controller.name}.${key} serves route ${name}, which is not in the route table`);
    const decorators = served === undefined ? [api.ApiExcludeEndpoint()] : routeDecorators(api, served);
    applyDecorators(...decorators)(prototype, key, descriptor);
  }
  applyDecorators(
    api.ApiTags('wurk'),
    api.ApiBearerAuth(WURK_BEARER_SCHEME),
    api.ApiExtraModels(WurkProblem),
  )(controller);
}
