import { entryId, parseEntryId, readJobRecord } from '../../src/admin/job-record';

describe('admin entry ids and lenient records', () => {
  it('round-trips <score>-<jid> as the Web UI addresses an entry', () => {
    expect(entryId({ score: '1795933842.8169234', jid: 'abc' })).toBe('1795933842.8169234-abc');
    expect(parseEntryId('1795933842.8169234-abc')).toEqual({ score: '1795933842.8169234', jid: 'abc' });
    expect(parseEntryId('12-')).toEqual({ score: '12', jid: '' });
    expect(parseEntryId('x-abc')).toBeUndefined();
    expect(parseEntryId('-abc')).toBeUndefined();
  });

  it('reads a record without throwing, whatever the payload', () => {
    expect(readJobRecord('[1,2]')).toEqual({ raw: '[1,2]', parseError: expect.stringContaining('not a JSON object') });
    expect(readJobRecord('{"class":5,"args":"x","enqueued_at":1795933842000}')).toMatchObject({
      className: undefined,
      args: undefined,
      enqueuedAt: 1795933842,
    });
    expect(
      readJobRecord('{"class":"ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper","wrapped":"Mailer"}').displayClass,
    ).toBe('Mailer');
  });
});
