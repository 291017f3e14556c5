import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import YAML from 'yaml';
import { OUTPUTS, QUEUE_PREFIX, k8sName, renderAll, workflowRoles } from './render-workers';

/**
 * The deployment files checked without a cluster or a Docker engine (there is neither here):
 * every Kubernetes manifest against the JSON Schema of its kind (docker/k8s/schemas, strict),
 * the generated per-role files against the workflow files, the cross-references between
 * objects, Compose's services and profiles, the observability rules against the metrics the
 * code registers, and the image build against bench/.
 */
const REPO = resolve(__dirname, '..', '..');
const K8S = join(REPO, 'docker', 'k8s');
const SCHEMAS = join(K8S, 'schemas');

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; spec?: Record<string, unknown> };
type PodTemplate = { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: { containers: Array<{ env?: Array<{ name: string; value?: string }>; ports?: Array<{ containerPort: number }> }> } };

function loadManifests(): Array<{ file: string; doc: Manifest }> {
  return readdirSync(K8S)
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .flatMap((file) =>
      YAML.parseAllDocuments(readFileSync(join(K8S, file), 'utf8'))
        .map((document) => document.toJS() as Manifest | null)
        .filter((doc): doc is Manifest => doc !== null)
        .map((doc) => ({ file, doc })),
    );
}

