import { assertRedisServerInstalled } from './redis-server';

/** Fails the run at once, with install instructions, when redis-server is missing. */
export default function globalSetup(): void {
  assertRedisServerInstalled();
}
