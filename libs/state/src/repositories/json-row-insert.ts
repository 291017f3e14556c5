import { getTableColumns, getTableName, type Table } from 'drizzle-orm';

/**
 * Rows sent to Postgres as one JSON parameter and expanded there by
 * `jsonb_populate_record(set)`: one pre-built statement for any number of rows, with no query
 * builder work per call and no parameter limit. Absent fields take the column's default,
 * which the statement applies itself (`defaults`, SQL by column name).
 */
export interface JsonRowInsert<Row> {
  /** The column list, `a, b, c`. */
  readonly columns: string;
  /** The select list over the expanded record `r`, defaults applied: `r.a, coalesce(r.b, 0), …`. */
  readonly values: string;
  /** `values` with the given columns set to SQL expressions of the statement's instead of the rows' fields. */
  valuesWith(overrides: Readonly<Record<string, string>>): string;
  /** `insert into <table> (<columns>) select <values> from jsonb_populate_recordset(null::<table>, $n::jsonb) r`, with `overrides` as in `valuesWith`. */
  insertFromArray(parameter: number, overrides?: Readonly<Record<string, string>>): string;
  /** A row as JSON keyed by column name; null and undefined fields are left out. */
  toJson(row: Row): Record<string, unknown>;
}

export function jsonRowInsert<Row extends object>(
  table: Table,
  defaults: Readonly<Record<string, string>>,
  options: { generated?: readonly string[] } = {},
): JsonRowInsert<Row> {
  const name = getTableName(table);
  const generated = new Set(options.generated ?? []);
  const all = Object.entries(getTableColumns(table)).map(([key, column]) => ({ key, name: column.name, hasDefault: column.hasDefault }));
  for (const column of all) {
    if (column.hasDefault && !generated.has(column.name) && !(column.name in defaults)) throw new Error(`${name}: no insert default for column ${column.name}`);
  }
  const columns = all.filter((c) => !generated.has(c.name));
  const columnList = columns.map((c) => c.name).join(', ');
  const valuesWith = (overrides: Readonly<Record<string, string>>): string => {
    for (const column of Object.keys(overrides)) {
      if (!columns.some((c) => c.name === column)) throw new Error(`${name}: no column ${column} to override`);
    }
    return columns
      .map((c) => overrides[c.name] ?? (defaults[c.name] ? `coalesce(r.${c.name}, ${defaults[c.name]})` : `r.${c.name}`))
      .join(', ');
  };
  return {
    columns: columnList,
    values: valuesWith({}),
    valuesWith,
    insertFromArray: (parameter, overrides = {}) =>
      `insert into ${name} (${columnList}) select ${valuesWith(overrides)} from jsonb_populate_recordset(null::${name}, $${parameter}::jsonb) r`,
    toJson: (row) => {
      const out: Record<string, unknown> = {};
      for (const { key, name: column } of columns) {
        const value = (row as Record<string, unknown>)[key];
        if (value !== undefined && value !== null) out[column] = value;
      }
      return out;
    },
  };
}
