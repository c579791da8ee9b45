/**
 * The admin routes' handlers: each turns a request's path and query into one admin API call and its wire form.
 *
 * Why over 400 lines: 25 short handlers share one set of paging and query rules (`page`/`count`, a repeated
 * parameter refused); kept in one class they cannot drift apart. Their wire forms are admin-json.ts's.
 */
import { HISTOGRAM_LABELS, isMetricsPeriod, METRICS_PERIODS, MetricsPeriod } from '../admin/metrics-query';
import type { JobSet } from '../admin/job-set';
import type { WurkAdmin } from '../admin/wurk-admin';
import type { FastStats, SlowStats } from '../admin/stats';
import type { PeriodicEntryInfo } from '../periodic/periodic-manager';
import type { BatchStatus } from '../batch/batch-status';
import { isValidBid } from '../batch/bid';
import { BatchNotFoundError } from '../batch/errors';
import { FlowNotFoundError } from '../flow/errors';
import { isValidFid } from '../flow/fid';
import { isValidQueueName } from '../job/queue-name';
import {
  CRON_FIELDS,
  batchDetailsJson,
  batchJson,
  batchSummaryJson,
  classMetricsJson,
  entryJson,
  jobJson,
  locationJson,
  metricsJson,
  processJson,
  signalJson,
  wireFields,
} from './admin-json';
import { flowJson } from './flow-json';
import { jidParam } from './job-validation';
import { listedName, queueParam } from './path-names';
import { pagingOf } from './paging';
import { ApiProblem, invalidRequest } from './problem';
import { ApiResponse, jsonResponse } from './response';
import type { ApiRequest } from './router';
import { SharedRead } from './shared-read';

/** The sorted sets by route segment, with the name Sidekiq gives each. */
export const SETS = { retries: 'retry', scheduled: 'schedule', dead: 'dead' } as const;
export type SetSegment = keyof typeof SETS;

/** Longest history a request may ask for; Sidekiq's Web UI offers up to 180 days. */
const MAX_HISTORY_REQUEST_DAYS = 180;
/** How long one GET /v1/stats answers every caller (the dashboard polls it every 5 s per open tab). */
const STATS_FRESH_MS = 1000;
/** A class filter scans this many entries per request at most, and hands back a cursor for the rest. */
const CLASS_SCAN_COUNT = 1000;
const PJID_SHAPE = /^[0-9a-f]{40}$/;
const SCAN_CURSOR = /^[0-9]{1,20}$/;

/** One query parameter given at most once, or undefined; a repeated one is a 400 as for paging. */
function singleParam(query: Record<string, string[]>, name: string): string | undefined {
  const values = query[name];
  if (!values) return undefined;
  if (values.length > 1) throw invalidRequest(`The query parameter ${name} may be given at most once.`);
  return values[0];
}

export interface AdminRoutesDeps {
  admin: WurkAdmin;
  /** Batches in Redis (src/batch/); absent, the batch route answers 404 batch_not_found for every bid. */
  batches?: { status(bid: string): Promise<BatchStatus> };
  periodic: {
    list(): Promise<PeriodicEntryInfo[]>;
    enable(pjid: string): Promise<void>;
    disable(pjid: string): Promise<void>;
  };
}

/** `?period=` one of Sidekiq's Metrics periods, 1h by default. */
function periodOf(query: Record<string, string[]>): MetricsPeriod {
  const period = singleParam(query, 'period') ?? '1h';
  if (!isMetricsPeriod(period))
    throw invalidRequest(`The query parameter period must be one of ${Object.keys(METRICS_PERIODS).join(', ')}.`);
  return period;
}

/**
 * docs/internals/spec/contract.md §1.10 over the admin API (`src/admin`): every read is paged and
 * bounded, every action is the admin API's atomic move of stored bytes.
 * Its routes are rows of `admin-routes.table.ts`.
 */
