import { setMaxListeners } from 'node:events';
import { Injectable } from '@nestjs/common';

/** Aborted when the worker is shutting down and running tasks must hand their task back. */
@Injectable()
export class ShutdownSignal {
  private readonly controller = new AbortController();

  constructor() {
    // Every running task listens on this one signal; more than ten at once is normal.
    setMaxListeners(0, this.controller.signal);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  abort(reason: Error): void {
    this.controller.abort(reason);
  }
}
