#!/usr/bin/env node
/**
 * One worker per role, for Compose and Kubernetes, from the workflow files.
 *
 * The roles are the `agents[].role` of config/workflows/*.yaml, so no role list is kept by
 * hand here. Writes docker/k8s/30-workers.yaml (a Deployment and a PodDisruptionBudget per
 * role), docker/k8s/40-keda-scaledobjects.yaml (a ScaledObject per role's queue) and the
 * generated block of docker/compose.yaml (a worker service per role) with its Prometheus
 * scrape config (docker/observability/prometheus.yml).
 *
 *   npm run deploy:render            # after adding or renaming a role in a workflow file
 *
 * docker/deploy/manifests.spec.ts fails while the committed files differ from what this renders.
 */
const { readFileSync, readdirSync, writeFileSync } = require('node:fs');
const { join, resolve } = require('node:path');
const YAML = require('yaml');

const REPO_ROOT = resolve(__dirname, '..', '..');
const QUEUE_PREFIX = '{switchyard}';
const COMPOSE_BEGIN = '  # BEGIN generated workers (npm run deploy:render; one per role of config/workflows)';
const COMPOSE_END = '  # END generated workers';

/** Queues that see more work than the rest get a higher ceiling (one job per document for extract). */
const MAX_REPLICAS = { extract: 20 };
const DEFAULT_MAX_REPLICAS = 10;

/** Every role of every workflow file, in file order then agent order, each once. */
function workflowRoles(dir = join(REPO_ROOT, 'config', 'workflows')) {
  const roles = [];
  for (const file of readdirSync(dir).filter((name) => /\.ya?ml$/.test(name)).sort()) {
    const workflow = YAML.parse(readFileSync(join(dir, file), 'utf8'));
    for (const agent of workflow?.agents ?? []) {
      if (typeof agent?.role !== 'string') throw new Error(`${file}: an agent without a role`);
      if (!roles.includes(agent.role)) roles.push(agent.role);
    }
  }
  if (roles.length === 0) throw new Error(`no roles found in ${dir}`);
  return roles;
}

/** Kubernetes names allow lower-case letters, digits and '-': `log_reader` → `log-reader`. */
const k8sName = (role) => role.replace(/_/g, '-');
const roleLabels = (role) => ({ 'app.kubernetes.io/name': 'switchyard', 'app.kubernetes.io/component': 'worker', 'switchyard/role': k8sName(role) });

function workerDeployment(role) {
  const name = `switchyard-worker-${k8sName(role)}`;
  const probe = (path, timing) => ({ httpGet: { path, port: 'health' }, ...timing });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'switchyard', labels: roleLabels(role) },
    spec: {
      selector: { matchLabels: roleLabels(role) },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: {
          labels: roleLabels(role),
          annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '8081', 'prometheus.io/path': '/metrics' },
        },
        spec: {
          terminationGracePeriodSeconds: 30,
          securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'worker',
              image: 'switchyard:0.1.0',
              args: ['apps/worker/dist/main.js'],
              ports: [{ name: 'health', containerPort: 8081 }],
              env: [
                { name: 'WORKER_QUEUES', value: role },
                { name: 'WORKER_CONCURRENCY', value: '8' },
                { name: 'WORKER_PORT', value: '8081' },
                { name: 'HOST', value: '0.0.0.0' },
              ],
              envFrom: [{ configMapRef: { name: 'switchyard-env' } }, { secretRef: { name: 'switchyard-secrets' } }],
              startupProbe: probe('/healthz', { periodSeconds: 2, failureThreshold: 30 }),
              livenessProbe: probe('/healthz', { periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 }),
              readinessProbe: probe('/readyz', { periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 }),
              resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '512Mi' } },
              volumeMounts: [
                { name: 'router-config', mountPath: '/etc/switchyard', readOnly: true },
                { name: 'tmp', mountPath: '/tmp' },
              ],
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
            },
          ],
          volumes: [
            { name: 'router-config', configMap: { name: 'switchyard-router' } },
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
    },
  };
}

