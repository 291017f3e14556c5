/** The error envelope the OpenAI API and vLLM send, which the SDK turns into typed errors. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function invalidRequest(message: string, param: string | null = null, code: string | null = null): OpenAIErrorBody {
  return { error: { message, type: 'invalid_request_error', param, code } };
}

export function modelNotFound(model: string): OpenAIErrorBody {
  return invalidRequest(`The model \`${model}\` does not exist`, 'model', 'model_not_found');
}

export function routeNotFound(method: string, path: string): OpenAIErrorBody {
  return invalidRequest(`Unknown route: ${method} ${path}`, null, 'not_found');
}

export function methodNotAllowed(method: string, path: string): OpenAIErrorBody {
  return invalidRequest(`Method ${method} is not allowed on ${path}`, null, 'method_not_allowed');
}

export function injectedServerError(target: string): OpenAIErrorBody {
  return { error: { message: `The server had an error while processing your request (llm-sim fault on ${target})`, type: 'server_error', param: null, code: null } };
}

export function injectedRateLimit(target: string, retryAfterS: number): OpenAIErrorBody {
  return {
    error: {
      message: `Rate limit reached on ${target}. Please try again in ${retryAfterS}s (llm-sim fault)`,
      type: 'requests',
      param: null,
      code: 'rate_limit_exceeded',
    },
  };
}

export function internalError(message: string): OpenAIErrorBody {
  return { error: { message, type: 'server_error', param: null, code: 'llm_sim_internal' } };
}
