import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIGRATIONS_FOLDER } from '../migrate';
import { FENCE, dependenciesDoneSql } from './task-clauses';

/**
 * The one-round-trip finish lives in a migration (switchyard_finish_task, 0009, redefined in
 * 0015): its lease fence and its fan-in clause must stay the text of the ones every other
 * statement is built from, in every version of it.
 */
describe('switchyard_finish_task (migrations 0009 and 0015)', () => {
  const squash = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();
  const versions = ['0009_finish_task_function.sql', '0015_ready_dependents_by_job.sql'].map((file) => squash(readFileSync(join(MIGRATIONS_FOLDER, file), 'utf8')));

  it('fences the task with the text of FENCE', () => {
    for (const migration of versions) expect(migration).toContain(squash(FENCE));
  });

  it("reads ready dependents with the text of the fan-in clause (dependenciesDoneSql('d'))", () => {
    for (const migration of versions) expect(migration).toContain(squash(dependenciesDoneSql('d')));
  });

  it("admits (switchyard_admit, migrations 0010, 0012 and 0014) with the text of the fan-in clause (dependenciesDoneSql('a'))", () => {
    for (const file of ['0010_admission_functions.sql', '0012_admit_new_job_at_insert.sql', '0014_job_admission_table.sql']) {
      expect(squash(readFileSync(join(MIGRATIONS_FOLDER, file), 'utf8'))).toContain(squash(dependenciesDoneSql('a')));
    }
  });

  it('is listed in the migration journal', () => {
    const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] };
    expect(journal.entries.map((e) => e.tag)).toEqual(expect.arrayContaining(['0009_finish_task_function', '0010_admission_functions', '0012_admit_new_job_at_insert', '0014_job_admission_table', '0015_ready_dependents_by_job']));
  });
});
