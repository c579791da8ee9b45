import type { ExecutionContext } from '@nestjs/common';
import { WURK_ROUTE } from './wurk-api.tokens';
import { WurkApiFallbackController } from './wurk-api.controller';

/**
 * True when `context` is a request to a wurk API route. An app's global
 * guard (an auth guard for its own users) runs on wurk's routes too; this
 * lets it step aside for them, since wurk authenticates its own tokens.
 */
export function isWurkApiRoute(context: ExecutionContext): boolean {
  if (Reflect.getMetadata(WURK_ROUTE, context.getHandler()) !== undefined) return true;
  return context.getClass().prototype instanceof WurkApiFallbackController;
}
