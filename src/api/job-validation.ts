import { isValidJid, JID_RULE, jidOfEntryId } from '../job/jid';
import { MAX_NESTING } from '../job/json-native';
import { JobPayload } from '../job/payload';
import { arrayElements, nestingDepth, objectMembers } from '../job/raw-json';
import type { ResolvedApiOptions } from './api-options';
import { hasScope, Principal } from './auth';
import { ApiProblem, invalidRequest } from './problem';

/**
 * Top-level keys a producer may send (docs/internals/spec/contract.md §1.6); server-stamped ones are unknown on
 * purpose.
 */
const JOB_KEYS = new Set([
  'class',
  'args',
  'queue',
  'at',
  'retry',
  'jid',
  'backtrace',
  'tags',
  'dead',
  'retry_for',
  'retry_queue',
  'expires_in',
  'track',
  'timeout',
  'deadline',
  'encrypt',
  'unique_for',
  'unique_until',
  'collapse',
  'log_level',
  'locale',
  'wrapped',
]);
const BULK_KEYS = new Set([...JOB_KEYS, 'batch_size', 'spread_interval']);

const CLASS_NAME = /^[A-Z][A-Za-z0-9_]*(::[A-Z][A-Za-z0-9_]*)*$/;
const MAX_CLASS_LENGTH = 255;
const UNKNOWN_KEYS_LISTED = 10;
const UNKNOWN_KEY_CHARS = 40;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The push rule (job/jid.ts), for body jids and the jids of search queries. */
export function validJid(jid: string): string {
  if (!isValidJid(jid)) throw invalidRequest(`The jid ${JID_RULE}.`);
  return jid;
}

/**
 * A jid in a path: a valid jid, or the `~` entry id the listings hand out
 * for one that is not (written by Ruby or raw Redis), so such a job can
 * still be acted on, through its own route only.
 */
export function jidParam(id: string): string {
  const jid = jidOfEntryId(id);
  if (jid === undefined) throw invalidRequest(`The jid ${JID_RULE}.`);
  return jid;
}

