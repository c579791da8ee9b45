import type { ApiRoute, RouteHandlers } from '../../src/api/route-table';
import type { ApiRequest } from '../../src/api/router';
import { freshEachTest } from '../support/fresh-module';

// The rows are built at import: loaded per test so each test covers them.
const fresh = freshEachTest(() => require('../../src/api/route-table') as typeof import('../../src/api/route-table'));

const row = ({ operation, name, method, pattern, scope }: ApiRoute) => ({ operation, name, method, pattern, scope });

const setEntryRows = (segment: string, one: string, kill: boolean) => [
  { operation: segment, name: `${segment}.list`, method: 'GET', pattern: `/v1/${segment}`, scope: 'read' },
  {
    operation: `run${one}`,
    name: `${segment}.run`,
    method: 'POST',
    pattern: `/v1/${segment}/:jid/run`,
    scope: 'admin',
  },
  ...(kill
    ? [
        {
          operation: `kill${one}`,
          name: `${segment}.kill`,
          method: 'POST',
          pattern: `/v1/${segment}/:jid/kill`,
          scope: 'admin',
        },
      ]
    : []),
  {
    operation: `delete${one}`,
    name: `${segment}.delete`,
    method: 'DELETE',
    pattern: `/v1/${segment}/:jid`,
    scope: 'admin',
  },
];
const setWideRows = (segment: string, kill: boolean) => [
  {
    operation: `${segment}RunAll`,
    name: `${segment}.run_all`,
    method: 'POST',
    pattern: `/v1/${segment}/run-all`,
    scope: 'admin',
  },
  ...(kill
    ? [
        {
          operation: `${segment}KillAll`,
          name: `${segment}.kill_all`,
          method: 'POST',
          pattern: `/v1/${segment}/kill-all`,
          scope: 'admin',
        },
      ]
    : []),
  {
    operation: `${segment}Clear`,
    name: `${segment}.clear`,
    method: 'DELETE',
    pattern: `/v1/${segment}`,
    scope: 'admin',
  },
];

/** Every handler of AdminRoutes and JobsRoutes a row may call, recording the call. */
function recordingHandlers() {
  const calls: unknown[][] = [];
  const recorder = (owner: string) =>
    new Proxy(
      {},
      {
        get:
          (_target, method: string) =>
          async (...args: unknown[]) => (
            calls.push([`${owner}.${method}`, ...args]),
            { status: 200, body: '', contentType: 'application/json', headers: {} }
          ),
      },
    );
  const handlers = {
    discovery: (...args: unknown[]) => (
      calls.push(['discovery', ...args]),
      { status: 200, body: '', contentType: 'application/json', headers: {} }
    ),
    jobs: recorder('jobs'),
    admin: recorder('admin'),
  } as unknown as RouteHandlers;
  return { calls, handlers };
}

/**
 * The one route table (`src/api/route-table.ts`): the gate's rows, the
 * controllers' handlers and the OpenAPI descriptions are all read from it.
 * The committed docs/openapi.json pins the descriptions' text and the
 * operation names; the HTTP suites pin what each route answers.
 */
