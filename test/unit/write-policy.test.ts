import { writePolicyFor } from '../../src/redis/durable-write';

describe('the write policy from the module options', () => {
  it('asks one replica by default under Sentinel only, within 1 s a WAIT and 5 s in all', () => {
    expect(writePolicyFor(true, {})).toEqual({ replicas: 1, waitTimeoutMs: 1000, deadlineMs: 5000 });
    expect(writePolicyFor(false, {})).toEqual({ replicas: 0, waitTimeoutMs: 1000, deadlineMs: 5000 });
    expect(writePolicyFor(false, { waitForReplicas: 2, replicaTimeout: 0.25, writeTimeout: 2 })).toEqual({
      replicas: 2,
      waitTimeoutMs: 250,
      deadlineMs: 2000,
    });
  });

  it('never asks a WAIT of 0 ms, which Redis reads as "wait forever": a sub-millisecond replicaTimeout is 1 ms', () => {
    expect(writePolicyFor(true, { replicaTimeout: 0.0004 }).waitTimeoutMs).toBe(1);
  });
});
