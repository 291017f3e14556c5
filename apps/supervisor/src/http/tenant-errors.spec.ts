import { ContextWindowExceededError, NoEligibleTargetError, RouterCallError } from '@switchyard/router';
import { toApiError } from '../gateway/gateway.service';
import { ApiError } from './api-error';

const internals = /local_vllm|cloud_main|sensitive_data|context window|policy|limit|rule/i;

function answered(error: unknown): { status: number; body: { error: { code: string; message: string; issues?: { message: string }[] } }; cause: unknown } {
  const api = toApiError(error);
  expect(api).toBeInstanceOf(ApiError);
  const apiError = api as ApiError;
  return { status: apiError.getStatus(), body: apiError.getResponse() as never, cause: apiError.cause };
}

describe('router errors as a tenant sees them', () => {
  const noTarget = new NoEligibleTargetError(
    { policy: 'local_first', matchedRules: ['sensitive_data'], candidates: [{ target: 'local_vllm_7b', rule: 'sensitive_data', reason: 'drained' }] as never },
    { task_type: 'chat', complexity: 'low', sensitivity: 'sensitive', priority: 'normal' },
  );
  const tooLong = new ContextWindowExceededError(90_000, [{ target: 'local_vllm_7b', contextWindow: 32_768, limit: 29_491 }], 0.9);
  const failed = new RouterCallError([{ target: 'cloud_main', errorClass: 'server', status: 500 }] as never, 'server');
  const refused = new RouterCallError([{ target: 'cloud_main', errorClass: 'bad_request', status: 400 }] as never, 'bad_request');

  it.each([
    [noTarget, 503, 'no_eligible_target'],
    [tooLong, 400, 'context_length_exceeded'],
    [failed, 502, 'upstream_failed'],
    [refused, 400, 'upstream_rejected_request'],
  ])('gives a stable code and a generic message, keeping the detail as the cause for the log (%#)', (error, status, code) => {
    expect(internals.test((error as Error).message)).toBe(true);
    const { status: answeredStatus, body, cause } = answered(error);
    expect(answeredStatus).toBe(status);
    expect(body.error.code).toBe(code);
    expect(JSON.stringify(body)).not.toMatch(internals);
    expect(cause).toBe(error);
  });
});
