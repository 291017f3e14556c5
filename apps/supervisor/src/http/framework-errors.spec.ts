import { clientErrorResponse, frameworkErrorResponse } from './framework-errors';

describe('errors raised before routing', () => {
  it('answers a too-long path parameter and a bad URL in the error shape, without the URL', () => {
    expect(frameworkErrorResponse({ code: 'FST_ERR_MAX_PARAM_LENGTH', statusCode: 414 })).toEqual({
      status: 414,
      body: { error: { code: 'uri_too_long', message: 'a path segment of the URL is too long' } },
    });
    expect(frameworkErrorResponse({ code: 'FST_ERR_BAD_URL', statusCode: 400 })).toEqual({
      status: 400,
      body: { error: { code: 'invalid_request', message: 'the URL is not valid (bad percent-encoding)' } },
    });
  });

  it('maps the HTTP parser errors to their statuses', () => {
    expect(clientErrorResponse('HPE_HEADER_OVERFLOW')).toEqual({ status: 431, body: { error: { code: 'headers_too_large', message: 'the request headers are too large' } } });
    expect(clientErrorResponse('HPE_INVALID_HEADER_TOKEN').status).toBe(400);
    expect(clientErrorResponse('ERR_HTTP_REQUEST_TIMEOUT').status).toBe(408);
  });
});