export class AdminRoutes {
  /** Shared by every caller within STATS_FRESH_MS: the enqueued count walks every queue (see SharedRead). */
  private readonly sharedStats: SharedRead<FastStats & SlowStats>;

  constructor(private readonly deps: AdminRoutesDeps) {
    this.sharedStats = new SharedRead(() => deps.admin.stats.all(), STATS_FRESH_MS);
  }

  async stats(): Promise<ApiResponse> {
    const stats = await this.sharedStats.get();
    return jsonResponse(200, {
      processed: stats.processed,
      failed: stats.failed,
      busy: stats.workersSize,
      processes: stats.processesSize,
      enqueued: stats.enqueued,
      scheduled: stats.scheduledSize,
      retries: stats.retrySize,
      dead: stats.deadSize,
      default_latency: stats.defaultQueueLatency,
    });
  }

  /**
   * The contract's `{queues}` (largest first), paged: `page` and `count` up
   * to QUEUE_LIST_READ_CAP queues, beyond it a walk by `cursor` ("0" = done),
   * so no call reads every queue of a Redis that holds 50,000.
   */
  async queues(request: ApiRequest): Promise<ApiResponse> {
    const { page, count } = pagingOf(request.query);
    const cursor = singleParam(request.query, 'cursor');
    if (cursor !== undefined && !SCAN_CURSOR.test(cursor))
      throw invalidRequest('The query parameter cursor must be a scan cursor.');
    const list = await this.deps.admin.queues.page({ page, count, cursor });
    return jsonResponse(200, { total: list.total, page: list.page, count, cursor: list.cursor, queues: list.items });
  }

  /** Never 404: a queue nobody pushed to is an empty queue. */
  async queue(request: ApiRequest): Promise<ApiResponse> {
    const { page, count } = pagingOf(request.query);
    const queue = await this.queueOf(request);
    const [summary, jobs] = await Promise.all([queue.summary(), queue.page({ page, count })]);
    return jsonResponse(200, { ...summary, total: jobs.total, page, count, jobs: jobs.items.map(jobJson) });
  }

  async pause(request: ApiRequest, paused: boolean): Promise<ApiResponse> {
    const queue = await this.queueOf(request);
    await (paused ? queue.pause() : queue.resume());
    return jsonResponse(200, { name: queue.name, paused });
  }

  private async queueOf(request: ApiRequest) {
    const queues = this.deps.admin.queues;
    return queues.queue(await queueParam(request.params.name, (name) => queues.has(name)));
  }

  async set(request: ApiRequest, segment: SetSegment): Promise<ApiResponse> {
    const jid = singleParam(request.query, 'jid');
    const className = singleParam(request.query, 'class');
    // Checked before a search too, which ignores them: a malformed page is a 400 on every listing
    // (docs/internals/spec/contract.md §1.10).
    const { page, count } = pagingOf(request.query);
    if (jid !== undefined || className !== undefined)
      return this.search(segment, jid, className, singleParam(request.query, 'cursor'));
    const list = await this.jobSet(segment).page({ page, count });
    return jsonResponse(200, { name: SETS[segment], total: list.total, page, count, jobs: list.items.map(entryJson) });
  }

  async entryAction(request: ApiRequest, segment: SetSegment, action: 'run' | 'kill' | 'delete'): Promise<ApiResponse> {
    const jid = jidParam(request.params.jid);
    const set = this.jobSet(segment);
    const entry = await set.find(jid);
    const done = entry
      ? await (action === 'run' ? set.runNow(entry) : action === 'kill' ? set.kill(entry) : set.delete(entry))
      : false;
    // Gone between the find and the move (promoted, retried, deleted elsewhere): the honest answer is not found.
    if (!done) throw new ApiProblem('job_not_found', `No entry of ${SETS[segment]} has jid ${jid}.`, { jid });
    return jsonResponse(200, { jid, set: SETS[segment], action });
  }

