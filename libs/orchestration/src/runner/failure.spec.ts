import { UnrecoverableError } from 'bullmq';
import { DatabaseError } from 'pg';
import { z } from 'zod';
import { ValidationError } from '@switchyard/contracts';
import { CallAbortedError, RetryBudgetSpentError, RouterCallError, type AttemptRecord } from '@switchyard/router';
import { describeError, isRetryBudgetSpent, isTransient } from './failure';

function pgError(code: string): DatabaseError {
  const error = new DatabaseError('server says no', 0, 'error');
  error.code = code;
  return error;
}

function nodeError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code });
}

function zodError(): z.ZodError {
  const result = z.object({ id: z.string() }).safeParse({ id: 1 });
  if (result.success) throw new Error('expected a parse failure');
  return result.error;
}

const attempt = (errorClass: AttemptRecord['errorClass']): AttemptRecord => ({
  target: 't1',
  model: 'm',
  rule: 'fallback',
  outcome: 'error',
  errorClass,
  latencyMs: 1,
});

describe('isTransient', () => {
  it('follows the retryable flag of router errors', () => {
    expect(isTransient(new RouterCallError([attempt('server')], 'server'))).toBe(true);
    expect(isTransient(new RouterCallError([attempt('bad_request')], 'bad_request'))).toBe(false);
    expect(isTransient(new CallAbortedError([]))).toBe(false);
  });

  it('follows a retryable flag on any error object', () => {
    expect(isTransient(Object.assign(new Error('x'), { retryable: true }))).toBe(true);
    expect(isTransient(Object.assign(new Error('x'), { retryable: false }))).toBe(false);
    expect(isTransient({ retryable: false })).toBe(false);
  });

  it('lets the retryable flag win over a transient-looking code', () => {
    expect(isTransient(Object.assign(new Error('x'), { retryable: false, code: 'ECONNREFUSED' }))).toBe(false);
  });

  it('never retries invalid data', () => {
    expect(isTransient(zodError())).toBe(false);
    expect(isTransient(new ValidationError([{ path: 'input', message: 'bad' }]))).toBe(false);
  });

  it('never retries an UnrecoverableError', () => {
    expect(isTransient(new UnrecoverableError('give up'))).toBe(false);
  });

  it.each(['08006', '08003', '08001', '57P01', '57P02', '57P03', '53300', '40001', '40P01'])(
    'retries the Postgres connection / availability error %s',
    (code) => {
      expect(isTransient(pgError(code))).toBe(true);
    },
  );

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'])('retries the network error %s', (code) => {
    expect(isTransient(nodeError(code))).toBe(true);
  });

  it('retries a plain Error and other unknown throws (bounded by the attempt limit)', () => {
    expect(isTransient(new Error('something odd'))).toBe(true);
    expect(isTransient('a string')).toBe(true);
    expect(isTransient(undefined)).toBe(true);
  });
});

describe('describeError', () => {
  it('lists the paths of a ZodError', () => {
    expect(describeError(zodError())).toMatch(/^invalid data: id: /);
  });

  it('prefixes named errors with their name and leaves plain ones bare', () => {
    expect(describeError(new Error('boom'))).toBe('boom');
    expect(describeError(new UnrecoverableError('stop'))).toBe('UnrecoverableError: stop');
  });

  it('caps the description at 2,000 characters', () => {
    expect(describeError(new Error('x'.repeat(5_000)))).toHaveLength(2_000);
    expect(describeError('y'.repeat(5_000))).toHaveLength(2_000);
  });
});

describe('isRetryBudgetSpent', () => {
  const attempt: AttemptRecord = { target: 'local', model: 'm', rule: 'r', outcome: 'error', errorClass: 'timeout', latencyMs: 1000 };
  it("recognises the router's spent retry budget by its code, and nothing else", () => {
    expect(isRetryBudgetSpent(new RetryBudgetSpentError([attempt], 'timeout', 33, 'job-1', { trial: false }))).toBe(true);
    expect(isRetryBudgetSpent({ code: 'retry_budget_spent', retryable: true, message: 'spent' })).toBe(true);
    expect(isRetryBudgetSpent(new RouterCallError([attempt], 'timeout'))).toBe(false);
    expect(isRetryBudgetSpent(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe(false);
    expect(isRetryBudgetSpent(undefined)).toBe(false);
  });
});
