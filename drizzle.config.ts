import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './libs/state/src/schema/index.ts',
  out: './migrations',
});