function workerDisruptionBudget(role) {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: `switchyard-worker-${k8sName(role)}`, namespace: 'switchyard', labels: roleLabels(role) },
    spec: { maxUnavailable: 1, selector: { matchLabels: roleLabels(role) } },
  };
}

function workerScaledObject(role) {
  const name = `switchyard-worker-${k8sName(role)}`;
  return {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: { name, namespace: 'switchyard', labels: roleLabels(role) },
    spec: {
      scaleTargetRef: { name },
      minReplicaCount: 1,
      maxReplicaCount: MAX_REPLICAS[role] ?? DEFAULT_MAX_REPLICAS,
      pollingInterval: 10,
      advanced: {
        horizontalPodAutoscalerConfig: {
          behavior: { scaleDown: { stabilizationWindowSeconds: 300, policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } },
        },
      },
      triggers: [
        {
          type: 'redis',
          metadata: {
            address: 'redis.switchyard.svc.cluster.local:6379',
            listName: `${QUEUE_PREFIX}:${role}:wait`,
            listLength: '16',
            databaseIndex: '0',
            enableTLS: 'false',
          },
          authenticationRef: { name: 'switchyard-redis' },
        },
      ],
    },
  };
}

const stringify = (docs) => docs.map((doc) => YAML.stringify(doc, { lineWidth: 0 })).join('---\n');

const WORKERS_HEADER = `# GENERATED by docker/deploy/render-workers.js from config/workflows/*.yaml: do not edit,
# run \`npm run deploy:render\` after adding or renaming a role.
#
# One Deployment per role (WORKER_QUEUES=<role>), so each role scales on its own queue depth
# (40-keda-scaledobjects.yaml), and a PodDisruptionBudget per role so that a node drain takes
# at most one worker of a role at a time.
# - No \`replicas\`: KEDA's HPA owns the count; a fixed value would be reset on every apply.
#   Without KEDA each Deployment runs 1 replica.
# - terminationGracePeriodSeconds 30 = SHUTDOWN_GRACE_MS (20 s) + 10 s: on SIGTERM a worker
#   stops taking jobs and finishes or hands back what it holds (checkpoints are in Postgres).
# - The health server (WORKER_PORT 8081) binds HOST; 0.0.0.0 so the kubelet can probe the pod
#   IP. It serves /healthz, /readyz (Postgres and Redis) and /metrics, scraped through the
#   prometheus.io/* annotations.
# - image: REPLACE switchyard:0.1.0 with your registry/image:tag.
`;

const KEDA_HEADER = `# GENERATED by docker/deploy/render-workers.js from config/workflows/*.yaml: do not edit,
# run \`npm run deploy:render\` after adding or renaming a role.
#
# Autoscaling of the worker Deployments with KEDA (CRDs must be installed; keda.sh/v1alpha1).
# What is measured: BullMQ keeps the ids of jobs ready to run in a Redis LIST
# \`<QUEUE_PREFIX>:<role>:wait\`; the scaler reads its LLEN and the HPA aims at
# ceil(LLEN / listLength) replicas (listLength 16 = 2 x WORKER_CONCURRENCY), within min/max.
# What is not: running jobs (:active), retries waiting out their backoff (:delayed), and
# fan-in jobs waiting for their children (:waiting-children). That is one reason
# minReplicaCount is 1, not 0: BullMQ workers move due delayed jobs back to \`wait\`, so with
# zero workers a retry would never become visible here.
# Scale up at once, down slowly: a scaled-down worker hands its running tasks back.
# - address: host:port of the Redis in REDIS_URL. REPLACE. enableTLS "true" for rediss://.
# - Redis Cluster: \`type: redis-cluster\` with \`addresses:\`; the {switchyard} hash tag keeps
#   each queue's keys in one slot. If QUEUE_PREFIX changes, change listName too.
# - Redis Sentinel: \`type: redis-sentinel\` with \`addresses:\` (REDIS_SENTINELS) and
#   \`sentinelMaster:\` (REDIS_SENTINEL_MASTER).
# - authenticationRef: drop it if Redis has no password.
`;

