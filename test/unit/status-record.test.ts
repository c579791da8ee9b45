import { toStatusRecord } from '../../src/status/status-record';

/**
 * The row as GET /jobs/:jid answers it (docs/internals/spec/contract.md §2.7), from the HGETALL any writer of the row
 * left.
 */
describe('toStatusRecord', () => {
  it('answers null, never 0, for a time or counter that is absent or empty', () => {
    const record = toStatusRecord('j1', {
      state: 'running',
      enqueued_at: '',
      started_at: '1786000000.5',
      progress: '',
      attempt: '',
    });
    expect(record).toMatchObject({
      enqueued_at: null,
      started_at: 1786000000.5,
      finished_at: null,
      progress: null,
      total: null,
      attempt: null,
    });
  });

  it('answers null for a time or counter that is not a finite number', () => {
    expect(toStatusRecord('j1', { progress: 'ten', total: 'Infinity' })).toMatchObject({ progress: null, total: null });
  });

  it('decodes the result JSON, and keeps a result that is not JSON as its text', () => {
    expect(toStatusRecord('j1', { result: '{"ok":[1,2]}' }).result).toEqual({ ok: [1, 2] });
    expect(toStatusRecord('j1', { result: 'plain text' }).result).toBe('plain text');
  });

  it('answers a truncated result as the raw head string, even when the head happens to parse', () => {
    expect(toStatusRecord('j1', { result: '12345', result_truncated: '1' })).toMatchObject({
      result: '12345',
      result_truncated: true,
    });
    expect(toStatusRecord('j1', { result: '12345' })).toMatchObject({ result: 12345, result_truncated: false });
  });
});
