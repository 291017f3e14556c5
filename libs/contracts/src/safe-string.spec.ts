import { MAX_JSON_DEPTH, SafeString, findUnsafeJson, truncateForEcho, unsafeStringReason } from './safe-string';

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i += 1) value = [value];
  return value;
}

describe('unsafeStringReason / SafeString', () => {
  it.each(['a\u0000b', '\ud800', 'x\udc00', '\udc00\ud800', 'end\ud83d'])('refuses %j', (value) => {
    expect(unsafeStringReason(value)).toBe('must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate');
    expect(SafeString.safeParse(value).success).toBe(false);
  });

  it.each(['', 'plain', 'ünïcødé', '😀 pair', '\u0001 other control characters', 'tab\tnewline\n'])('accepts %j', (value) => {
    expect(unsafeStringReason(value)).toBeUndefined();
    expect(SafeString.min(0).max(100).safeParse(value).success).toBe(true);
  });
});

describe('findUnsafeJson', () => {
  it('accepts ordinary bodies, up to the depth limit', () => {
    expect(findUnsafeJson({ messages: [{ role: 'user', content: 'hi 😀' }], n: 1, x: null, y: [true, 1.5e300] })).toBeUndefined();
    expect(findUnsafeJson({ a: nested(MAX_JSON_DEPTH - 1) })).toBeUndefined();
  });

  it('names the path where nesting crosses the limit, without recursing through a hostile depth', () => {
    const issue = findUnsafeJson({ response_format: { type: 'json_object', schema: nested(10_000) } });
    expect(issue?.message).toBe(`nests deeper than ${MAX_JSON_DEPTH} levels`);
    expect(issue?.path.startsWith('response_format.schema.0.0')).toBe(true);
    expect(issue?.path.length).toBeLessThan(200);
    expect(findUnsafeJson(nested(3), 2)).toEqual({ path: '0.0', message: 'nests deeper than 2 levels' });
  });

  it('names the string or key holding NUL or a lone surrogate', () => {
    expect(findUnsafeJson({ metadata: { business_type: 'x\u0000y' } })).toEqual({
      path: 'metadata.business_type',
      message: 'must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate',
    });
    expect(findUnsafeJson({ a: [1, 'ok', 'b\udc00'] })?.path).toBe('a.2');
    expect(findUnsafeJson({ a: { 'k\u0000': 1 } })).toEqual({ path: 'a', message: 'a key must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate' });
    expect(findUnsafeJson('\ud800')?.path).toBe('(body)');
  });

  it('refuses prototype keys by name', () => {
    expect(findUnsafeJson(JSON.parse('{"a": {"__proto__": {"x": 1}}}'))).toEqual({ path: 'a.__proto__', message: 'the key "__proto__" is not allowed' });
    expect(findUnsafeJson(JSON.parse('{"constructor": {"prototype": {}}}'))?.path).toBe('constructor.prototype');
    expect(findUnsafeJson({ constructor: 'a class', prototype: 'fine on its own' })).toBeUndefined();
  });

  it('cuts long keys in the path it names', () => {
    const issue = findUnsafeJson({ ['k'.repeat(10_000)]: '\u0000' });
    expect(issue?.path.length).toBeLessThan(80);
  });
});

describe('truncateForEcho', () => {
  it('keeps short text and cuts long text, never halving a surrogate pair', () => {
    expect(truncateForEcho('short')).toBe('short');
    expect(truncateForEcho('x'.repeat(100), 10)).toBe('xxxxxxxxxx… (100 characters)');
    expect(truncateForEcho(`${'x'.repeat(9)}😀tail`, 10)).toBe('xxxxxxxxx… (15 characters)');
  });
});
