import { Controller, Get, Module } from '@nestjs/common';
import { loadConfig } from '@switchyard/config';
import { SupervisorModule } from '../app.module';
import { declaredRoutes } from './nest-routes';
import { buildOpenApiDocument, openApiPath } from './openapi-document';
import { ROUTES } from './route-catalog';

const key = (route: { method: string; path: string }) => `${route.method.toUpperCase()} ${openApiPath(route.path)}`;
const documented = () => {
  const document = buildOpenApiDocument(ROUTES, '1');
  return Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
};

describe('OpenAPI document', () => {
  const supervisor = SupervisorModule.forRoot(loadConfig({}));

  it('documents every route the supervisor registers, and no route it does not', () => {
    const registered = declaredRoutes(supervisor).map(key).sort();
    const catalogued = ROUTES.filter((route) => route.servedBy !== 'static').map(key).sort();
    expect(registered.length).toBeGreaterThan(15);
    expect(catalogued).toEqual(registered);
    expect(documented().sort()).toEqual(ROUTES.map(key).sort());
  });

  it('notices a route that has no entry in the catalog', () => {
    @Controller('v1/widgets')
    class WidgetsController {
      @Get()
      list() {
        return [];
      }
    }
    @Module({ controllers: [WidgetsController] })
    class WidgetsModule {}
    const registered = declaredRoutes({ ...supervisor, imports: [...(supervisor.imports ?? []), WidgetsModule] }).map(key);
    const catalogued = new Set(ROUTES.map(key));
    expect(registered.filter((route) => !catalogued.has(route))).toEqual(['GET /v1/widgets']);
  });

  it('is OpenAPI 3.1 with request schemas from the validators and an error body for every failure', () => {
    const document = buildOpenApiDocument(ROUTES, '1');
    expect(document.openapi).toBe('3.1.0');
    const submit = document.paths['/v1/jobs']?.post as { requestBody: { content: Record<string, { schema: unknown }> }; responses: Record<string, unknown> };
    expect(JSON.stringify(submit.requestBody.content['application/json']?.schema)).toContain('"documents"');
    const adminJob = document.paths['/admin/jobs/{id}']?.get as { parameters: Array<{ name: string; in: string; required: boolean }>; security: unknown };
    expect(adminJob.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true })]);
    expect(adminJob.security).toEqual([{ adminToken: [] }]);
    const list = document.paths['/admin/jobs']?.get as { parameters: Array<{ name: string }> };
    expect(list.parameters.map((p) => p.name)).toEqual(['status', 'type', 'tenant', 'limit', 'cursor']);
    for (const route of ROUTES) {
      if (route.auth === 'none') continue;
      expect(Object.keys(route.responses)).toEqual(expect.arrayContaining(['400', '401']));
    }
  });
});
