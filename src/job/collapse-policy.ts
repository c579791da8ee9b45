import { InvalidJobError } from './errors';
import type { JobPayload } from './payload';
import { MAX_TTL_SECONDS } from './time-bounds';

/**
 * The `collapse` member of a job, as Ruby Wurk writes it (`sidekiq_options collapse: { policy: :debounce, wait: 5 }`
 * reaches the payload as `{"policy":"debounce","wait":5}`):
 * - `debounce`: the last push of a burst wins. Each push replaces the pending scheduled job and moves its run time to
 *   `wait` seconds after itself, never past `max_wait` seconds after the burst's first push.
 * - `throttle`: the first push of each `slot`-second window (aligned to the Unix epoch) wins; later ones are dropped.
 */
export type CollapseOption =
  { policy: 'debounce'; wait: number; max_wait?: number } | { policy: 'throttle'; slot: number };

/** The keys each policy takes, required first; Wurk refuses a missing one and an unknown one alike. */
const POLICY_KEYS = {
  debounce: { required: ['wait'], optional: ['max_wait'] },
  throttle: { required: ['slot'], optional: [] },
} as const;

const SECONDS_RULE = `a positive number of seconds up to ${MAX_TTL_SECONDS} (ten years)`;

/**
 * Reads a declared `collapse` value, or undefined when none is declared (absent or null). Every mistake throws an
 * InvalidJobError naming the member (`collapse`, `collapse.wait`, …): a typo such as `slot` on a debounce would
 * otherwise leave the class collapsing on a default nobody chose.
 */
export function parseCollapse(declared: unknown): CollapseOption | undefined {
  if (declared === undefined || declared === null) return undefined;
  if (typeof declared !== 'object' || Array.isArray(declared)) {
    throw new InvalidJobError('collapse', "must be an object naming a policy, e.g. { policy: 'debounce', wait: 5 }");
  }
  const fields = declared as Record<string, unknown>;
  const policy = fields.policy;
  if (policy !== 'debounce' && policy !== 'throttle') {
    throw new InvalidJobError('collapse.policy', "must be 'debounce' or 'throttle'");
  }
  checkKeys(policy, Object.keys(fields));
  for (const key of Object.keys(fields)) {
    if (key !== 'policy') checkSeconds(`collapse.${key}`, fields[key], policy === 'throttle');
  }
  if (policy === 'throttle') return { policy, slot: fields.slot as number };
  const wait = fields.wait as number;
  const maxWait = fields.max_wait as number | undefined;
  // A cap under the quiet period fires every burst at first + max_wait whatever the traffic: a throttle in disguise.
  if (maxWait !== undefined && maxWait < wait) {
    throw new InvalidJobError('collapse.max_wait', `must be at least wait (${wait})`);
  }
  return maxWait === undefined ? { policy, wait } : { policy, wait, max_wait: maxWait };
}

function checkKeys(policy: keyof typeof POLICY_KEYS, given: string[]): void {
  const { required, optional } = POLICY_KEYS[policy];
  const missing = required.filter((key) => !given.includes(key));
  if (missing.length > 0) throw new InvalidJobError(`collapse.${missing[0]}`, `is required by the ${policy} policy`);
  const allowed: readonly string[] = ['policy', ...required, ...optional];
  const unknown = given.filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw new InvalidJobError(
      `collapse.${unknown[0]}`,
      `is not an option of the ${policy} policy (it takes ${[...required, ...optional].join(', ')})`,
    );
  }
}

// A slot boundary is a wall-clock landmark every producer must compute identically, so it is whole seconds.
function checkSeconds(field: string, value: unknown, whole: boolean): void {
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value > 0 &&
    value <= MAX_TTL_SECONDS &&
    (!whole || Number.isInteger(value));
  if (!ok) throw new InvalidJobError(field, `must be ${whole ? 'a whole number of seconds, ' : ''}${SECONDS_RULE}`);
}

/**
 * The collapse policy of a payload about to be pushed, or undefined for an ordinary job. Also refuses the company
 * Wurk refuses: `unique_for` (a lock drops the very re-push a debounce extends its burst with), `encrypt` (a fresh IV
 * per push means no two pushes ever share a digest) and, for a debounce, `at` (the policy owns the run time) and
 * `bid` (the job is written straight to `schedule`, never counted by its batch).
 */
export function collapsePolicyOf(payload: JobPayload): CollapseOption | undefined {
  const policy = parseCollapse(payload.get<unknown>('collapse'));
  if (!policy) return undefined;
  if (isSet(payload.get<unknown>('unique_for'))) {
    throw new InvalidJobError('collapse', 'cannot be combined with unique_for: keep one of the two');
  }
  if (isSet(payload.get<unknown>('encrypt'))) throw new InvalidJobError('collapse', 'cannot be combined with encrypt');
  if (policy.policy === 'debounce') {
    if (payload.has('at')) {
      throw new InvalidJobError(
        'collapse',
        'debounce owns the run time: it cannot be combined with at (performIn/performAt); use wait and max_wait',
      );
    }
    if (payload.has('bid')) throw new InvalidJobError('collapse', 'debounce cannot be pushed inside a batch (bid)');
  }
  return policy;
}

/** `unique_for: false` and `encrypt: false` are the documented opt-outs and read as absent. */
function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== false;
}
