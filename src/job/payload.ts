import { InvalidPayloadError } from './errors';
import { objectMembers } from './raw-json';

interface Member {
  text: string;
  value?: unknown;
  decoded: boolean;
}

/** Encoded member names: a payload has a handful of distinct keys, re-encoded for every job. */
const keyTexts = new Map<string, string>();
const KEY_CACHE_LIMIT = 1024;

export function keyText(key: string): string {
  let text = keyTexts.get(key);
  if (text === undefined) {
    text = JSON.stringify(key);
    // the bound only caps the cache's memory; a key encodes the same cached or not.
    // Stryker disable next-line ConditionalExpression,EqualityOperator
    if (keyTexts.size < KEY_CACHE_LIMIT) keyTexts.set(key, text);
  }
  return text;
}

/**
 * A Sidekiq job payload that re-writes losslessly.
 *
 * Each top-level member keeps the exact JSON text it arrived with; reading a
 * member decodes it on demand, and writing one replaces only that member's
 * text. So when wurk re-files a job it did not create (retry, dead, requeue),
 * `args` and every field it did not touch come back byte for byte: a Ruby
 * float `1.0` stays `1.0`, an integer beyond 2^53 keeps its digits.
 * Member order is kept, as Ruby's Hash keeps insertion order.
 */
export class JobPayload {
  private readonly members = new Map<string, Member>();
  /** The text this payload was parsed from, while no member has changed. */
  private original: string | undefined;
  /**
   * JSON.parse's view of `original` until a member's text is first needed:
   * running a job only reads members, and finding each member's span is a
   * scan of the whole text in JavaScript (a millisecond per 100 KB).
   */
  private decoded: Record<string, unknown> | undefined;

  private constructor() {}

  /** Parses stored payload text; throws InvalidPayloadError when it is not a JSON object. */
  static parse(raw: string): JobPayload {
    let decoded: unknown;
    try {
      decoded = JSON.parse(raw);
    } catch (error) {
      throw new InvalidPayloadError(`not valid JSON (${(error as Error).message})`);
    }
    if (decoded === null || typeof decoded !== 'object' || Array.isArray(decoded)) {
      throw new InvalidPayloadError('not a JSON object');
    }
    const payload = new JobPayload();
    payload.decoded = decoded as Record<string, unknown>;
    payload.original = raw;
    return payload;
  }

  /** The members with their texts, found in `original` on first need. */
  private spans(): Map<string, Member> {
    if (this.decoded !== undefined) {
      this.decoded = undefined;
      for (const [key, text] of objectMembers(this.original as string)) this.members.set(key, { text, decoded: false });
    }
    return this.members;
  }

  /** A payload from [key, value] pairs; values are encoded with JSON.stringify. */
  static fromEntries(entries: Iterable<readonly [string, unknown]>): JobPayload {
    const payload = new JobPayload();
    for (const [key, value] of entries) payload.set(key, value);
    return payload;
  }

  /** Whether the payload has the member `key` (present with a `null` value counts). */
  has(key: string): boolean {
    if (this.decoded !== undefined) return Object.prototype.hasOwnProperty.call(this.decoded, key);
    return this.members.has(key);
  }

  /** The member `key` decoded from its JSON text (decoded once, then kept), or undefined when absent. */
  get<T = unknown>(key: string): T | undefined {
    if (this.decoded !== undefined)
      return Object.prototype.hasOwnProperty.call(this.decoded, key) ? (this.decoded[key] as T) : undefined;
    const member = this.members.get(key);
    if (!member) return undefined;
    if (!member.decoded) {
      member.value = JSON.parse(member.text);
      member.decoded = true;
    }
    return member.value as T;
  }

  /** The member's JSON text exactly as stored. */
  getRaw(key: string): string | undefined {
    return this.spans().get(key)?.text;
  }

  /** Sets a member from a JS value. An existing member keeps its position. */
  set(key: string, value: unknown): this {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`${key} cannot be encoded as JSON`);
    this.spans().set(key, { text, value, decoded: true });
    this.original = undefined;
    return this;
  }

  /** Sets a member from JSON text the caller vouches for (a float timestamp, spliced args). */
  setRaw(key: string, text: string): this {
    this.spans().set(key, { text, decoded: false });
    this.original = undefined;
    return this;
  }

  /** Removes the member `key`, if present; the others keep their order. */
  delete(key: string): this {
    if (this.spans().delete(key)) this.original = undefined;
    return this;
  }

  /** Member names in the stored text's order (Ruby's order, not JavaScript's integer-keys-first). */
  keys(): string[] {
    // From the spans, not the decoded object: JavaScript lists integer-like keys first, Ruby keeps the text's order.
    return [...this.spans().keys()];
  }

  /** Member texts in order, for building another payload from this one. */
  rawEntries(): Array<[string, string]> {
    return [...this.spans()].map(([key, member]) => [key, member.text]);
  }

  /** An independent copy: changing it leaves this payload, and its stored text, as they are. */
  clone(): JobPayload {
    const copy = new JobPayload();
    for (const [key, member] of this.spans()) copy.members.set(key, { ...member });
    copy.original = this.original;
    return copy;
  }

  get jid(): string {
    return this.get<string>('jid') ?? '';
  }

  get className(): string {
    return this.get<string>('class') ?? '';
  }

  get queue(): string {
    return this.get<string>('queue') ?? '';
  }

  get args(): unknown[] {
    return this.get<unknown[]>('args') ?? [];
  }

  /** The payload as Ruby's `JSON.generate` writes it: compact, members in order. */
  toString(): string {
    if (this.original !== undefined) return this.original;
    let out = '{';
    for (const [key, member] of this.members) {
      if (out.length > 1) out += ',';
      out += keyText(key) + ':' + member.text;
    }
    return out + '}';
  }

  /** A plain object view (lossy for numbers JS cannot hold); for logging and user code. */
  toObject(): Record<string, unknown> {
    const object: Record<string, unknown> = {};
    for (const key of this.keys()) object[key] = this.get(key);
    return object;
  }
}
