import { applyDecorators } from '@nestjs/common';
import type { RouteDoc } from '../../api/openapi';

/** The security scheme name wurk's operations refer to; add it to your DocumentBuilder with `.addBearerAuth(undefined, WURK_BEARER_SCHEME)`. */
export const WURK_BEARER_SCHEME = 'wurk-bearer';

type Decorator = ClassDecorator & MethodDecorator;
type SwaggerModule = Record<string, (...args: unknown[]) => Decorator>;

/**
 * `@nestjs/swagger` is an optional peer: without it the decorators below do
 * nothing and the package still loads. Only its absence is tolerated; any
 * other failure to load it is rethrown, so a broken install says why.
 */
function loadSwagger(): SwaggerModule | undefined {
  try {
    return require('@nestjs/swagger') as SwaggerModule;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if ((code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') && String((error as Error).message).includes('@nestjs/swagger')) return undefined;
    throw error;
  }
}

const swagger = loadSwagger();
const none: Decorator = () => undefined;

/** Tags wurk's controllers and names the bearer scheme they need. */
export function WurkApiDocs(): ClassDecorator {
  if (!swagger) return none;
  return applyDecorators(swagger.ApiTags('wurk'), swagger.ApiBearerAuth(WURK_BEARER_SCHEME));
}

/** Keeps a route (the catch-all that answers 404/405 problems) out of the document. */
export function HiddenFromDocs(): MethodDecorator {
  return swagger ? swagger.ApiExcludeEndpoint() : none;
}

/** The operation, parameters, body and responses of one route, from its description in `api/openapi`. */
export function RouteDocs(doc: RouteDoc): MethodDecorator {
  if (!swagger) return none;
  const decorators: Decorator[] = [swagger.ApiOperation({ summary: doc.summary, description: `Scope: ${doc.scope}.` })];
  for (const parameter of doc.parameters) {
    const { in: place, ...rest } = parameter;
    if (place === 'path') decorators.push(swagger.ApiParam(rest));
    else if (place === 'query') decorators.push(swagger.ApiQuery(rest));
    else decorators.push(swagger.ApiHeader(rest));
  }
  if (doc.requestBody) decorators.push(swagger.ApiBody({ required: true, schema: doc.requestBody }));
  for (const [status, response] of Object.entries(doc.responses)) {
    decorators.push(swagger.ApiResponse({ status: Number(status), description: response.description, content: response.content }));
  }
  return applyDecorators(...decorators);
}
