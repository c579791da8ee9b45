import { BatchStore } from '../../batch/batch-store';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import type { IncomingMessage } from 'node:http';
import { AdminRoutes } from '../../api/admin.routes';
import { ApiGate, Admission, IncomingApiRequest } from '../../api/api-gate';
import { resolveApiOptions, ResolvedApiOptions } from '../../api/api-options';
import { requestBody } from '../../api/body';
import { discoveryResponse } from '../../api/discovery';
import { JobsRoutes } from '../../api/jobs.routes';
import { ApiProblem } from '../../api/problem';
import { requestPath, requestSearch } from '../../api/request-path';
import { ApiResponse, send } from '../../api/response';
import type { ApiRequest } from '../../api/router';
import { API_ROUTES, type ApiRoute, type RouteHandlers } from '../../api/route-table';
import { RedisConnections } from '../../redis/connections';
import { AdminService } from '../admin.service';
import { ClientService } from '../client.service';
import { PeriodicService } from '../periodic.service';
import { StatusService } from '../status.service';
import { WURK_RESOLVED_OPTIONS } from '../tokens';
import type { ResolvedWurkOptions } from '../wurk-options';
import { resolvedMountPath } from './mount-path';
import { nodeRequest, PlatformRequest, PlatformResponse, takeResponse } from './node-http';
import { placeBodyReader } from './place-body-reader';
import { WURK_API_MOUNT, WurkApiMountInfo } from './wurk-api.tokens';

const ADMISSION = Symbol('wurk:admission');
type AdmittedRequest = IncomingMessage & { [ADMISSION]?: Admission };

/**
 * The Nest-free HTTP contract (`api/`) bound to this app: its options, its
 * Redis, and the path the routes ended up at. Guards, filters and
 * controllers of WurkApiModule are thin calls into it.
 */
@Injectable()
export class WurkApiService implements OnModuleInit {
  readonly options: ResolvedApiOptions;
  readonly gate: ApiGate;
  readonly jobs: JobsRoutes;
  readonly admin: AdminRoutes;
  private readonly handlers: RouteHandlers;
  private readonly logger = new Logger('WurkApi');
  private mountPath?: string;

  constructor(
    @Inject(WURK_RESOLVED_OPTIONS) wurk: ResolvedWurkOptions,
    @Inject(WURK_API_MOUNT) private readonly mount: WurkApiMountInfo,
    connections: RedisConnections,
    client: ClientService,
    status: StatusService,
    admin: AdminService,
    periodic: PeriodicService,
    adapterHost: HttpAdapterHost,
    private readonly config: ApplicationConfig,
    private readonly modules: ModulesContainer,
  ) {
    this.options = resolveApiOptions(wurk.api ?? {});
    this.gate = new ApiGate(this.options, connections.command, API_ROUTES, this.logger);
    this.jobs = new JobsRoutes({
      redis: connections.command,
      cancellable: admin,
      client,
      status,
      options: this.options,
      logger: this.logger,
    });
    this.admin = new AdminRoutes({ admin, periodic, batches: new BatchStore(connections.command) });
    this.handlers = {
      jobs: this.jobs,
      admin: this.admin,
      discovery: (request) => discoveryResponse(this.options, this.mountedAt, request.principal),
    };
    placeBodyReader(adapterHost, (req) => this.isUnderMount(req), this.options.maxBodyBytes);
  }

  /** Runs once the global prefix and RouterModule paths are known, before the app serves anything. */
  onModuleInit(): void {
    this.mountPath = resolvedMountPath(this.config, this.modules, this.mount.module, this.mount.path);
  }

  /** Where the routes are served: global prefix + module path + controller path. */
  get mountedAt(): string {
    return this.mountPath ?? resolvedMountPath(this.config, this.modules, this.mount.module, this.mount.path);
  }

  /** The path relative to the mount when the request is under it, else undefined. */
  relative(path: string): string | undefined {
    const mount = this.mountedAt;
    if (mount === '') return path;
    if (path === mount) return '';
    return path.startsWith(`${mount}/`) ? path.slice(mount.length) : undefined;
  }

  /**
   * Whether the request's path lies under the API's mount (global prefix + module path + controller path); the body
   * reader only reads those.
   */
  isUnderMount(req: PlatformRequest): boolean {
    return this.relative(requestPath(nodeRequest(req))) !== undefined;
  }

  /**
   * The request as the platform-free gate reads it (method, path, path relative to the mount, query string, headers),
   * from Express or Fastify alike.
   */
  incoming(platformRequest: PlatformRequest): IncomingApiRequest {
    const req = nodeRequest(platformRequest);
    const path = requestPath(req);
    return {
      method: req.method ?? 'GET',
      path,
      relative: this.relative(path),
      search: requestSearch(req),
      headers: req.headers,
    };
  }

  /**
   * The gate's verdict for this request, kept on it for the handler. `served`
   * names the row of the handler Nest routed it to (none for the fallback):
   * the gate checks that row rather than searching the table again. Any
   * failure that is not a refusal (Redis away under the rate limiter) is
   * logged here and becomes the contract's 500 problem.
   */
  async admit(req: PlatformRequest, served?: string): Promise<Admission> {
    try {
      const admission = await this.gate.admit(this.incoming(req), served);
      (nodeRequest(req) as AdmittedRequest)[ADMISSION] = admission;
      return admission;
    } catch (error) {
      throw this.asProblem(error, req);
    }
  }

  /**
   * An ApiProblem as it is; anything else is logged (message and stack,
   * with the method and path) and becomes the contract's 500
   * `internal_error` problem, so no internal detail reaches the client.
   */
  asProblem(error: unknown, req: PlatformRequest): ApiProblem {
    if (error instanceof ApiProblem) return error;
    this.gate.render(error, this.incoming(req));
    return new ApiProblem('internal_error', 'The request could not be completed.');
  }

  /** Writes a problem (or a 500 for anything else) the contract's way. */
  sendError(error: unknown, req: PlatformRequest, res: PlatformResponse): void {
    const incoming = this.incoming(req);
    send(takeResponse(res), this.gate.render(error, incoming), incoming.method === 'HEAD');
  }

  /** Answers an admitted request with its route's handler; the produce routes read the body through the API's cap. */
  serve(route: ApiRoute, req: PlatformRequest, res: PlatformResponse): Promise<void> {
    return this.respond(req, res, (request) =>
      route.handle(this.handlers, { request, body: () => requestBody(nodeRequest(req), this.options.maxBodyBytes) }),
    );
  }

  /**
   * Runs a handler of an admitted request and writes its answer itself:
   * the body is exact contract bytes, so nothing a host interceptor maps
   * (a `{ data }` envelope, a serializer) may reshape it.
   */
  async respond(
    req: PlatformRequest,
    res: PlatformResponse,
    handler: (request: ApiRequest) => Promise<ApiResponse>,
  ): Promise<void> {
    const admission = (nodeRequest(req) as AdmittedRequest)[ADMISSION];
    let response: ApiResponse;
    try {
      if (!admission) throw new Error('a wurk API route ran without WurkApiGuard');
      response = await handler(admission.request);
    } catch (error) {
      response = this.gate.render(error, this.incoming(req));
    }
    send(takeResponse(res), response, nodeRequest(req).method === 'HEAD');
  }
}
