import { Injectable } from '@nestjs/common';
import { RedisConnections } from '../redis/connections';
import { StatusStore } from '../status/status-store';

/** Per-job state, progress and result of tracked jobs (`@Worker({ track: true })`). */
@Injectable()
export class StatusService extends StatusStore {
  constructor(connections: RedisConnections) {
    super(connections.command);
  }
}