  /** The limiter registry, by name; `?filter=` (at most 255 characters) keeps names containing it. */
  async limiters(request: ApiRequest): Promise<ApiResponse> {
    const { page, count } = pagingOf(request.query);
    const filter = singleParam(request.query, 'filter') ?? '';
    if (filter.length > 255) throw invalidRequest('The query parameter filter must be at most 255 characters.');
    const list = await this.deps.admin.limiters.list({ page, count, filter });
    return jsonResponse(200, {
      total: list.total,
      page,
      count,
      filter,
      limiters: list.items.map((info) => ({
        name: info.name,
        kind: info.kind,
        limits: info.limits ? { size: info.limits.size, interval_seconds: info.limits.intervalSeconds } : null,
        used: info.used ?? null,
        last_used: info.lastUsed ?? null,
      })),
    });
  }

  async processes(request: ApiRequest): Promise<ApiResponse> {
    const { page, count } = pagingOf(request.query);
    const list = await this.deps.admin.processes.list({ page, count });
    const now = Date.now() / 1000;
    return jsonResponse(200, {
      total: list.total,
      page,
      count,
      processes: list.items.map((record) => processJson(record, now)),
    });
  }

  async process(request: ApiRequest): Promise<ApiResponse> {
    const identity = await this.identityOf(request);
    const record = await this.deps.admin.processes.get(identity);
    if (!record) throw processNotFound(identity);
    return jsonResponse(200, processJson(record, Date.now() / 1000));
  }

  /**
   * `all` signals every live process (embedded ones are skipped and listed); one identity must be live and signalable.
   */
  async signal(request: ApiRequest, signal: 'quiet' | 'stop'): Promise<ApiResponse> {
    const processes = this.deps.admin.processes;
    if (request.params.identity === 'all')
      return jsonResponse(200, signalJson(await (signal === 'quiet' ? processes.quietAll() : processes.stopAll())));
    const identity = await this.identityOf(request);
    const record = await processes.get(identity);
    if (!record) throw processNotFound(identity);
    if (record.embedded) {
      throw new ApiProblem(
        'process_not_signalable',
        `Process ${identity} is embedded in another app and takes no remote ${signal}.`,
        { identity },
      );
    }
    return jsonResponse(
      200,
      signalJson(await (signal === 'quiet' ? processes.quiet(identity) : processes.stop(identity))),
    );
  }

  /** Only an identity `processes` lists is ever looked up: any other names no process, and no key is read for it. */
  private async identityOf(request: ApiRequest): Promise<string> {
    const processes = this.deps.admin.processes;
    const segment = request.params.identity;
    const identity = await listedName(segment, (name) => processes.has(name));
    if (identity !== undefined) return identity;
    if (!isValidQueueName(segment))
      throw invalidRequest('The identity must be 1 to 255 characters without whitespace or control characters.');
    throw processNotFound(segment);
  }

  async busy(request: ApiRequest): Promise<ApiResponse> {
    const { page, count } = pagingOf(request.query);
    const list = await this.deps.admin.work.list({ page, count });
    const busy = list.items.map((work) => ({
      process: work.process,
      tid: work.tid,
      queue: work.queue ?? null,
      run_at: work.runAt ?? null,
      job: jobJson(work.job),
    }));
    return jsonResponse(200, { total: list.total, page, count, busy });
  }

  async cron(): Promise<ApiResponse> {
    const entries = await this.deps.periodic.list();
    return jsonResponse(200, { entries: entries.map((entry) => wireFields(entry, CRON_FIELDS)) });
  }

  /**
   * 200 with Redis's round trip and the fleet's processes; 503, same shape with `status: "down"`, when Redis does not
   * answer or no process is live.
   */
  async health(): Promise<ApiResponse> {
    const report = await this.deps.admin.health.check();
    return jsonResponse(report.status === 'ok' ? 200 : 503, report);
  }

