import { InvalidPayloadError } from '../../src/job/errors';
import { JobPayload, keyText } from '../../src/job/payload';
import { arrayElements, nestingDepth, objectMembers } from '../../src/job/raw-json';

describe('JobPayload', () => {
  const ruby =
    '{"retry":true,"queue":"default","class":"HardWorker","args":[1.0,12345678901234567890,{"k":[1e3,"\\u00e9\\"}"]}],' +
    '"jid":"0123456789abcdef01234567","created_at":1795933789.761835,"enqueued_at":1795933789.7619727}';

  it('returns the exact text it was parsed from while unchanged', () => {
    expect(JobPayload.parse(ruby).toString()).toBe(ruby);
  });

  it('re-writes a field without touching the bytes of args (Ruby floats, integers beyond 2^53)', () => {
    const payload = JobPayload.parse(ruby);
    payload.set('retry_count', 0).set('error_message', 'boom').setRaw('enqueued_at', '1795933800.5');
    const out = payload.toString();
    expect(out).toContain('"args":[1.0,12345678901234567890,{"k":[1e3,"\\u00e9\\"}"]}]');
    expect(out).toContain('"enqueued_at":1795933800.5,"retry_count":0,"error_message":"boom"}');
    expect(JobPayload.parse(out).getRaw('args')).toBe(JobPayload.parse(ruby).getRaw('args'));
  });

  it('keeps a re-set member in its position, as a Ruby Hash does', () => {
    const payload = JobPayload.parse('{"a":1,"b":2,"c":3}');
    payload.set('b', 'x');
    expect(payload.toString()).toBe('{"a":1,"b":"x","c":3}');
    expect(payload.delete('a').toString()).toBe('{"b":"x","c":3}');
  });

  it('reads absent class, queue, jid and args as empty, and refuses a value JSON cannot encode, naming the member', () => {
    const payload = JobPayload.parse('{}');
    expect([payload.className, payload.queue, payload.jid, payload.args]).toEqual(['', '', '', []]);
    expect(() => payload.set('at', undefined)).toThrow(new TypeError('at cannot be encoded as JSON'));
  });

  it('refuses text that is not a JSON object, saying which', () => {
    expect(() => JobPayload.parse('not json at all')).toThrow(InvalidPayloadError);
    expect(() => JobPayload.parse('{"class":')).toThrow(/^invalid job payload: not valid JSON \(.+\)$/);
    for (const text of ['[1,2]', 'null', '5', '"X"'])
      expect(() => JobPayload.parse(text)).toThrow(new InvalidPayloadError('not a JSON object'));
  });

  it('tolerates whitespace that other writers leave', () => {
    const payload = JobPayload.parse(' { "class" : "X" ,\n "args" : [ 1 , 2 ] } ');
    expect(payload.className).toBe('X');
    expect(payload.getRaw('args')).toBe('[ 1 , 2 ]');
    expect(payload.set('queue', 'q').toString()).toBe('{"class":"X","args":[ 1 , 2 ],"queue":"q"}');
  });
  it('keeps the stored text byte for byte when a delete finds nothing to remove', () => {
    const stored = '{ "class" : "X", "args" : [1.0] }';
    expect(JobPayload.parse(stored).delete('jid').toString()).toBe(stored);
  });

  it('clones into a payload of its own: same text, and a change to either leaves the other as it was', () => {
    const stored = '{ "class" : "X", "args" : [1.0] }';
    const original = JobPayload.parse(stored);
    const copy = original.clone();
    expect(copy.toString()).toBe(stored);
    copy.set('queue', 'q');
    expect(original.toString()).toBe(stored);
    original.set('class', 'Y');
    const second = original.clone();
    second.delete('args');
    expect(original.toString()).toBe('{"class":"Y","args":[1.0]}');
    expect(second.toString()).toBe('{"class":"Y"}');
    expect(copy.toString()).toBe('{"class":"X","args":[1.0],"queue":"q"}');
  });

  it('lists keys and a plain object view in text order, members read as decoded values', () => {
    const payload = JobPayload.parse('{"b":1.0,"1":[2],"class":"A"}').set('queue', 'q');
    expect(payload.keys()).toEqual(['b', '1', 'class', 'queue']);
    expect(payload.rawEntries()).toEqual([
      ['b', '1.0'],
      ['1', '[2]'],
      ['class', '"A"'],
      ['queue', '"q"'],
    ]);
    expect(Object.entries(payload.toObject())).toEqual([
      ['1', [2]],
      ['b', 1],
      ['class', 'A'],
      ['queue', 'q'],
    ]);
    expect(payload.get('1')).toEqual([2]);
    expect(payload.get('missing')).toBeUndefined();
    expect(payload.has('queue')).toBe(true);
    expect(payload.has('missing')).toBe(false);
  });

  it('reads class, queue, jid and args through their getters, after a change as before', () => {
    const payload = JobPayload.parse('{"class":"A","queue":"q","jid":"j","args":[1]}');
    expect([payload.className, payload.queue, payload.jid, payload.args]).toEqual(['A', 'q', 'j', [1]]);
    payload.set('retry', 1);
    expect([payload.className, payload.queue, payload.jid, payload.args]).toEqual(['A', 'q', 'j', [1]]);
    const built = JobPayload.fromEntries([['class', 'B']]);
    expect([built.className, built.queue, built.jid, built.args]).toEqual(['B', '', '', []]);
  });

  it('encodes member names as JSON strings, the same on every call', () => {
    expect(keyText('class')).toBe('"class"');
    expect(keyText('a"b\\')).toBe('"a\\"b\\\\"');
    for (let i = 0; i < 1100; i++) expect(keyText(`k${i}`)).toBe(`"k${i}"`);
    expect(keyText('k1050')).toBe('"k1050"');
  });
});

