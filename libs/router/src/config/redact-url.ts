/** `scheme://userinfo@`: what is replaced. The greedy class stops at the last `@` before the path. */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi;

/**
 * An endpoint as it may be shown (admin API, logs, errors) or shared (Redis): a user and
 * password in the URL become `***`; scheme, host, port, path and query are kept as written.
 * Works on a text that quotes URLs too (an error message). The config keeps the real URL
 * for the calls themselves.
 */
export function redactUrl(url: string): string {
  return url.replace(USERINFO, '$1***@');
}
