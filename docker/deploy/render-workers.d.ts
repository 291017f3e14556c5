/** Types of render-workers.js (plain CommonJS so that `npm run deploy:render` needs no build). */
export declare const QUEUE_PREFIX: string;
export declare const OUTPUTS: { prometheus: string; workers: string; keda: string; compose: string };
export declare function workflowRoles(dir?: string): string[];
export declare function k8sName(role: string): string;
export declare function renderAll(roles?: string[]): Record<string, string>;
export declare function renderComposeWorkers(roles: string[]): string;
