import { Catch } from '@nestjs/common';
import type { ApiErrorBody } from '../http/api-error';
import { HttpExceptionFilter } from '../http/http-exception.filter';

/** OpenAI's error body, which its SDKs parse into `APIError` (`type`, `param`, `code`). */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string; issues?: ApiErrorBody['error']['issues'] };
}

/** OpenAI's `type` for a status (404 model_not_found is an invalid request there too). */
export function openAiErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** A field path as OpenAI names a `param`: `messages.2.tool_call_id` → `messages[2].tool_call_id`. */
export function openAiParam(path: string | undefined): string | null {
  if (path === undefined || path === '(body)') return null;
  return path.replace(/\.(\d+)(?=\.|$)/g, '[$1]');
}

export function toOpenAiError(status: number, body: ApiErrorBody): OpenAiErrorBody {
  const { code, message, issues } = body.error;
  return { error: { message, type: openAiErrorType(status), param: openAiParam(issues?.[0]?.path), code, ...(issues ? { issues } : {}) } };
}

/**
 * The gateway's routes (`/v1/chat/completions`, `/v1/models`) answer errors in OpenAI's shape
 * `{error: {message, type, param, code}}`; the same codes and logging as every other route
 * (`issues` stays beside them).
 */
@Catch()
export class OpenAiErrorFilter extends HttpExceptionFilter {
  protected override present(status: number, body: ApiErrorBody): unknown {
    return toOpenAiError(status, body);
  }
}
