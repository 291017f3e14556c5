import { MAX_JSON_DEPTH } from '@switchyard/contracts';
import { RequestBodyError, parseJsonBody } from './json-body';

function issuesOf(text: string) {
  try {
    parseJsonBody(text);
  } catch (error) {
    expect(error).toBeInstanceOf(RequestBodyError);
    expect((error as RequestBodyError).statusCode).toBe(400);
    return (error as RequestBodyError).issues;
  }
  throw new Error('expected a RequestBodyError');
}

describe('parseJsonBody', () => {
  it('parses ordinary JSON, duplicate keys keeping the last', () => {
    expect(parseJsonBody('{"a": 1, "a": [2, "x😀"], "big": 1e400}')).toEqual({ a: [2, 'x😀'], big: Infinity });
  });

  it('says the body is not valid JSON without quoting it', () => {
    expect(issuesOf('{"secret": "078-05-1120", ')).toEqual([{ path: '(body)', message: 'request body is not valid JSON' }]);
    expect(issuesOf('  ')).toEqual([{ path: '(body)', message: 'request body is empty' }]);
  });

  it('refuses a prototype key by name, not as invalid JSON', () => {
    expect(issuesOf('{"type": "doc_review", "__proto__": {"polluted": true}}')).toEqual([{ path: '__proto__', message: 'the key "__proto__" is not allowed' }]);
  });

  it('refuses nesting deeper than the limit, naming where, for a depth that would overflow a recursive walk', () => {
    const deep = `{"response_format": {"type": "json_object", "x": ${'['.repeat(10_000)}${']'.repeat(10_000)}}}`;
    const [issue] = issuesOf(deep);
    expect(issue?.message).toBe(`nests deeper than ${MAX_JSON_DEPTH} levels`);
    expect(issue?.path.startsWith('response_format.x.0')).toBe(true);
  });

  it('refuses NUL and lone surrogates sent as JSON escapes, naming the field', () => {
    expect(issuesOf('{"metadata": {"business_type": "x\\u0000y"}}')[0]?.path).toBe('metadata.business_type');
    expect(issuesOf('{"input": {"question": "q\\ud800"}}')[0]?.path).toBe('input.question');
  });
});
