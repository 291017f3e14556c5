import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { isGone } from './http-io';

/**
 * Waits `ms` before the caller writes to `res`. Resolves true when the time is up and false
 * as soon as the response closes, so a client that gives up, or a simulator that stops,
 * never leaves a timer behind. Re-arms when the timer fires early (libuv rounds to whole
 * milliseconds from a cached loop time), so "first byte after the delay" really holds.
 */
export function delayUnlessGone(ms: number, res: ServerResponse): Promise<boolean> {
  if (isGone(res)) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const deadline = performance.now() + ms;
    let timer: NodeJS.Timeout | undefined;
    const onClose = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const arm = (wait: number) => {
      timer = setTimeout(() => {
        const left = deadline - performance.now();
        if (left > 0) {
          arm(Math.ceil(left));
          return;
        }
        res.off('close', onClose);
        resolve(true);
      }, wait);
    };
    res.once('close', onClose);
    arm(ms);
  });
}
