import { GatedPool, SuspectGate } from '../../src/server/suspect-gate';

/** A capsule as the gate sees it: its occupied slots, and a record of every nudge and interrupt it got. */
function pool(occupied = 0): GatedPool & { calls: string[]; occupied: number } {
  const calls: string[] = [];
  return {
    occupied,
    calls,
    startPrefetched: () => calls.push('start'),
    interruptClaim: () => calls.push('interrupt'),
  };
}

function gateOf(...pools: GatedPool[]): SuspectGate {
  const gate = new SuspectGate();
  for (const each of pools) gate.add(each);
  return gate;
}

describe('SuspectGate: a suspect runs alone in the whole process', () => {
  it('counts the jobs of every capsule as occupied', () => {
    expect(gateOf().occupied).toBe(0);
    expect(gateOf(pool(2), pool(0), pool(3)).occupied).toBe(5);
  });

  it('lets every capsule start ordinary jobs while nobody waits and no suspect runs', () => {
    const [a, b] = [pool(), pool()];
    const gate = gateOf(a, b);
    expect([gate.allows(a), gate.allows(b)]).toEqual([true, true]);
  });

  it('while a capsule waits for the process to empty, only it may start jobs, and every other capsule ends its blocked claim', () => {
    const [a, b, c] = [pool(), pool(), pool()];
    const gate = gateOf(a, b, c);
    gate.wait(a, true);
    expect([gate.allows(a), gate.allows(b), gate.allows(c)]).toEqual([true, false, false]);
    expect([a.calls, b.calls, c.calls]).toEqual([[], ['interrupt'], ['interrupt']]);
  });

  it('waiting twice interrupts the others once', () => {
    const [a, b] = [pool(), pool()];
    const gate = gateOf(a, b);
    gate.wait(a, true);
    gate.wait(a, true);
    expect(b.calls).toEqual(['interrupt']);
  });

  it('a capsule that stops waiting lets the others start again and nudges them, itself not', () => {
    const [a, b] = [pool(), pool()];
    const gate = gateOf(a, b);
    gate.wait(a, true);
    gate.wait(a, false);
    expect(gate.allows(b)).toBe(true);
    expect([a.calls, b.calls]).toEqual([[], ['interrupt', 'start']]);
  });

  it('stopping a wait that never began nudges nobody', () => {
    const [a, b] = [pool(), pool()];
    gateOf(a, b).wait(a, false);
    expect([a.calls, b.calls]).toEqual([[], []]);
  });

  it('two capsules waiting at once may each start; the third may not', () => {
    const [a, b, c] = [pool(), pool(), pool()];
    const gate = gateOf(a, b, c);
    gate.wait(a, true);
    gate.wait(b, true);
    expect([gate.allows(a), gate.allows(b), gate.allows(c)]).toEqual([true, true, false]);
    gate.wait(a, false);
    expect([gate.allows(b), gate.allows(c)]).toEqual([true, false]);
  });

  it('while a suspect runs, no capsule starts anything, its own included; its release opens every capsule and nudges the others', () => {
    const [a, b] = [pool(), pool()];
    const gate = gateOf(a, b);
    gate.isolating = true;
    expect([gate.allows(a), gate.allows(b)]).toEqual([false, false]);
    gate.release(a);
    expect(gate.isolating).toBe(false);
    expect([gate.allows(a), gate.allows(b)]).toEqual([true, true]);
    expect([a.calls, b.calls]).toEqual([[], ['start']]);
  });

  it('a slot freed nudges the other capsules only while one waits', () => {
    const [a, b, c] = [pool(), pool(), pool()];
    const gate = gateOf(a, b, c);
    gate.nudge(b);
    expect([a.calls, b.calls, c.calls]).toEqual([[], [], []]);
    gate.wait(a, true);
    gate.nudge(b);
    expect([a.calls, b.calls, c.calls]).toEqual([['start'], ['interrupt'], ['interrupt', 'start']]);
  });
});
