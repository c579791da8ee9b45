import { didYouMean, didYouMeanText } from '../../src/job/did-you-mean';

describe('didYouMean', () => {
  it('suggests the known name one edit away, in its own spelling, whatever the case of the typo', () => {
    expect(didYouMean('trak', ['queue', 'track'])).toBe('track');
    expect(didYouMean('RetryFr', ['queue', 'retryFor'])).toBe('retryFor');
  });

  it("names the alias of another library's option, which no spelling distance would find", () => {
    expect(didYouMean('connection', ['redis', 'concurrency'], { connection: 'redis' })).toBe('redis');
  });

  it('reads only the aliases given, not what every object inherits', () => {
    expect(didYouMean('constructor', ['retry'])).toBeUndefined();
    expect(didYouMean('toString', ['retry'], { retries: 'retry' })).toBeUndefined();
  });

  it('suggests while at most half the name is wrong (rounded up), and nothing past that', () => {
    // 4 letters: 2 edits are still a suggestion, 3 are not.
    expect(didYouMean('tcak', ['track'])).toBe('track');
    expect(didYouMean('tzzk', ['track'])).toBeUndefined();
    expect(didYouMean('xyzw', ['track'])).toBeUndefined();
    // 1 letter: one edit is always allowed, however short the name.
    expect(didYouMean('x', ['ax'])).toBe('ax');
    expect(didYouMean('x', ['abc'])).toBeUndefined();
  });

  it('counts two swapped neighbours as one edit, not two', () => {
    expect(didYouMean('ab', ['ba'])).toBe('ba');
    // A swap and a missing letter: 2 edits, within the limit of a 4-letter name (3 without the swap rule).
    expect(didYouMean('rtak', ['track'])).toBe('track');
    expect(didYouMean('retyr', ['retro', 'retry'])).toBe('retry');
  });

  it('prefers the first known name on a tie, so the suggestion follows the order options are declared in', () => {
    expect(didYouMean('bat', ['cat', 'hat'])).toBe('cat');
    expect(didYouMean('bat', ['hat', 'cat'])).toBe('hat');
  });

  it('suggests nothing when nothing is known', () => {
    expect(didYouMean('retry', [])).toBeUndefined();
  });
});

describe('didYouMeanText', () => {
  it('is the clause appended to a reason, or nothing', () => {
    expect(didYouMeanText('retires', ['queue', 'retry'])).toBe('; did you mean retry?');
    expect(didYouMeanText('zzzzzzzz', ['queue', 'retry'])).toBe('');
    expect(didYouMeanText('retries', ['queue', 'retry_for'], { retries: 'retry' })).toBe('; did you mean retry?');
  });
});
