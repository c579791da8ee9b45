import { newJid } from './jid';
import { floatText, nowMs } from './time';

/** Sidekiq Pro keeps an unfinished batch 30 days after its last change, */
export const BATCH_EXPIRY_SECONDS = 30 * 24 * 3600;
/** and a succeeded one a day. */
export const BATCH_LINGER_SECONDS = 24 * 3600;

/**
 * What the batch rules (lua/include/batch_rules.lua) take besides the outcome, for one call, in the order
 * lua/fetch.lua's ARGV takes them: the keys' expiry, now (float epoch seconds, the callback jobs' created_at), the
 * 20 hex characters a callback job's jid starts with (four more count the callbacks the call pushes), and how long a
 * succeeded batch's keys linger. Built here for both scripts that run the rules, so they cannot drift apart.
 */
export interface BatchRulesArgs {
  expiry: number;
  now: string;
  callbackJidPrefix: string;
  linger: number;
}

export function batchRulesArgs(): BatchRulesArgs {
  return {
    expiry: BATCH_EXPIRY_SECONDS,
    now: floatText(nowMs() / 1000),
    callbackJidPrefix: newJid().slice(0, 20),
    linger: BATCH_LINGER_SECONDS,
  };
}
