import { findCycle, topologicalLevels, topologicalOrder, upstreamOf } from './dag';

const node = (id: string, ...dependsOn: string[]) => ({ id, dependsOn });

describe('dependency graphs', () => {
  const diamond = [node('merge', 'logs', 'history'), node('triage'), node('logs', 'triage'), node('history', 'triage')];

  it('orders a DAG by levels, keeping the input order within a level', () => {
    expect(topologicalLevels(diamond)).toEqual([['triage'], ['logs', 'history'], ['merge']]);
    expect(topologicalOrder(diamond)).toEqual(['triage', 'logs', 'history', 'merge']);
  });

  it('puts a node on the level after its deepest dependency', () => {
    expect(topologicalLevels([node('a'), node('b', 'a'), node('c', 'b'), node('d', 'a', 'c')])).toEqual([['a'], ['b'], ['c'], ['d']]);
  });

  it('finds no cycle in a DAG and ignores unknown dependencies', () => {
    expect(findCycle(diamond)).toBeNull();
    expect(findCycle([node('a', 'ghost')])).toBeNull();
    expect(topologicalLevels([node('a', 'ghost')])).toEqual([['a']]);
  });

  it('reports a cycle as a path that ends where it starts', () => {
    expect(findCycle([node('a', 'b'), node('b', 'c'), node('c', 'a')])).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle([node('x'), node('a', 'a')])).toEqual(['a', 'a']);
    expect(() => topologicalLevels([node('a', 'b'), node('b', 'a')])).toThrow('dependency cycle among: a, b');
  });

  it('collects transitive dependencies', () => {
    expect([...upstreamOf(diamond, 'merge')].sort()).toEqual(['history', 'logs', 'triage']);
    expect(upstreamOf(diamond, 'triage').size).toBe(0);
  });
});
