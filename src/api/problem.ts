/**
 * The problem types of docs/internals/spec/contract.md §1.5: the slug is the stable `type`; renaming one breaks
 * clients.
 */
export const PROBLEM_TYPES = {
  not_found: { status: 404, title: 'Not Found' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed' },
  unsupported_api_version: { status: 404, title: 'Unsupported API Version' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  insufficient_scope: { status: 403, title: 'Insufficient Scope' },
  invalid_request: { status: 400, title: 'Invalid Request' },
  payload_too_large: { status: 413, title: 'Payload Too Large' },
  class_not_allowed: { status: 403, title: 'Class Not Allowed' },
  queue_not_allowed: { status: 403, title: 'Queue Not Allowed' },
  job_not_found: { status: 404, title: 'Job Not Found' },
  process_not_found: { status: 404, title: 'Process Not Found' },
  batch_not_found: { status: 404, title: 'Batch Not Found' },
  flow_not_found: { status: 404, title: 'Flow Not Found' },
  process_not_signalable: { status: 409, title: 'Process Not Signalable' },
  idempotency_key_reused: { status: 409, title: 'Idempotency Key Reused' },
  request_in_progress: { status: 409, title: 'Request In Progress' },
  read_only: { status: 403, title: 'Read-Only Mode' },
  rate_limited: { status: 429, title: 'Too Many Requests' },
  internal_error: { status: 500, title: 'Internal Server Error' },
} as const;

export type ProblemType = keyof typeof PROBLEM_TYPES;

/**
 * A refusal on its way to the client. Thrown by any check, rendered once by
 * the dispatcher, so a new rejection never needs a new rendering branch.
 */
export class ApiProblem extends Error {
  constructor(
    readonly type: ProblemType,
    readonly detail: string,
    readonly extensions: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(`${type}: ${detail}`);
    this.name = 'ApiProblem';
  }

  get status(): number {
    return PROBLEM_TYPES[this.type].status;
  }

  /** The document, members in the contract's order: type, title, status, detail, instance, extensions. */
  body(instance: string): Record<string, unknown> {
    const { status, title } = PROBLEM_TYPES[this.type];
    return { type: this.type, title, status, detail: this.detail, instance, ...this.extensions };
  }
}

export function invalidRequest(detail: string, extensions: Record<string, unknown> = {}): ApiProblem {
  return new ApiProblem('invalid_request', detail, extensions);
}
