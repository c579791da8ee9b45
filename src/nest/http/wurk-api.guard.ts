import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { PlatformRequest } from './node-http';
import { ApiProblem } from '../../api/problem';
import { WurkApiService } from './wurk-api.service';
import { WURK_ROUTE } from './wurk-api.tokens';

/**
 * Every check of docs/internals/spec/contract.md §1.2 before a wurk handler runs (tokens,
 * authentication, read-only, rate limit, version, route, scope), by the
 * API's own route table. The app's global guards run before this one and
 * see the route as any other; this guard decides what the contract decides.
 */
@Injectable()
export class WurkApiGuard implements CanActivate {
  constructor(private readonly api: WurkApiService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<PlatformRequest>();
    const served = Reflect.getMetadata(WURK_ROUTE, context.getHandler()) as string | undefined;
    const admission = await this.api.admit(req, served);
    // Express matches more loosely than the table (a trailing slash, any case);
    // a request it delivered to a handler the table does not name is unrouted.
    if (admission.spec.name !== served) throw new ApiProblem('not_found', 'No route matches this path.');
    return true;
  }
}