const TRIGGER_AUTHENTICATION = {
  apiVersion: 'keda.sh/v1alpha1',
  kind: 'TriggerAuthentication',
  metadata: { name: 'switchyard-redis', namespace: 'switchyard' },
  spec: { secretTargetRef: [{ parameter: 'password', name: 'switchyard-secrets', key: 'REDIS_PASSWORD' }] },
};

function renderK8sWorkers(roles) {
  return WORKERS_HEADER + stringify(roles.flatMap((role) => [workerDeployment(role), workerDisruptionBudget(role)]));
}

function renderKedaScaledObjects(roles) {
  return KEDA_HEADER + stringify([TRIGGER_AUTHENTICATION, ...roles.map(workerScaledObject)]);
}

/** The worker services of docker/compose.yaml: each extends the `worker` template (x-worker) with its one role. */
function renderComposeWorkers(roles) {
  const services = roles.map(
    (role) => `  worker-${k8sName(role)}:
    <<: *worker
    environment:
      <<: *worker-env
      WORKER_QUEUES: ${role}
`,
  );
  return `${COMPOSE_BEGIN}\n${services.join('\n')}${COMPOSE_END}`;
}

function replaceComposeWorkers(composeText, roles) {
  const begin = composeText.indexOf(COMPOSE_BEGIN);
  const end = composeText.indexOf(COMPOSE_END);
  if (begin < 0 || end < begin) throw new Error('docker/compose.yaml has no generated workers block');
  return composeText.slice(0, begin) + renderComposeWorkers(roles) + composeText.slice(end + COMPOSE_END.length);
}

/** Prometheus for the compose `observability` profile: the supervisor and one worker service per role. */
function renderPrometheusConfig(roles) {
  const config = {
    global: { scrape_interval: '15s', evaluation_interval: '15s' },
    rule_files: ['/etc/prometheus/alert-rules.yml'],
    scrape_configs: [
      { job_name: 'switchyard-supervisor', metrics_path: '/metrics', static_configs: [{ targets: ['supervisor:3000'] }] },
      {
        job_name: 'switchyard-worker',
        metrics_path: '/metrics',
        // A scaled service (`--scale worker-extract=3`) has several addresses under one name.
        dns_sd_configs: [{ names: roles.map((role) => `worker-${k8sName(role)}`), type: 'A', port: 8081 }],
      },
    ],
  };
  return `# GENERATED by docker/deploy/render-workers.js (npm run deploy:render): do not edit.\n${YAML.stringify(config, { lineWidth: 0 })}`;
}

const OUTPUTS = {
  prometheus: join(REPO_ROOT, 'docker', 'observability', 'prometheus.yml'),
  workers: join(REPO_ROOT, 'docker', 'k8s', '30-workers.yaml'),
  keda: join(REPO_ROOT, 'docker', 'k8s', '40-keda-scaledobjects.yaml'),
  compose: join(REPO_ROOT, 'docker', 'compose.yaml'),
};

/** What the three files should contain for the current workflow files. */
function renderAll(roles = workflowRoles()) {
  return {
    [OUTPUTS.workers]: renderK8sWorkers(roles),
    [OUTPUTS.keda]: renderKedaScaledObjects(roles),
    [OUTPUTS.compose]: replaceComposeWorkers(readFileSync(OUTPUTS.compose, 'utf8'), roles),
    [OUTPUTS.prometheus]: renderPrometheusConfig(roles),
  };
}

module.exports = { workflowRoles, k8sName, renderAll, renderComposeWorkers, OUTPUTS, QUEUE_PREFIX };

if (require.main === module) {
  for (const [file, text] of Object.entries(renderAll())) writeFileSync(file, text);
  process.stdout.write(`rendered workers for roles: ${workflowRoles().join(', ')}\n`);
}