function validator() {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
  for (const file of readdirSync(SCHEMAS).filter((name) => name.endsWith('.json'))) ajv.addSchema(JSON.parse(readFileSync(join(SCHEMAS, file), 'utf8')));
  return (doc: Manifest): string[] => {
    const validate = ajv.getSchema(`${doc.kind}.json`);
    if (!validate) return [`no schema for kind ${doc.kind} in docker/k8s/schemas`];
    if (validate(doc)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`);
  };
}

const manifests = loadManifests();
const byKind = (kind: string) => manifests.filter((m) => m.doc.kind === kind).map((m) => m.doc);
const roles = workflowRoles();

describe('Kubernetes manifests (schema check; no cluster here)', () => {
  const validate = validator();

  it.each(manifests.map((m) => [`${m.file}: ${m.doc.kind} ${m.doc.metadata?.name}`, m.doc] as const))('%s matches its kind schema', (_name, doc) => {
    expect(validate(doc)).toEqual([]);
  });

  it('rejects a misspelt field, a wrong type and a missing required field (the schemas are strict)', () => {
    const deployment = structuredClone(byKind('Deployment')[0]!);
    const container = (deployment.spec as { template: PodTemplate }).template.spec.containers[0] as Record<string, unknown>;
    container.imagePullPolicyy = 'Always';
    expect(validate(deployment).join('\n')).toContain('imagePullPolicyy');
    const scaled = structuredClone(byKind('ScaledObject')[0]!);
    (scaled.spec as { minReplicaCount: unknown }).minReplicaCount = 'one';
    expect(validate(scaled).join('\n')).toContain('minReplicaCount');
    const budget = structuredClone(byKind('PodDisruptionBudget')[0]!);
    delete (budget.spec as { selector?: unknown }).selector;
    expect(validate(budget).join('\n')).toContain('selector');
  });

  it('has, for every role of the workflow files, a worker Deployment on its queue, a PodDisruptionBudget and a KEDA scaler on its queue depth', () => {
    const config = byKind('ConfigMap').find((c) => c.metadata.name === 'switchyard-env') as unknown as { data: Record<string, string> };
    expect(config.data.QUEUE_PREFIX).toBe(QUEUE_PREFIX);
    expect(roles).toEqual(expect.arrayContaining(['extract', 'synthesize']));
    for (const role of roles) {
      const name = `switchyard-worker-${k8sName(role)}`;
      const deployment = byKind('Deployment').find((d) => d.metadata.name === name);
      expect(deployment).toBeDefined();
      const template = (deployment!.spec as { template: PodTemplate }).template;
      expect(template.spec.containers[0]!.env).toContainEqual({ name: 'WORKER_QUEUES', value: role });
      const budget = byKind('PodDisruptionBudget').find((b) => b.metadata.name === name);
      expect(template.metadata.labels).toMatchObject((budget!.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels);
      const scaler = byKind('ScaledObject').find((s) => s.metadata.name === name)!.spec as { scaleTargetRef: { name: string }; triggers: Array<{ type: string; metadata: Record<string, string> }> };
      expect(scaler.scaleTargetRef.name).toBe(name);
      expect(scaler.triggers[0]).toMatchObject({ type: 'redis', metadata: { listName: `${config.data.QUEUE_PREFIX}:${role}:wait` } });
    }
    expect(byKind('Deployment')).toHaveLength(roles.length + 1);
  });

  it('marks every pod for scraping on a port it listens on, and keeps a supervisor through disruptions', () => {
    for (const deployment of byKind('Deployment')) {
      const template = (deployment.spec as { template: PodTemplate }).template;
      const annotations = template.metadata.annotations ?? {};
      expect(annotations['prometheus.io/scrape']).toBe('true');
      expect(template.spec.containers[0]!.ports?.map((p) => String(p.containerPort))).toContain(annotations['prometheus.io/port']);
    }
    const supervisorBudget = byKind('PodDisruptionBudget').find((b) => b.metadata.name === 'switchyard-supervisor');
    expect(supervisorBudget?.spec).toMatchObject({ minAvailable: 1 });
  });

  it('the generated worker files match the workflow files (run `npm run deploy:render` after changing a role)', () => {
    for (const [file, expected] of Object.entries(renderAll())) expect({ file, text: readFileSync(file, 'utf8') }).toEqual({ file, text: expected });
  });
});

describe('Compose', () => {
  const compose = YAML.parse(readFileSync(OUTPUTS.compose, 'utf8'), { merge: true }) as {
    services: Record<string, { profiles?: string[]; environment?: Record<string, string>; command?: string[]; volumes?: string[] }>;
  };

  it('brings up Postgres, Redis, migrations, the sim, the supervisor and one worker per role; Prometheus and Grafana only with the observability profile', () => {
    const core = Object.entries(compose.services).filter(([, s]) => !s.profiles).map(([name]) => name);
    expect(core.sort()).toEqual(['postgres', 'redis', 'migrate', 'llm-sim', 'supervisor', ...roles.map((r) => `worker-${k8sName(r)}`)].sort());
    for (const role of roles) {
      const worker = compose.services[`worker-${k8sName(role)}`]!;
      expect(worker.environment).toMatchObject({ WORKER_QUEUES: role, WORKER_PORT: '8081' });
      expect(worker.command).toEqual(['apps/worker/dist/main.js']);
    }
    expect(compose.services.prometheus?.profiles).toEqual(['observability']);
    expect(compose.services.grafana?.profiles).toEqual(['observability']);
    for (const service of Object.values(compose.services)) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('./')) expect({ volume, exists: existsSync(join(dirname(OUTPUTS.compose), source)) }).toEqual({ volume, exists: true });
      }
    }
  });

  const hasComposeClient = spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status === 0;
  (hasComposeClient ? it : it.skip)(
    hasComposeClient ? '`docker compose config` accepts compose.yaml' : '`docker compose config` accepts compose.yaml (skipped: no docker compose client on this machine)',
    () => {
      const result = spawnSync('docker', ['compose', '-f', OUTPUTS.compose, '--profile', 'observability', 'config', '--quiet'], {
        env: { ...process.env, POSTGRES_PASSWORD: 'check-only', API_KEYS: 'acme:check-only-key', ADMIN_TOKEN: 'check-only-admin-token' },
        encoding: 'utf8',
      });
      expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    },
  );
});

describe('observability files', () => {
  /** Every metric name a process registers today, read from the source (string literals `switchyard_…`). */
  function registeredMetrics(): Set<string> {
    const names = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory() && !['dist', 'node_modules'].includes(entry.name)) walk(path);
        else if (entry.isFile() && entry.name.endsWith('.ts') && !/\.(int-)?spec\.ts$/.test(entry.name)) {
          for (const match of readFileSync(path, 'utf8').matchAll(/['"`](switchyard_[a-z0-9_]+)['"`]/g)) names.add(match[1]!);
        }
      }
    };
    for (const root of ['apps', 'libs']) walk(join(REPO, root));
    return names;
  }
  const metricsIn = (expr: string) => [...expr.matchAll(/\b(switchyard_[a-z0-9_]+)/g)].map((m) => m[1]!).filter((name) => !name.includes(':'));

  const rules = YAML.parse(readFileSync(join(REPO, 'docker/observability/alert-rules.yml'), 'utf8')) as {
    groups: Array<{ rules: Array<{ record?: string; alert?: string; expr: string; labels?: Record<string, string> }> }>;
  };
  const allRules = rules.groups.flatMap((g) => g.rules);
  const dashboard = JSON.parse(readFileSync(join(REPO, 'docker/observability/grafana/dashboards/switchyard-overview.json'), 'utf8')) as {
    panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
  };

  it('alert rules and dashboard panels name only metrics a process registers, except rules labelled as placeholders', () => {
    const registered = registeredMetrics();
    expect(registered.has('switchyard_upstream_calls_total')).toBe(true);
    const recorded = new Set(allRules.flatMap((r) => (r.record ? [r.record] : [])));
    const unknown = [
      ...allRules.filter((r) => r.labels?.placeholder !== 'true').flatMap((r) => metricsIn(r.expr).map((m) => `${r.alert ?? r.record}: ${m}`)),
      ...dashboard.panels.flatMap((p) => p.targets.flatMap((t) => metricsIn(t.expr).map((m) => `${p.title}: ${m}`))),
    ].filter((entry) => !registered.has(entry.split(': ')[1]!));
    expect(unknown).toEqual([]);
    for (const panel of dashboard.panels) for (const target of panel.targets) for (const name of target.expr.match(/switchyard:[a-z0-9_:]+/g) ?? []) expect(recorded).toContain(name);
  });

  it("covers the seed's three signals and the operational alerts", () => {
    const alerts = allRules.flatMap((r) => (r.alert ? [r.alert] : []));
    expect(alerts).toEqual(
      expect.arrayContaining(['SwitchyardSuccessRateLow', 'SwitchyardLocalShareDropped', 'SwitchyardUpstreamLatencyHigh', 'SwitchyardBreakerOpen', 'SwitchyardRetryBudgetExhausted', 'SwitchyardStaleTasks']),
    );
    for (const rule of allRules.filter((r) => r.labels?.placeholder === 'true')) expect(readFileSync(join(REPO, 'docker/observability/alert-rules.yml'), 'utf8')).toContain(`- alert: ${rule.alert}\n        # PLACEHOLDER`);
  });
});

