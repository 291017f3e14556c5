import { redactUrl } from './redact-url';
import { RouterConfigError } from './router-config.error';

describe('redactUrl', () => {
  it('replaces user and password, keeping scheme, host, port and path as written', () => {
    expect(redactUrl('http://user:secret@127.0.0.1:8000/v1')).toBe('http://***@127.0.0.1:8000/v1');
    expect(redactUrl('https://token@api.example.com/v1?x=1')).toBe('https://***@api.example.com/v1?x=1');
  });

  it('takes everything up to the last @ of the authority as userinfo', () => {
    expect(redactUrl('http://user:p@ss@host:1/v1')).toBe('http://***@host:1/v1');
  });

  it('leaves a URL without userinfo and an @ in the path alone', () => {
    expect(redactUrl('http://127.0.0.1:8000/v1')).toBe('http://127.0.0.1:8000/v1');
    expect(redactUrl('http://host/models/@latest')).toBe('http://host/models/@latest');
  });

  it('is idempotent', () => {
    expect(redactUrl(redactUrl('http://u:p@h/v1'))).toBe('http://***@h/v1');
  });

  it('redacts every URL in a text', () => {
    expect(redactUrl('a: http://u:p@h1/v1, b: https://k@h2/v1')).toBe('a: http://***@h1/v1, b: https://***@h2/v1');
  });
});

describe('RouterConfigError', () => {
  it('does not repeat credentials an issue quotes', () => {
    const error = new RouterConfigError('router.yaml', [{ path: 'router.targets.0.endpoint', message: 'cannot reach http://user:secret@10.0.0.1:8000/v1' }]);
    expect(error.message).not.toContain('secret');
    expect(error.message).toContain('http://***@10.0.0.1:8000/v1');
  });
});
