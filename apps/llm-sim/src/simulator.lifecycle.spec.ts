import { createServer } from 'node:http';
import { listen, closeServer } from './http-io';
import { createSimulator } from './simulator';
import { chatBody, rawRequest, startSim } from '../test/sim-harness';

describe('llm-sim lifecycle', () => {
  it('applies a target base latency before the first byte', async () => {
    const running = await startSim([{ name: 'slowish', model: 'm', latencyMs: 80 }]);
    try {
      const res = await rawRequest(running.portOf('slowish'), 'POST', '/v1/chat/completions', chatBody('m', 'x'));
      expect(res.status).toBe(200);
      expect(res.firstByteMs).toBeGreaterThanOrEqual(80);
    } finally {
      await running.sim.stop();
    }
  });

  it('fails start when a port is taken, and releases the ports it had bound', async () => {
    const blocker = createServer();
    const taken = await listen(blocker, 0, '127.0.0.1');
    try {
      const sim = createSimulator({
        host: '127.0.0.1',
        controlPort: 0,
        logLevel: 'silent',
        targets: [
          { name: 'free', port: 0, model: 'm', latencyMs: 0 },
          { name: 'clash', port: taken, model: 'm', latencyMs: 0 },
        ],
      });
      await expect(sim.start()).rejects.toMatchObject({ code: 'EADDRINUSE' });
      await expect(sim.start()).rejects.toThrow(/already started/);
      await sim.stop();
    } finally {
      await closeServer(blocker);
    }
  });

  it('stop() is idempotent', async () => {
    const running = await startSim();
    await Promise.all([running.sim.stop(), running.sim.stop()]);
    await running.sim.stop();
    await expect(rawRequest(running.address.controlPort, 'GET', '/health')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
