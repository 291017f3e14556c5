import { HttpStatus } from '@nestjs/common';
import { ApiError } from './api-error';

/**
 * What a tenant is told when the router cannot answer: a stable code and a sentence. Target
 * names, rules and context windows stay in the log (the filter logs the cause) and in the
 * admin API.
 */
export const TENANT_ROUTER_ERRORS = {
  no_eligible_target: { status: HttpStatus.SERVICE_UNAVAILABLE, message: 'busy: no model target can serve this request now; retry later' },
  context_length_exceeded: {
    status: HttpStatus.BAD_REQUEST,
    message: 'the messages are too long for the models that may serve this request; shorten them or lower max_tokens',
  },
  upstream_rejected_request: { status: HttpStatus.BAD_REQUEST, message: 'the model refused the request as invalid' },
  upstream_failed: { status: HttpStatus.BAD_GATEWAY, message: 'the model call failed; retry later' },
} as const;

export type TenantRouterErrorCode = keyof typeof TENANT_ROUTER_ERRORS;

export function tenantRouterError(code: TenantRouterErrorCode, cause: unknown): ApiError {
  const { status, message } = TENANT_ROUTER_ERRORS[code];
  const issues = code === 'context_length_exceeded' ? [{ path: 'messages', message }] : undefined;
  return new ApiError(status, code, message, issues, cause);
}
