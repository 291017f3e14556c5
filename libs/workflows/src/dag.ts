/** Dependency graphs of roles (a workflow's `after`) and of subtasks (a plan's `depends_on`). */
export interface GraphNode {
  id: string;
  dependsOn: readonly string[];
}

/**
 * The first cycle found, as a path that ends where it starts (`[a, b, a]`), or null.
 * Dependencies on ids that are not nodes are ignored here; callers report them.
 */
export function findCycle(nodes: readonly GraphNode[]): string[] | null {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    const seen = state.get(id);
    if (seen === 'done') return null;
    if (seen === 'visiting') return [...stack.slice(stack.indexOf(id)), id];
    state.set(id, 'visiting');
    stack.push(id);
    for (const dep of byId.get(id)?.dependsOn ?? []) {
      if (!byId.has(dep)) continue;
      const cycle = visit(dep);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(id, 'done');
    return null;
  };
  for (const node of nodes) {
    const cycle = visit(node.id);
    if (cycle) return cycle;
  }
  return null;
}

/**
 * Levels of a DAG: level 0 has no dependencies, level n depends only on levels below n
 * (at least one dependency on level n-1). Within a level, the input order is kept.
 * Throws on a cycle: validate with `findCycle` first.
 */
export function topologicalLevels(nodes: readonly GraphNode[]): string[][] {
  const ids = new Set(nodes.map((node) => node.id));
  const level = new Map<string, number>();
  let remaining = [...nodes];
  while (remaining.length > 0) {
    const next: GraphNode[] = [];
    for (const node of remaining) {
      const deps = node.dependsOn.filter((dep) => ids.has(dep));
      if (deps.every((dep) => level.has(dep))) level.set(node.id, Math.max(-1, ...deps.map((dep) => level.get(dep)!)) + 1);
      else next.push(node);
    }
    if (next.length === remaining.length) throw new Error(`dependency cycle among: ${next.map((n) => n.id).join(', ')}`);
    remaining = next;
  }
  const levels: string[][] = [];
  for (const node of nodes) (levels[level.get(node.id)!] ??= []).push(node.id);
  return levels;
}

/** Every node in dependency order (level by level, input order within a level). */
export function topologicalOrder(nodes: readonly GraphNode[]): string[] {
  return topologicalLevels(nodes).flat();
}

/** Every node `id` depends on, directly or transitively. */
export function upstreamOf(nodes: readonly GraphNode[], id: string): Set<string> {
  const byId = new Map(nodes.map((node) => [node.id, node]));
  const seen = new Set<string>();
  const pending = [...(byId.get(id)?.dependsOn ?? [])];
  while (pending.length > 0) {
    const dep = pending.pop()!;
    if (seen.has(dep)) continue;
    seen.add(dep);
    pending.push(...(byId.get(dep)?.dependsOn ?? []));
  }
  return seen;
}