function decodeObject(raw: Buffer): string {
  let text: string;
  let value: unknown;
  try {
    // Invalid UTF-8 is refused rather than replaced: the bytes as sent are what reaches Redis.
    text = utf8.decode(raw);
    value = JSON.parse(text);
  } catch {
    // Never echo the parser's message: it quotes the body back.
    throw invalidRequest('The request body is not valid JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw invalidRequest('The request body must be a JSON object.');
  return text;
}

function checkKeys(payload: JobPayload, allowed: Set<string>): void {
  const unknown = payload.keys().filter((key) => !allowed.has(key));
  if (unknown.length === 0) return;
  const listed = unknown
    .sort()
    .slice(0, UNKNOWN_KEYS_LISTED)
    .map((key) => key.slice(0, UNKNOWN_KEY_CHARS));
  throw invalidRequest(`Unknown job keys: ${listed.join(', ')}.`, { unknown_keys: listed });
}

function checkJid(payload: JobPayload): void {
  if (!payload.has('jid')) return;
  const jid = payload.get('jid');
  if (typeof jid !== 'string') throw invalidRequest(`The jid must be a string of ${JID_RULE.replace('must be ', '')}.`);
  validJid(jid);
}

function checkClass(payload: JobPayload): void {
  if (!payload.has('class')) return;
  const name = payload.get('class');
  if (typeof name !== 'string' || name.length > MAX_CLASS_LENGTH || !CLASS_NAME.test(name)) {
    throw invalidRequest(
      `The class must be a constant name such as HardWorker or Billing::Invoice, at most ${MAX_CLASS_LENGTH} characters.`,
    );
  }
}

/**
 * Steps 3–5 of docs/internals/spec/contract.md §1.7 on the bytes as sent: a JSON object, known
 * keys, well-formed jid and class. The result is the body itself, parsed
 * losslessly, never a rebuilt hash.
 */
export function parseJobBody(raw: Buffer, bulk: boolean): JobPayload {
  const text = decodeObject(raw);
  const payload = JobPayload.parse(text);
  checkKeys(payload, bulk ? BULK_KEYS : JOB_KEYS);
  // Ruby's parser refuses deeper documents, so such a job would be enqueued and then fail on every server.
  if (nestingDepth(text) > MAX_NESTING)
    throw invalidRequest(`The request body nests deeper than ${MAX_NESTING} levels.`);
  checkJid(payload);
  checkClass(payload);
  return payload;
}

/** Step 6: the class allow-list. Unset = admin tokens only, any class; a list binds every token; `any` = off. */
export function checkClassAllowed(
  payload: JobPayload,
  principal: Principal,
  classes: ResolvedApiOptions['enqueueClasses'],
): void {
  if (classes === 'any') return;
  const name = payload.get<string>('class');
  const allowed = classes === undefined ? hasScope(principal, 'admin') : name !== undefined && classes.includes(name);
  if (allowed) return;
  const detail =
    classes === undefined
      ? 'Only an admin token may enqueue while no class allow-list is configured.'
      : `The class ${name ?? '(none)'} is not on the list of classes this API may enqueue.`;
  throw new ApiProblem('class_not_allowed', detail, { job_class: name ?? null });
}

/**
 * The token's queue allow-list (`api.tokens[].queues`), wurk's addition to
 * step 6: the job's queue (`default` when unset) and any `retry_queue` must
 * be on it. Refusal 403 `queue_not_allowed` naming the queue.
 */
export function checkQueueAllowed(payload: JobPayload, principal: Principal): void {
  const allowed = principal.queues;
  if (!allowed) return;
  for (const field of ['queue', 'retry_queue']) {
    const value = payload.get<unknown>(field) ?? (field === 'queue' ? 'default' : undefined);
    if (value === undefined || (typeof value === 'string' && allowed.has(value))) continue;
    const queue = typeof value === 'string' ? value : JSON.stringify(value);
    throw new ApiProblem('queue_not_allowed', `This token may not push to queue ${queue} (${field}).`, {
      queue: value,
      field,
    });
  }
}

function argsTooLarge(maxBytes: number, jobIndex?: number): ApiProblem {
  // An undefined job_index (a single job) is left out of the JSON document.
  const extensions = { max_bytes: maxBytes, job_index: jobIndex };
  const which = jobIndex === undefined ? 'The job arguments' : `The arguments of job ${jobIndex}`;
  return new ApiProblem('payload_too_large', `${which} may not exceed ${maxBytes} bytes of JSON.`, extensions);
}

/** Step 7: the JSON size of `args` (of each job's args for bulk). Shapes are left to the client's own checks. */
export function checkArgsSize(payload: JobPayload, bulk: boolean, maxBytes: number): void {
  const args = payload.getRaw('args');
  if (args === undefined || !args.startsWith('[')) return;
  if (!bulk) {
    if (Buffer.byteLength(args) > maxBytes) throw argsTooLarge(maxBytes);
    return;
  }
  arrayElements(args).forEach((element, index) => {
    if (Buffer.byteLength(element) > maxBytes) throw argsTooLarge(maxBytes, index);
  });
}

/**
 * docs/internals/spec/contract.md §1.7.8 lists a non-boolean `track` among the client's refusals,
 * but the shared client accepts any value and reads it by Ruby truthiness;
 * the API refuses it so an HTTP producer gets Wurk's 400.
 */
export function checkTrack(payload: JobPayload): void {
  if (payload.has('track') && typeof payload.get('track') !== 'boolean')
    throw invalidRequest('track must be true or false.');
}

/**
 * True when a JSON number text does not survive as a finite double: it
 * overflows to ±Infinity (`1e400`), or underflows to 0 although its digits
 * are not all zero (`1e-400`). Redis refuses such a score outright, and a
 * Ruby Sidekiq that reads `Infinity` into a job cannot write it back when
 * the job fails, losing it.
 */
function lostAsDouble(number: string): boolean {
  const value = Number(number);
  if (!Number.isFinite(value)) return true;
  // the exponent only has to go; any text without a digit 1-9 in its place does as well.
  // Stryker disable next-line StringLiteral
  return value === 0 && /[1-9]/.test(number.replace(/[eE].*/, ''));
}

/** Only a number with an exponent or hundreds of digits can leave a double's range; most bodies skip the walk. */
// a looser pre-check only walks more bodies (the walk decides); a stricter one is what the tests catch.
// Stryker disable next-line Regex
const MAYBE_OUT_OF_RANGE = /[0-9][eE][+-]?[0-9]|[0-9.]{300}/;

function unstorableNumberAt(text: string, path: string): string | undefined {
  const first = text[0];
  if (first === '[') {
    const elements = arrayElements(text);
    for (let index = 0; index < elements.length; index++) {
      const found = unstorableNumberAt(elements[index], `${path}[${index}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (first === '{') {
    for (const [key, value] of objectMembers(text)) {
      // path is never empty: the walk starts at a top-level member, named by its key.
      const found = unstorableNumberAt(value, `${path}.${key}`);
      if (found) return found;
    }
    return undefined;
  }
  return (first === '-' || (first >= '0' && first <= '9')) && lostAsDouble(text) ? path : undefined;
}

/**
 * Every number of the body (`at`, `args` and the rest) must be one Redis
 * can score and Ruby can write back: refused here, naming the field (e.g.
 * `args[1].amount`), before anything reaches Redis.
 */
export function checkStorableNumbers(payload: JobPayload): void {
  for (const [key, value] of payload.rawEntries()) {
    // a shortcut only; the walk finds nothing in a value the pattern passes over
    // Stryker disable next-line ConditionalExpression
    if (!MAYBE_OUT_OF_RANGE.test(value)) continue;
    const field = unstorableNumberAt(value, key);
    if (field)
      throw invalidRequest(`${field} must be a number a double can hold: finite, and not so small it rounds to 0.`, {
        field,
      });
  }
}
