/**
 * Where one `WurkApiModule.register()` put its controllers: the path option and the module class RouterModule may have
 * given a path.
 */
export interface WurkApiMountInfo {
  path: string;
  module: Function;
}

export const WURK_API_MOUNT = Symbol('wurk:api-mount');

/** Metadata on a controller handler: the route-table row (`api/router`) it serves. */
export const WURK_ROUTE = 'wurk:route';
