import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error';
import { ApiKeyRegistry, DEV_TENANT, bearerToken } from './api-keys';
import { TENANT_KEY } from './tenant.decorator';

/** Resolves `Authorization: Bearer <key>` to a tenant; in dev mode (no keys) everyone is `dev`. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly keys: ApiKeyRegistry) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest & { [TENANT_KEY]?: string }>();
    if (this.keys.devMode) {
      request[TENANT_KEY] = DEV_TENANT;
      return true;
    }
    const token = bearerToken(request.headers.authorization);
    if (!token) throw ApiError.unauthorized('missing API key: send Authorization: Bearer <key>');
    const tenant = this.keys.tenantFor(token);
    if (!tenant) throw ApiError.unauthorized('unknown API key');
    request[TENANT_KEY] = tenant;
    return true;
  }
}
