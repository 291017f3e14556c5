import { CallAbortedError } from '@switchyard/router';
import { ApiError } from '../http/api-error';
import { RetryLaterError } from '../http/api-error';
import { toApiError } from './gateway.service';
import { QueueFullError, QueueTimeoutError } from './slot-wait-queue';

describe('toApiError', () => {
  it.each([new QueueFullError(500), new QueueTimeoutError(10_000)])('a call the queue could not place (%s) is 503 overloaded with a Retry-After', (error) => {
    const mapped = toApiError(error);
    expect(mapped).toBeInstanceOf(RetryLaterError);
    expect((mapped as RetryLaterError).getStatus()).toBe(503);
    expect((mapped as RetryLaterError).getResponse()).toMatchObject({ error: { code: 'overloaded' } });
    expect((mapped as RetryLaterError).retryAfterS).toBeGreaterThan(0);
  });

  it('a call its client abandoned is not a server error', () => {
    const mapped = toApiError(new CallAbortedError([]));
    expect(mapped).toBeInstanceOf(ApiError);
    expect((mapped as ApiError).getStatus()).toBeLessThan(500);
  });
});
