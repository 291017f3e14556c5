import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from '@switchyard/observability';
import { DOCS_INIT_SCRIPT } from '../openapi/openapi.controller';

/** Where `npm run build` puts the dashboard (apps/ui/dist), seen from apps/supervisor/{src,dist}. */
export const DEFAULT_UI_DIR = join(__dirname, '..', '..', '..', 'ui', 'dist');

/**
 * Files that are not API routes: the dashboard's build output at /ui/ and Swagger UI's
 * assets at /docs/assets/, both from local folders (the machine may have no internet).
 */
export async function serveStaticAssets(app: NestFastifyApplication, logger: Logger, uiDir: string = DEFAULT_UI_DIR): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance();
  if (existsSync(join(uiDir, 'index.html'))) {
    await app.register(fastifyStatic, { root: uiDir, prefix: '/ui/', index: 'index.html', cacheControl: true, maxAge: 0 });
    // SPEC §4 names the page GET /ui; its assets are relative to /ui/.
    fastify.get('/ui', (_request, reply) => {
      void reply.redirect('/ui/', 302);
    });
  } else {
    logger.warn({ ui_dir: uiDir }, 'the dashboard is not built (npm run build): /ui answers 404');
    const notBuilt = (_request: unknown, reply: { code(status: number): { send(body: unknown): void } }) =>
      reply.code(404).send({ error: { code: 'not_found', message: 'the dashboard is not built: run npm run build' } });
    fastify.get('/ui', notBuilt);
    fastify.get('/ui/*', notBuilt);
  }
  await app.register(fastifyStatic, { root: dirname(require.resolve('swagger-ui-dist/package.json')), prefix: '/docs/assets/', decorateReply: false, index: false });
  fastify.get('/docs/assets/docs-init.js', (_request, reply) => {
    void reply.type('application/javascript; charset=utf-8').send(DOCS_INIT_SCRIPT);
  });
}
