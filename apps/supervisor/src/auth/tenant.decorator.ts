import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

export const TENANT_KEY = 'switchyardTenant';

/** The tenant the API key belongs to, set by ApiKeyGuard. */
export const Tenant = createParamDecorator((_: unknown, ctx: ExecutionContext): string => {
  const request = ctx.switchToHttp().getRequest<FastifyRequest & { [TENANT_KEY]?: string }>();
  const tenant = request[TENANT_KEY];
  if (!tenant) throw new Error('Tenant used on a route without ApiKeyGuard');
  return tenant;
});