describe('the image build', () => {
  const dockerfile = readFileSync(join(REPO, 'docker/Dockerfile'), 'utf8');
  const scripts = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

  it('is on Node 24 LTS', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-/m);
  });

  it('builds only projects that never reach bench/ (which .dockerignore leaves out)', () => {
    expect(dockerfile).toContain('npm run build:image');
    expect(readFileSync(join(REPO, '.dockerignore'), 'utf8').split('\n')).toContain('bench');
    const projects = scripts['build:image']!.match(/tsc -b ([^&]+)/)![1]!.trim().split(/\s+/);
    const seen = new Set<string>();
    const visit = (project: string) => {
      const file = resolve(REPO, project);
      if (seen.has(file)) return;
      seen.add(file);
      const config = JSON.parse(readFileSync(file, 'utf8')) as { references?: Array<{ path: string }> };
      for (const ref of config.references ?? []) visit(join(dirname(file), ref.path));
    };
    projects.forEach(visit);
    const reached = [...seen].map((file) => file.slice(REPO.length + 1));
    expect(reached).toEqual(expect.arrayContaining(['apps/supervisor/tsconfig.app.json', 'apps/worker/tsconfig.app.json', 'libs/state/tsconfig.lib.json']));
    expect(reached.filter((file) => file.startsWith('bench/') || file.startsWith('apps/demo/'))).toEqual([]);
    // The bench itself stays buildable in the repository.
    expect(JSON.parse(readFileSync(join(REPO, 'tsconfig.build.json'), 'utf8')).references).toContainEqual({ path: 'bench/tsconfig.bench.json' });
  });
});
