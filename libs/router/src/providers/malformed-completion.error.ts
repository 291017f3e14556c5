/** The upstream answered 2xx but not with a usable completion. */
export class MalformedCompletionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedCompletionError';
  }
}