  private jobSet(segment: SetSegment): JobSet {
    const { admin } = this.deps;
    return segment === 'retries' ? admin.retries : segment === 'scheduled' ? admin.scheduled : admin.dead;
  }

  /**
   * `?jid=` finds one entry (a scan, as Sidekiq's find_job); `?class=` one
   * bounded scan step of entries of that class, with `cursor` for the next
   * step ("0" when the scan is done). Never a whole set in memory.
   */
  private async search(
    segment: SetSegment,
    jid: string | undefined,
    className: string | undefined,
    cursor: string | undefined,
  ): Promise<ApiResponse> {
    const set = this.jobSet(segment);
    if (jid !== undefined) {
      const entry = await set.find(jidParam(jid));
      const jobs = entry && (className === undefined || entry.displayClass === className) ? [entry] : [];
      return jsonResponse(200, {
        name: SETS[segment],
        total: jobs.length,
        page: 0,
        count: jobs.length,
        jobs: jobs.map(entryJson),
      });
    }
    if (!className || className.length > 255)
      throw invalidRequest('The query parameter class must be 1 to 255 characters.');
    if (cursor !== undefined && !SCAN_CURSOR.test(cursor))
      throw invalidRequest('The query parameter cursor must be a scan cursor.');
    const step = await set.filterByClass(className, { cursor, count: CLASS_SCAN_COUNT });
    return jsonResponse(200, {
      name: SETS[segment],
      total: step.items.length,
      page: 0,
      count: step.items.length,
      cursor: step.cursor,
      jobs: step.items.map(entryJson),
    });
  }

  /** Run now, kill or delete every entry of a set, as far as it reached when the action began (the admin API's cap). */
  async setAction(segment: SetSegment, action: 'run_all' | 'kill_all' | 'clear'): Promise<ApiResponse> {
    const set = this.jobSet(segment);
    const count = await (action === 'run_all' ? set.runAllNow() : action === 'kill_all' ? set.killAll() : set.clear());
    return jsonResponse(200, { set: SETS[segment], action, count });
  }

  /** Processed and failed per UTC day, newest first (Sidekiq's Stats::History), `?days=` 1..180, default 30. */
  async history(request: ApiRequest): Promise<ApiResponse> {
    const days = singleParam(request.query, 'days') ?? '30';
    if (!/^[0-9]{1,4}$/.test(days)) throw invalidRequest('The query parameter days must be an integer.');
    // No floor here: Stats.history reads 0 as its one-day minimum.
    return jsonResponse(200, {
      days: await this.deps.admin.stats.history(Math.min(MAX_HISTORY_REQUEST_DAYS, Number(days))),
    });
  }

  /** Drops a queue's jobs and its entry in `queues` (Sidekiq's Queue#clear). */
  async clearQueue(request: ApiRequest): Promise<ApiResponse> {
    const queue = await this.queueOf(request);
    return jsonResponse(200, { name: queue.name, action: 'clear', count: await queue.clear() });
  }

  /** Removes one waiting job by its stored bytes (LREM, Sidekiq's JobRecord#delete), found by jid. */
  async deleteQueuedJob(request: ApiRequest): Promise<ApiResponse> {
    const queue = await this.queueOf(request);
    const jid = jidParam(request.params.jid);
    if (!(await queue.deleteByJid(jid)))
      throw new ApiProblem('job_not_found', `No job in queue ${queue.name} has jid ${jid}.`, { jid });
    return jsonResponse(200, { jid, queue: queue.name, action: 'delete' });
  }

  /** Every class that ran in the period, busiest first (Sidekiq's Metrics page); `?substr=` filters by name. */
  async metricsJobs(request: ApiRequest): Promise<ApiResponse> {
    const period = periodOf(request.query);
    const classFilter = singleParam(request.query, 'substr');
    if (classFilter !== undefined && classFilter.length > 255)
      throw invalidRequest('The query parameter substr must be at most 255 characters.');
    const result = await this.deps.admin.metrics.topJobs(period, { classFilter: classFilter || undefined });
    return jsonResponse(200, { ...metricsJson(result), jobs: result.jobs.map(classMetricsJson) });
  }