describe('raw JSON spans', () => {
  it('splits objects and arrays at the top level only', () => {
    expect(objectMembers('{"a":{"b":[1,"]}"]},"c":"d"}')).toEqual([
      ['a', '{"b":[1,"]}"]}'],
      ['c', '"d"'],
    ]);
    expect(arrayElements('[[1],{"a":"[,]"},3.50,null]')).toEqual(['[1]', '{"a":"[,]"}', '3.50', 'null']);
    expect(arrayElements('[]')).toEqual([]);
  });

  it('names what it expected when handed the wrong kind of text', () => {
    expect(() => objectMembers('[1]')).toThrow(new SyntaxError('not an object'));
    expect(() => arrayElements('{}')).toThrow(new SyntaxError('not an array'));
    expect(() => arrayElements('["a]')).toThrow(new SyntaxError('unterminated string'));
    expect(() => arrayElements('[[1')).toThrow(new SyntaxError('unbalanced brackets'));
  });

  it('skips every kind of JSON whitespace between tokens, and reads empty containers', () => {
    expect(objectMembers('\t{\r\n "a"\t:\r\n1 ,\t"b" : [ ]\r\n}')).toEqual([
      ['a', '1'],
      ['b', '[ ]'],
    ]);
    expect(arrayElements(' [\t1 ,\r\n"x"\t,true\n]')).toEqual(['1', '"x"', 'true']);
    expect(objectMembers(' { } ')).toEqual([]);
    expect(arrayElements('\n[\t]')).toEqual([]);
  });

  it('measures nesting depth outside strings', () => {
    expect(nestingDepth('[[["[[[["]]]')).toBe(3);
    expect(nestingDepth('1')).toBe(0);
  });

  it('reads members before any span is found, and keeps the text order of keys JavaScript would reorder', () => {
    const payload = JobPayload.parse('{"b":1.0,"1":[2],"class":"A","args":[1.0,12345678901234567890]}');
    expect(payload.has('1')).toBe(true);
    expect(payload.has('toString')).toBe(false);
    expect(payload.get('toString')).toBeUndefined();
    expect(payload.get('1')).toEqual([2]);
    expect(payload.className).toBe('A');
    expect(payload.keys()).toEqual(['b', '1', 'class', 'args']);
    expect(payload.getRaw('args')).toBe('[1.0,12345678901234567890]');
    payload.set('class', 'B');
    expect(payload.toString()).toBe('{"b":1.0,"1":[2],"class":"B","args":[1.0,12345678901234567890]}');
  });
});
