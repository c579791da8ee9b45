import { decodeEntryId } from '../job/entry-id';
import { isValidQueueName, QUEUE_NAME_RULE } from '../job/queue-name';
import { invalidRequest } from './problem';

export type IsListed = (name: string) => Promise<boolean>;

/**
 * The stored name a path segment names, when its set lists it: the segment
 * itself, else the name its `~` entry id carries (how a name no URL can
 * hold as itself is sent: `.`, `..`, one starting with `~`). A listed
 * segment wins, so a stored name that merely looks like an id still works.
 */
export async function listedName(segment: string, isListed: IsListed): Promise<string | undefined> {
  if (await isListed(segment)) return segment;
  const decoded = decodeEntryId(segment);
  return decoded !== undefined && (await isListed(decoded)) ? decoded : undefined;
}

/**
 * A queue route's name: any name the push side accepts (a queue nobody
 * pushed to is an empty queue), or one `queues` lists although it breaks
 * the rule (written by Ruby or raw Redis), plainly or as its `~` id.
 */
export async function queueParam(segment: string, isListed: IsListed): Promise<string> {
  const listed = await listedName(segment, isListed);
  if (listed !== undefined) return listed;
  if (isValidQueueName(segment)) return segment;
  throw invalidRequest(`The queue ${QUEUE_NAME_RULE}.`);
}