  /** One class's series and, up to 8 hours, its run-time histogram (null beyond: histograms live 8 hours). */
  async metricsJob(request: ApiRequest): Promise<ApiResponse> {
    const className = request.params.class;
    if (className.length > 255) throw invalidRequest('The class must be 1 to 255 characters.');
    const result = await this.deps.admin.metrics.forJob(className, periodOf(request.query));
    return jsonResponse(200, {
      ...metricsJson(result),
      job: classMetricsJson(result.job),
      histogram: result.histogram && { labels: HISTOGRAM_LABELS, counts: result.histogram },
    });
  }

  /** Redis's version, mode, uptime, clients and memory (Sidekiq's dashboard footer); `error` says why they are null. */
  async redis(): Promise<ApiResponse> {
    const facts = await this.deps.admin.redisInfo.facts();
    return jsonResponse(
      200,
      wireFields(facts, [
        'version',
        'mode',
        'uptimeInDays',
        'connectedClients',
        'usedMemoryHuman',
        'usedMemoryPeakHuman',
        'error',
      ]),
    );
  }

  /** Where a jid is now; 200 with no location when it is nowhere (finished, or never pushed), never a dead end. */
  async jobLocations(request: ApiRequest): Promise<ApiResponse> {
    const jid = jidParam(request.params.jid);
    const [found, iteration] = await Promise.all([this.deps.admin.jobs.locate(jid), this.deps.admin.iteration(jid)]);
    return jsonResponse(200, {
      jid: found.jid,
      locations: found.locations.map(locationJson),
      status: found.status,
      iteration: iteration && wireFields(iteration, ['executions', 'cursor', 'runtime', 'cancelledAt']),
    });
  }

  /** Marks an iterable job cancelled (`it-<jid>`); 200 whether or not the job still runs, as Sidekiq's `cancel!`. */
  async cancelIteration(request: ApiRequest): Promise<ApiResponse> {
    const jid = jidParam(request.params.jid);
    const cancelledAt = await this.deps.admin.cancelIteration(jid);
    return jsonResponse(200, { jid, cancelled_at: cancelledAt });
  }

  /**
   * One batch's counters, jids and failures, whichever process wrote it, with its tags, callbacks (and which fired) and
   * failing jids; 404 batch_not_found when there is none.
   */
  async batch(request: ApiRequest): Promise<ApiResponse> {
    const bid = await this.bidOf(request);
    try {
      if (!this.deps.batches) throw new BatchNotFoundError(bid);
      const status = await this.deps.batches.status(bid);
      const details = await this.deps.admin.batches.details(status);
      return jsonResponse(200, { ...batchJson(status), ...batchDetailsJson(details) });
    } catch (error) {
      if (error instanceof BatchNotFoundError) throw batchNotFound(bid);
      throw error;
    }
  }

  /**
   * Sidekiq Pro's BatchSet as a page: newest first, `?dead=true` the dead ones (its Batch::DeadSet, latest death
   * first), or `?tag=` the batches of one tag (beyond 1,000 of them one bounded scan step a call, with the `cursor` of
   * the next); an entry whose batch expired is skipped and dropped.
   */
  async batches(request: ApiRequest): Promise<ApiResponse> {
    const { page, count } = pagingOf(request.query);
    const tag = singleParam(request.query, 'tag') || undefined;
    if (tag !== undefined && tag.length > 255)
      throw invalidRequest('The query parameter tag must be at most 255 characters.');
    const cursor = singleParam(request.query, 'cursor');
    if (cursor !== undefined && (tag === undefined || !SCAN_CURSOR.test(cursor)))
      throw invalidRequest('The query parameter cursor must be a scan cursor, and is given with tag only.');
    const deadParam = singleParam(request.query, 'dead');
    if (deadParam !== undefined && deadParam !== 'true' && deadParam !== 'false')
      throw invalidRequest('The query parameter dead must be true or false.');
    const dead = deadParam === 'true';
    if (dead && tag !== undefined) throw invalidRequest('The query parameters dead and tag are not given together.');
    const list = await this.deps.admin.batches.page({ page, count, tag, cursor, dead });
    return jsonResponse(200, {
      total: list.total,
      page: list.page,
      count,
      tag: list.tag,
      dead: list.dead,
      cursor: list.cursor,
      batches: list.items.map(batchSummaryJson),
    });
  }

