import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpStatus, Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { AppConfig } from '@switchyard/config';
import { APP_CONFIG } from '@switchyard/platform';
import { ApiError } from '../http/api-error';
import { bearerToken } from './api-keys';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** `/admin/*`: Bearer ADMIN_TOKEN. Without ADMIN_TOKEN set, the admin API is closed, not open. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer | undefined;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.expected = config.ADMIN_TOKEN ? digest(config.ADMIN_TOKEN) : undefined;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expected) {
      throw new ApiError(HttpStatus.FORBIDDEN, 'admin_disabled', 'the admin API is disabled: set ADMIN_TOKEN to enable it');
    }
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const token = bearerToken(request.headers.authorization);
    if (!token || !timingSafeEqual(digest(token), this.expected)) {
      throw ApiError.unauthorized('admin routes need Authorization: Bearer <ADMIN_TOKEN>');
    }
    return true;
  }
}
