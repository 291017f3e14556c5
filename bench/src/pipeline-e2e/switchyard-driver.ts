import { Agent, request } from 'node:http';
import { Client } from 'pg';
import { JobEnds, QUESTION, documentsOf } from './flows';

/**
 * The Switchyard side's client: `POST /v1/jobs` over keep-alive HTTP, and the end of each
 * job from the task table's own notification (`switchyard_admission`, sent by the trigger
 * when a job's root row reaches a terminal status), so that waiting costs no polling.
 */

/** The channel the task table's trigger notifies when a job ends (migration 0005). */
const JOB_END_CHANNEL = 'switchyard_admission';

function postJson(agent: Agent, url: URL, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export class SwitchyardDriver {
  private readonly ends = new JobEnds();
  private readonly agent = new Agent({ keepAlive: true });
  readonly submitted: string[] = [];
  private sequence = 0;

  private constructor(
    private readonly jobsUrl: URL,
    private readonly listener: Client,
  ) {
    listener.on('notification', (message) => {
      if (message.channel === JOB_END_CHANNEL && message.payload) this.ends.settle(message.payload);
    });
  }

  /** `dbUrl`: the bench database, for the LISTEN connection (application_name `sy-bench-listen`). */
  static async start(baseUrl: string, dbUrl: string): Promise<SwitchyardDriver> {
    const listener = new Client({ connectionString: dbUrl, application_name: 'sy-bench-listen' });
    await listener.connect();
    await listener.query(`LISTEN ${JOB_END_CHANNEL}`);
    return new SwitchyardDriver(new URL('/v1/jobs', baseUrl), listener);
  }

  /** Submits a doc_review job with `documents` documents (texts unique to it) and resolves when it has ended. */
  async runJob(documents: number, timeoutMs: number): Promise<void> {
    this.sequence += 1;
    const body = JSON.stringify({ type: 'doc_review', input: { question: QUESTION, documents: documentsOf(this.sequence, documents) } });
    const reply = await postJson(this.agent, this.jobsUrl, body);
    if (reply.status !== 202) throw new Error(`POST /v1/jobs answered ${reply.status}: ${reply.body.slice(0, 300)}`);
    const jobId = (JSON.parse(reply.body) as { job_id: string }).job_id;
    this.submitted.push(jobId);
    await this.ends.wait(jobId, timeoutMs);
  }

  async close(): Promise<void> {
    this.agent.destroy();
    await this.listener.end().catch(() => undefined);
  }
}
