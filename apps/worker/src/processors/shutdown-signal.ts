import { Injectable } from '@nestjs/common';

/** Aborted when the worker is shutting down and running tasks must hand their task back. */
@Injectable()
export class ShutdownSignal {
  private readonly controller = new AbortController();

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  abort(reason: Error): void {
    this.controller.abort(reason);
  }
}
