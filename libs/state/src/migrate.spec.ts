import { MIGRATIONS_FOLDER, missingMigrations, shippedMigrations } from './migrate';

describe('missingMigrations', () => {
  const shipped = [
    { tag: '0000_init', when: 100 },
    { tag: '0001_next', when: 200 },
    { tag: '0002_last', when: 300 },
  ];

  it('names every shipped migration a never-migrated database lacks, in order', () => {
    expect(missingMigrations(shipped, [])).toEqual(['0000_init', '0001_next', '0002_last']);
  });

  it('names only the ones not applied', () => {
    expect(missingMigrations(shipped, [100, 200])).toEqual(['0002_last']);
    expect(missingMigrations(shipped, [100, 300])).toEqual(['0001_next']);
  });

  it('is empty when all are applied, whatever else the table holds', () => {
    expect(missingMigrations(shipped, [100, 200, 300, 50])).toEqual([]);
  });

  it('reads the shipped journal', () => {
    const tags = shippedMigrations(MIGRATIONS_FOLDER).map((m) => m.tag);
    expect(tags[0]).toBe('0000_init');
    expect(tags.length).toBeGreaterThanOrEqual(3);
  });
});