describe('api: the route table', () => {
  it('serves discovery and the produce routes from WurkJobsController: enqueue to push, read to look, admin to take a job out', () => {
    expect(fresh.module.PRODUCE_ROUTES.map(row)).toEqual([
      { operation: 'discovery', name: 'discovery', method: 'GET', pattern: '/v1', scope: 'any' },
      { operation: 'create', name: 'jobs.create', method: 'POST', pattern: '/v1/jobs', scope: 'enqueue' },
      { operation: 'createBulk', name: 'jobs.createBulk', method: 'POST', pattern: '/v1/jobs/bulk', scope: 'enqueue' },
      { operation: 'show', name: 'jobs.show', method: 'GET', pattern: '/v1/jobs/:jid', scope: 'read' },
      { operation: 'attempts', name: 'jobs.attempts', method: 'GET', pattern: '/v1/jobs/:jid/attempts', scope: 'read' },
      { operation: 'remove', name: 'jobs.delete', method: 'DELETE', pattern: '/v1/jobs/:jid', scope: 'admin' },
    ]);
  });

  it('serves every read and operate route from WurkAdminController: read to look, admin to act; dead has no kill', () => {
    expect(fresh.module.ADMIN_ROUTES.map(row)).toEqual([
      { operation: 'stats', name: 'stats', method: 'GET', pattern: '/v1/stats', scope: 'read' },
      { operation: 'health', name: 'health', method: 'GET', pattern: '/v1/health', scope: 'read' },
      { operation: 'queues', name: 'queues.list', method: 'GET', pattern: '/v1/queues', scope: 'read' },
      { operation: 'queue', name: 'queues.show', method: 'GET', pattern: '/v1/queues/:name', scope: 'read' },
      { operation: 'pause', name: 'queues.pause', method: 'POST', pattern: '/v1/queues/:name/pause', scope: 'admin' },
      {
        operation: 'unpause',
        name: 'queues.unpause',
        method: 'POST',
        pattern: '/v1/queues/:name/unpause',
        scope: 'admin',
      },
      ...setEntryRows('retries', 'Retry', true),
      ...setEntryRows('scheduled', 'Scheduled', true),
      ...setEntryRows('dead', 'Dead', false),
      { operation: 'limiters', name: 'limiters.list', method: 'GET', pattern: '/v1/limiters', scope: 'read' },
      { operation: 'processes', name: 'processes.list', method: 'GET', pattern: '/v1/processes', scope: 'read' },
      { operation: 'batches', name: 'batches.list', method: 'GET', pattern: '/v1/batches', scope: 'read' },
      { operation: 'batch', name: 'batches.show', method: 'GET', pattern: '/v1/batches/:bid', scope: 'read' },
      {
        operation: 'deleteBatch',
        name: 'batches.delete',
        method: 'DELETE',
        pattern: '/v1/batches/:bid',
        scope: 'admin',
      },
      { operation: 'flow', name: 'flows.show', method: 'GET', pattern: '/v1/flows/:fid', scope: 'read' },
      {
        operation: 'flowAbandon',
        name: 'flows.abandon',
        method: 'POST',
        pattern: '/v1/flows/:fid/abandon',
        scope: 'admin',
      },
      {
        operation: 'process',
        name: 'processes.show',
        method: 'GET',
        pattern: '/v1/processes/:identity',
        scope: 'read',
      },
      {
        operation: 'quiet',
        name: 'processes.quiet',
        method: 'POST',
        pattern: '/v1/processes/:identity/quiet',
        scope: 'admin',
      },
      {
        operation: 'stop',
        name: 'processes.stop',
        method: 'POST',
        pattern: '/v1/processes/:identity/stop',
        scope: 'admin',
      },
      { operation: 'busy', name: 'busy', method: 'GET', pattern: '/v1/busy', scope: 'read' },
      { operation: 'cron', name: 'cron', method: 'GET', pattern: '/v1/cron', scope: 'read' },
      { operation: 'history', name: 'stats.history', method: 'GET', pattern: '/v1/stats/history', scope: 'read' },
      ...setWideRows('retries', true),
      ...setWideRows('scheduled', true),
      ...setWideRows('dead', false),
      {
        operation: 'cronEnable',
        name: 'cron.enable',
        method: 'POST',
        pattern: '/v1/cron/:pjid/enable',
        scope: 'admin',
      },
      {
        operation: 'cronDisable',
        name: 'cron.disable',
        method: 'POST',
        pattern: '/v1/cron/:pjid/disable',
        scope: 'admin',
      },
      { operation: 'queueClear', name: 'queues.clear', method: 'DELETE', pattern: '/v1/queues/:name', scope: 'admin' },
      {
        operation: 'queueDeleteJob',
        name: 'queues.delete_job',
        method: 'DELETE',
        pattern: '/v1/queues/:name/jobs/:jid',
        scope: 'admin',
      },
      { operation: 'metricsJobs', name: 'metrics.jobs', method: 'GET', pattern: '/v1/metrics/jobs', scope: 'read' },
      {
        operation: 'metricsJob',
        name: 'metrics.job',
        method: 'GET',
        pattern: '/v1/metrics/jobs/:class',
        scope: 'read',
      },
      { operation: 'redis', name: 'redis', method: 'GET', pattern: '/v1/redis', scope: 'read' },
      {
        operation: 'jobLocations',
        name: 'jobs.locations',
        method: 'GET',
        pattern: '/v1/jobs/:jid/locations',
        scope: 'read',
      },
      {
        operation: 'cancelIteration',
        name: 'jobs.cancel',
        method: 'POST',
        pattern: '/v1/jobs/:jid/cancel',
        scope: 'admin',
      },
    ]);
    expect(fresh.module.API_ROUTES).toEqual([...fresh.module.PRODUCE_ROUTES, ...fresh.module.ADMIN_ROUTES]);
  });

  it('names each route and each handler once', () => {
    const names = fresh.module.API_ROUTES.map((route) => route.name);
    expect(new Set(names).size).toBe(names.length);
    for (const group of [fresh.module.PRODUCE_ROUTES, fresh.module.ADMIN_ROUTES]) {
      expect(new Set(group.map((route) => route.operation)).size).toBe(group.length);
    }
  });

  it('has no two rows of one verb that match one path, so the row a framework served is the row a search finds', () => {
    const overlap = (a: string, b: string) => {
      const [left, right] = [a.split('/'), b.split('/')];
      return (
        left.length === right.length &&
        left.every((part, index) => part === right[index] || part.startsWith(':') || right[index].startsWith(':'))
      );
    };
    const routes = fresh.module.API_ROUTES;
    const pairs = routes.flatMap((a, i) =>
      routes
        .slice(i + 1)
        .filter((b) => a.method === b.method && overlap(a.pattern, b.pattern))
        .map((b) => `${a.method} ${a.pattern} ~ ${b.pattern}`),
    );
    expect(pairs).toEqual([]);
  });

  it('hands each request to its own handler, with the arguments that say which set, action or signal', async () => {
    const request = { params: {}, query: {} } as unknown as ApiRequest;
    const body = async () => Buffer.from('{}');
    const called: Record<string, unknown[]> = {};
    for (const route of fresh.module.API_ROUTES) {
      const { calls, handlers } = recordingHandlers();
      await route.handle(handlers, { request, body });
      expect(calls).toHaveLength(1);
      const [handler, ...args] = calls[0];
      called[route.name] = [handler, ...args.map((arg) => (arg === request ? 'request' : arg === body ? 'body' : arg))];
    }
    expect(called).toEqual({
      discovery: ['discovery', 'request'],
      'jobs.create': ['jobs.produce', 'request', false, 'body'],
      'jobs.createBulk': ['jobs.produce', 'request', true, 'body'],
      'jobs.show': ['jobs.show', 'request'],
      'jobs.attempts': ['jobs.attempts', 'request'],
      'jobs.delete': ['jobs.destroy', 'request'],
      stats: ['admin.stats'],
      health: ['admin.health'],
      'queues.list': ['admin.queues', 'request'],
      'queues.show': ['admin.queue', 'request'],
      'queues.pause': ['admin.pause', 'request', true],
      'queues.unpause': ['admin.pause', 'request', false],
      ...Object.fromEntries(
        ['retries', 'scheduled', 'dead'].flatMap((segment) => [
          [`${segment}.list`, ['admin.set', 'request', segment]],
          [`${segment}.run`, ['admin.entryAction', 'request', segment, 'run']],
          ...(segment === 'dead' ? [] : [[`${segment}.kill`, ['admin.entryAction', 'request', segment, 'kill']]]),
          [`${segment}.delete`, ['admin.entryAction', 'request', segment, 'delete']],
          [`${segment}.run_all`, ['admin.setAction', segment, 'run_all']],
          ...(segment === 'dead' ? [] : [[`${segment}.kill_all`, ['admin.setAction', segment, 'kill_all']]]),
          [`${segment}.clear`, ['admin.setAction', segment, 'clear']],
        ]),
      ),
      'limiters.list': ['admin.limiters', 'request'],
      'processes.list': ['admin.processes', 'request'],
      'batches.list': ['admin.batches', 'request'],
      'batches.show': ['admin.batch', 'request'],
      'batches.delete': ['admin.deleteBatch', 'request'],
      'flows.show': ['admin.flow', 'request'],
      'flows.abandon': ['admin.flowAbandon', 'request'],
      'processes.show': ['admin.process', 'request'],
      'processes.quiet': ['admin.signal', 'request', 'quiet'],
      'processes.stop': ['admin.signal', 'request', 'stop'],
      busy: ['admin.busy', 'request'],
      cron: ['admin.cron'],
      'stats.history': ['admin.history', 'request'],
      'cron.enable': ['admin.cronToggle', 'request', false],
      'cron.disable': ['admin.cronToggle', 'request', true],
      'queues.clear': ['admin.clearQueue', 'request'],
      'queues.delete_job': ['admin.deleteQueuedJob', 'request'],
      'metrics.jobs': ['admin.metricsJobs', 'request'],
      'metrics.job': ['admin.metricsJob', 'request'],
      redis: ['admin.redis'],
      'jobs.locations': ['admin.jobLocations', 'request'],
      'jobs.cancel': ['admin.cancelIteration', 'request'],
    });
  });
});
