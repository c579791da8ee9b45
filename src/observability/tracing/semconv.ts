/**
 * OpenTelemetry messaging attribute names (semantic conventions, incubating
 * at the time of writing), copied here rather than imported: the
 * incubating entry point of @opentelemetry/semantic-conventions may rename
 * or drop them between releases, and a span's attribute names are part of
 * what dashboards and queries depend on.
 */
export const ATTR_MESSAGING_SYSTEM = 'messaging.system';
/** OpenTelemetry attribute: the queue a job is pushed to or fetched from. */
export const ATTR_MESSAGING_DESTINATION_NAME = 'messaging.destination.name';
/** OpenTelemetry attribute: the job's jid. */
export const ATTR_MESSAGING_MESSAGE_ID = 'messaging.message.id';
/** OpenTelemetry attribute: the operation's type (`send` or `process`). */
export const ATTR_MESSAGING_OPERATION_TYPE = 'messaging.operation.type';
/** OpenTelemetry attribute: the operation's name (`publish`, `process`). */
export const ATTR_MESSAGING_OPERATION_NAME = 'messaging.operation.name';

/** The `messaging.operation.type` of a push. */
export const MESSAGING_OPERATION_TYPE_VALUE_SEND = 'send';
/** The `messaging.operation.type` of a job's run. */
export const MESSAGING_OPERATION_TYPE_VALUE_PROCESS = 'process';

/** The system's value: jobs are Sidekiq's, whichever side pushes or runs them (what Ruby's instrumentation reports). */
export const MESSAGING_SYSTEM_VALUE_SIDEKIQ = 'sidekiq';

/**
 * Ruby's opentelemetry-instrumentation-sidekiq names the class this way; the same name lets one query cover both sides.
 */
export const ATTR_SIDEKIQ_JOB_CLASS = 'messaging.sidekiq.job_class';
/** wurk's own: 1 for the first run, then retry_count + 2. */
export const ATTR_WURK_ATTEMPT = 'wurk.attempt';
