/** Injection tokens of the Nest layer. */
export const WURK_RESOLVED_OPTIONS = Symbol('wurk:resolved-options');
/** The client's push boundary (a PushTransport): Redis in the real module, memory in the testing module. */
export const WURK_PUSH_TRANSPORT = Symbol('wurk:push-transport');
/** Where BatchService keeps batches: BatchStore over Redis by default, memory in the testing module. */
export const WURK_BATCH_STORE = Symbol('wurk:batch-store');
