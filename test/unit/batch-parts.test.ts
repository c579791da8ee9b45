import { checkDefinition } from '../../src/batch/batch-definition';
import { toBatchStatus } from '../../src/batch/batch-status';
import { isValidBid, newBid } from '../../src/batch/bid';
import { InvalidBatchError } from '../../src/batch/errors';

describe('batch ids', () => {
  it('are 10 random bytes in URL-safe base64 without padding, as Sidekiq Pro makes them', () => {
    const bids = new Set(Array.from({ length: 200 }, newBid));
    expect(bids.size).toBe(200);
    for (const bid of bids) {
      expect(bid).toMatch(/^[A-Za-z0-9_-]{14}$/);
      expect(Buffer.from(bid, 'base64url')).toHaveLength(10);
    }
  });

  it('accept what the HTTP contract accepts for ids, nothing else', () => {
    expect(isValidBid('abc_DEF-123')).toBe(true);
    expect(isValidBid('has space')).toBe(false);
    expect(isValidBid('')).toBe(false);
    expect(isValidBid('a'.repeat(256))).toBe(false);
    expect(isValidBid(7)).toBe(false);
  });
});

describe('checkDefinition', () => {
  const fieldOf = (definition: object): string | undefined => {
    try {
      checkDefinition(definition as never);
      return undefined;
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidBatchError);
      return (error as InvalidBatchError).field;
    }
  };

  it('names the field at fault', () => {
    expect(fieldOf({ description: 3 })).toBe('description');
    expect(fieldOf({ callbackQueue: 'has space' })).toBe('callbackQueue');
    expect(fieldOf({ parentBid: 'has space' })).toBe('parentBid');
    expect(fieldOf({ parent_bid: 'abc' })).toBe('parent_bid');
    expect(fieldOf({ callbacks: {} })).toBe('callbacks');
    expect(
      fieldOf({
        callbacks: [
          { event: 'success', target: 'A' },
          { event: 'done', target: 'A' },
        ],
      }),
    ).toBe('callbacks[1].event');
    expect(fieldOf({ callbacks: [{ event: 'death', target: '' }] })).toBe('callbacks[0].target');
    expect(fieldOf({ callbacks: [{ event: 'complete', target: 'A', options: [1] }] })).toBe('callbacks[0].options');
  });

  it('accepts a full definition and an empty one', () => {
    expect(fieldOf({})).toBeUndefined();
    expect(fieldOf({ parentBid: 'AbC_12-xyz' })).toBeUndefined();
    expect(
      fieldOf({ description: 'd', callbackQueue: 'q', callbacks: [{ event: 'success', target: 'A', options: {} }] }),
    ).toBeUndefined();
  });
});

describe('toBatchStatus', () => {
  const reads = (hash: Record<string, string>, extra: object = {}) => ({
    hash,
    jids: [],
    died: [],
    failInfo: {},
    markers: { complete: false, success: false, death: false },
    ...extra,
  });

  it('reads leniently: missing counters are 0, a millisecond created_at is seconds, hold members are no jobs', () => {
    const status = toBatchStatus(
      'b',
      reads({ created_at: '1790000000250', total: 'x' }, { jids: ['hold-1', 'hold:0a1b', 'j2'] }),
    );
    expect(status).toMatchObject({ total: 0, pending: 0, failures: 0, createdAt: 1790000000.25, jids: ['j2'] });
    expect(status.description).toBeNull();
    expect(status).toMatchObject({ invalidated: false, children: [], pendingChildren: [] });
  });

  it('reads a child batch, its children and its invalidation as Ruby Wurk writes them', () => {
    const status = toBatchStatus(
      'b',
      reads({ parent_bid: 'P', invalidated: '1' }, { kids: ['k2', 'k1'], pendingKids: ['k2'] }),
    );
    expect(status).toMatchObject({
      parentBid: 'P',
      invalidated: true,
      children: ['k1', 'k2'],
      pendingChildren: ['k2'],
    });
    expect(toBatchStatus('b', reads({ parent_bid: '' })).parentBid).toBeNull();
  });

  it('takes an event as fired from its marker or its _at field', () => {
    expect(toBatchStatus('b', reads({}, { markers: { complete: true, success: false, death: false } })).complete).toBe(
      true,
    );
    expect(toBatchStatus('b', reads({ death_at: '1790000000.5' })).death).toBe(true);
    expect(toBatchStatus('b', reads({})).success).toBe(false);
  });

  it('reads failure info in either shape, and text that is not JSON as the message', () => {
    const status = toBatchStatus(
      'b',
      reads({}, { failInfo: { a: '{"error_class":"E","error_message":"m"}', b: '["F","n"]', c: 'plain' } }),
    );
    expect(status.failureInfo).toEqual([
      { jid: 'a', errorClass: 'E', errorMessage: 'm' },
      { jid: 'b', errorClass: 'F', errorMessage: 'n' },
      { jid: 'c', errorClass: '', errorMessage: 'plain' },
    ]);
  });
});
