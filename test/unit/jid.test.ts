import { newJid } from '../../src/job/jid';

describe('newJid', () => {
  it("mints Sidekiq's jid (24 lowercase hex characters), each one new, across refills of the random pool", () => {
    // More than two pools' worth (1,024 jids each), so refills and the jids right after them are checked too.
    const jids = Array.from({ length: 2500 }, () => newJid());
    for (const jid of jids) expect(jid).toMatch(/^[0-9a-f]{24}$/);
    expect(new Set(jids).size).toBe(jids.length);
  });
});
