import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Injectable } from '@nestjs/common';
import { ApplicationConfig, BaseExceptionFilter } from '@nestjs/core';
import { earlyBodyProblem, tooLarge } from '../../api/body';
import { ApiProblem, invalidRequest } from '../../api/problem';
import { nodeRequest, PlatformRequest, PlatformResponse } from './node-http';
import { WurkApiService } from './wurk-api.service';

/** Renders the refusals of wurk's guard and handlers as problem documents; on wurk's controllers only. */
@Catch(ApiProblem)
@Injectable()
export class WurkApiProblemFilter implements ExceptionFilter {
  constructor(private readonly api: WurkApiService) {}

  catch(problem: ApiProblem, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.api.sendError(problem, http.getRequest<PlatformRequest>(), http.getResponse<PlatformResponse>());
  }
}

/** The metadata key `@Catch()` stores its exception types under. */
const FILTER_CATCH_EXCEPTIONS = '__filterCatchExceptions__';

function causeOf(exception: unknown): unknown {
  return exception instanceof HttpException ? (exception.cause ?? exception) : exception;
}

/** Whether the response went out already: Node's flag, under Fastify's reply when there is one. */
function sent(res: PlatformResponse): boolean {
  return 'raw' in res ? res.raw.headersSent : res.headersSent;
}

/**
 * What the framework refused before routing, as the contract words it: a
 * body its parser refused (body-parser's errors carry a `type` such as
 * `entity.too.large` or `entity.parse.failed`) or a path Express could not
 * decode. Undefined for anything else: an exception from the app's own
 * guards or interceptors on a wurk route is the app's answer to give.
 */
function translate(exception: unknown): ApiProblem | undefined {
  const cause = causeOf(exception) as { type?: unknown; limit?: unknown } | undefined;
  if (cause instanceof URIError) return new ApiProblem('not_found', 'No route matches this path.');
  if (typeof cause?.type !== 'string') return undefined;
  if (cause.type === 'entity.too.large' && typeof cause.limit === 'number') return tooLarge(cause.limit);
  if (cause.type === 'entity.parse.failed') return invalidRequest('The request body is not valid JSON.');
  return invalidRequest('The request body could not be read.');
}

/**
 * A request Fastify's router gave to no route (its not-found handler, which
 * Nest turns into a NotFoundException): a path under the mount that only an
 * empty parameter or a trailing slash kept from a route. On Express the
 * fallback controller takes those; Fastify flags them `is404`.
 */
function unrouted(req: PlatformRequest): ApiProblem | undefined {
  return (req as { is404?: unknown }).is404 === true
    ? new ApiProblem('not_found', 'No route matches this path.')
    : undefined;
}

/**
 * A global filter, because a request the framework refuses before routing
 * it (its body parser, its path decoding) reaches only global filters.
 * For such a refusal under wurk's mount it runs the gate first, so the
 * order of checks holds (no token → 401 even for a malformed body), then
 * answers it as a problem document. Everything else goes on to the filter
 * Nest would have picked next, then to Nest's own: the app's handling of
 * its own routes, and of its own guards' refusals, is unchanged.
 */
@Catch()
@Injectable()
export class WurkApiUnroutedFilter extends BaseExceptionFilter {
  constructor(
    private readonly api: WurkApiService,
    private readonly config: ApplicationConfig,
  ) {
    super();
  }

  override catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() === 'http') {
      const http = host.switchToHttp();
      const req = http.getRequest<PlatformRequest>();
      const res = http.getResponse<PlatformResponse>();
      const refusal = earlyBodyProblem(nodeRequest(req)) ?? translate(exception) ?? unrouted(req);
      if (refusal && this.api.isUnderMount(req) && !sent(res)) {
        void this.answer(refusal, req, res);
        return;
      }
    }
    this.passOn(exception, host);
  }

  private async answer(refusal: unknown, req: PlatformRequest, res: PlatformResponse): Promise<void> {
    let answer = refusal;
    try {
      await this.api.admit(req);
    } catch (problem) {
      answer = problem;
    }
    this.api.sendError(answer, req, res);
  }

  /**
   * Nest tries global filters last-registered first and stops at the first whose types match; so do we, from below
   * ourselves.
   */
  private passOn(exception: unknown, host: ArgumentsHost): void {
    const filters = this.config.getGlobalFilters() as ExceptionFilter[];
    for (let index = filters.indexOf(this) - 1; index >= 0; index--) {
      const filter = filters[index];
      const types = (Reflect.getMetadata(FILTER_CATCH_EXCEPTIONS, Object.getPrototypeOf(filter)) ??
        Reflect.getMetadata(FILTER_CATCH_EXCEPTIONS, filter.constructor) ??
        []) as Function[];
      if (types.length === 0 || types.some((type) => exception instanceof type)) {
        filter.catch(exception, host);
        return;
      }
    }
    super.catch(exception, host);
  }
}
