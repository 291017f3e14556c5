import { GroupCommit } from './group-commit';

/** A store whose batch writes are one transaction: all rows or none; a "poison" row fails its statement. */
class AtomicStore {
  readonly rows: string[] = [];
  readonly statements: string[][] = [];
  private pending: (() => void)[] = [];
  paused = false;

  async write(items: readonly string[]): Promise<string[]> {
    this.statements.push([...items]);
    if (this.paused) await new Promise<void>((resolve) => this.pending.push(resolve));
    if (items.includes('poison')) throw new Error('the database refused a row');
    this.rows.push(...items);
    return items.map((item) => `stored ${item}`);
  }

  release(): void {
    this.paused = false;
    for (const resolve of this.pending.splice(0)) resolve();
  }
}

function committer(store: AtomicStore, options: { maxBatch?: number; maxInFlight?: number } = {}) {
  return new GroupCommit<string, string>({
    writeBatch: (items) => store.write(items),
    writeOne: async (item) => (await store.write([item]))[0]!,
    ...options,
  });
}

describe('GroupCommit', () => {
  it('writes a lone item at once, alone', async () => {
    const store = new AtomicStore();
    await expect(committer(store).write('a')).resolves.toBe('stored a');
    expect(store.statements).toEqual([['a']]);
  });

  it('merges the items that arrive while batches are being written into the next statement', async () => {
    const store = new AtomicStore();
    const commit = committer(store, { maxInFlight: 1 });
    store.paused = true;
    const first = commit.write('a');
    const rest = ['b', 'c', 'd'].map((item) => commit.write(item));
    store.release();
    await expect(Promise.all([first, ...rest])).resolves.toEqual(['stored a', 'stored b', 'stored c', 'stored d']);
    expect(store.statements).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('keeps batches to maxBatch items and at most maxInFlight statements at once', async () => {
    const store = new AtomicStore();
    const commit = committer(store, { maxBatch: 2, maxInFlight: 2 });
    store.paused = true;
    const writes = ['a', 'b', 'c', 'd', 'e', 'f'].map((item) => commit.write(item));
    await Promise.resolve();
    expect(store.statements).toEqual([['a'], ['b']]);
    store.release();
    await Promise.all(writes);
    expect(store.statements.map((s) => s.length).every((n) => n <= 2)).toBe(true);
    expect([...store.rows].sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('when a batch fails part-way, writes each item again alone: nothing lost, nothing written twice, only the bad item fails', async () => {
    const store = new AtomicStore();
    const commit = committer(store, { maxInFlight: 1 });
    store.paused = true;
    const first = commit.write('a');
    const batch = ['b', 'poison', 'c'].map((item) => commit.write(item).then((r) => r, (error: Error) => `failed: ${error.message}`));
    store.release();
    await expect(Promise.all([first, ...batch])).resolves.toEqual(['stored a', 'stored b', 'failed: the database refused a row', 'stored c']);
    expect(store.statements).toEqual([['a'], ['b', 'poison', 'c'], ['b'], ['poison'], ['c']]);
    expect([...store.rows].sort()).toEqual(['a', 'b', 'c']);
  });

  it('goes on writing after a failure', async () => {
    const store = new AtomicStore();
    const commit = committer(store);
    await expect(commit.write('poison')).rejects.toThrow('the database refused a row');
    await expect(commit.write('z')).resolves.toBe('stored z');
  });
});
