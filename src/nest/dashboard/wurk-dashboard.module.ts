import { DynamicModule, Module } from '@nestjs/common';
import { WurkConfigError } from '../../job/errors';
import { mountController } from '../http/mount-controller';
import { RouterSyntax } from '../http/router-syntax';
import { DashboardAssets } from './dashboard-assets';
import { WurkDashboardController } from './wurk-dashboard.controller';
import { WURK_DASHBOARD_SETTINGS } from './wurk-dashboard.tokens';

/**
 * Options of `WurkDashboardModule.register()`: `path` (default `dashboard`), `apiUrl` (default `../api/v1`),
 * `readOnly`.
 */
export interface WurkDashboardModuleOptions {
  /**
   * The dashboard's path, default `dashboard` (under the app's global prefix and RouterModule path, as any controller).
   */
  path?: string;
  /**
   * Where the page reaches the HTTP API's `/v1` (`WurkApiModule`): default
   * `../api/v1`, relative to the dashboard, which is right when both sit
   * beside each other under the same prefix (`/dashboard/` and `/api/v1`).
   */
  apiUrl?: string;
  /** Show no action buttons (tokens with `admin` still cannot act from the page). Default false. */
  readOnly?: boolean;
}

/**
 * wurk's own dashboard: a page served at `path`, reading and acting through
 * the HTTP API with the operator's token (scope `read` to look, `admin` to
 * act). The built assets ship in the package; there is no build step.
 */
@Module({})
export class WurkDashboardModule {
  /** Serves the dashboard's page and assets under `options.path`; it reads through the HTTP API's admin routes. */
  static register(options: WurkDashboardModuleOptions = {}): DynamicModule {
    const path = (options.path ?? 'dashboard').replace(/^\/+|\/+$/g, '');
    if (options.apiUrl !== undefined && (typeof options.apiUrl !== 'string' || options.apiUrl === '')) {
      throw new WurkConfigError('dashboard.apiUrl', 'must be a non-empty URL path');
    }
    return {
      module: WurkDashboardModule,
      controllers: [mountController(WurkDashboardController, path)],
      providers: [
        RouterSyntax,
        { provide: DashboardAssets, useFactory: () => new DashboardAssets() },
        {
          provide: WURK_DASHBOARD_SETTINGS,
          useValue: {
            apiUrl: (options.apiUrl ?? '../api/v1').replace(/\/+$/, ''),
            readOnly: options.readOnly ?? false,
          },
        },
      ],
    };
  }
}
