import { defineConfig } from 'vite';

// The dashboard is served by the supervisor at /ui/ from this build's output (apps/ui/dist).
export default defineConfig({
  root: import.meta.dirname,
  base: '/ui/',
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: true },
  logLevel: 'warn',
});