  /** Sidekiq Pro's Status#delete: the batch's keys and index entries, in one step; its jobs are left where they are. */
  async deleteBatch(request: ApiRequest): Promise<ApiResponse> {
    const bid = await this.bidOf(request);
    if (!(await this.deps.admin.batches.delete(bid))) throw batchNotFound(bid);
    return jsonResponse(200, { bid, action: 'delete' });
  }

  /**
   * A batch route's bid: one of the rule's (any bid the contract accepts), or one `batches` lists although it breaks
   * the rule (written by Ruby or raw Redis), plainly or as its `~` id; else 400.
   */
  private async bidOf(request: ApiRequest): Promise<string> {
    const segment = request.params.bid;
    if (isValidBid(segment)) return segment;
    const batches = this.deps.admin.batches;
    const listed = await listedName(segment, (bid) => batches.has(bid));
    if (listed !== undefined) return listed;
    throw invalidRequest('The bid must be 1 to 255 characters of A-Z, a-z, 0-9, _ and -.');
  }

  /** One flow with its nodes, whichever process wrote it; 404 flow_not_found when there is none (or it expired). */
  flow(request: ApiRequest): Promise<ApiResponse> {
    return this.withFlow(request, async (fid) => jsonResponse(200, flowJson(await this.deps.admin.flows.find(fid))));
  }

  /** Abandons a running or failed flow; `abandoned: false` when it was already settled or abandoned (nothing done). */
  flowAbandon(request: ApiRequest): Promise<ApiResponse> {
    return this.withFlow(request, async (fid) => {
      const abandoned = await this.deps.admin.flows.abandon(fid);
      const { state } = await this.deps.admin.flows.find(fid);
      return jsonResponse(200, { fid, abandoned, state });
    });
  }

  private async withFlow(request: ApiRequest, act: (fid: string) => Promise<ApiResponse>): Promise<ApiResponse> {
    const fid = request.params.fid;
    if (!isValidFid(fid)) throw invalidRequest('The fid must be 1 to 255 characters of A-Z, a-z, 0-9, _ and -.');
    try {
      return await act(fid);
    } catch (error) {
      if (error instanceof FlowNotFoundError)
        throw new ApiProblem('flow_not_found', `No flow has fid ${fid}.`, { fid });
      throw error;
    }
  }

  /** Enables or disables a periodic entry for every process (the `periodic:disabled` set). */
  async cronToggle(request: ApiRequest, disabled: boolean): Promise<ApiResponse> {
    const pjid = request.params.pjid;
    if (!PJID_SHAPE.test(pjid)) throw invalidRequest('The pjid must be 40 lowercase hex characters.');
    const known = (await this.deps.periodic.list()).some((entry) => entry.pjid === pjid);
    if (!known) throw new ApiProblem('not_found', `No periodic entry has pjid ${pjid}.`, { pjid });
    await (disabled ? this.deps.periodic.disable(pjid) : this.deps.periodic.enable(pjid));
    return jsonResponse(200, { pjid, disabled });
  }
}

function batchNotFound(bid: string): ApiProblem {
  return new ApiProblem('batch_not_found', `No batch has bid ${bid}.`, { bid });
}

function processNotFound(identity: string): ApiProblem {
  return new ApiProblem('process_not_found', `No live process has identity ${identity}.`, { identity });
}
