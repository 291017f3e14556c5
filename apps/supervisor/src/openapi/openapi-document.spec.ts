import { Controller, Get, Module } from '@nestjs/common';
import { loadConfig } from '@switchyard/config';
import { SupervisorModule } from '../app.module';
import { CHAT_COMPLETIONS_PATH } from '../gateway/chat-completions.route';
import { declaredRoutes } from './nest-routes';
import { loadWorkflowsDir } from '@switchyard/workflows';
import { buildOpenApiDocument, openApiPath, withWorkflowSubmissions } from './openapi-document';
import { JOB_SUBMISSION_PATH, ROUTES } from './route-catalog';

const key = (route: { method: string; path: string }) => `${route.method.toUpperCase()} ${openApiPath(route.path)}`;
const documented = () => {
  const document = buildOpenApiDocument(ROUTES, '1');
  return Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
};

describe('OpenAPI document', () => {
  const supervisor = SupervisorModule.forRoot(loadConfig({}));

  it('documents every route the supervisor registers, and no route it does not', () => {
    const registered = declaredRoutes(supervisor).map(key).sort();
    const catalogued = ROUTES.filter((route) => route.servedBy === undefined).map(key).sort();
    expect(registered.length).toBeGreaterThan(15);
    expect(catalogued).toEqual(registered);
    expect(documented().sort()).toEqual(ROUTES.map(key).sort());
    expect(ROUTES.filter((route) => route.servedBy === 'http').map(key)).toEqual([`POST ${CHAT_COMPLETIONS_PATH}`]);
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
    // The envelope here; the served document puts each workflow's input schema in its place (below).
    expect(JSON.stringify(submit.requestBody.content['application/json']?.schema)).toContain('"callback_url"');
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

  it('describes POST /v1/jobs with one alternative per loaded workflow, its type fixed and its input schema in place', () => {
    const { workflows, errors } = loadWorkflowsDir(`${__dirname}/../../../../config/workflows`);
    expect(errors).toEqual([]);
    const base = buildOpenApiDocument(ROUTES, '1');
    const document = withWorkflowSubmissions(base, JOB_SUBMISSION_PATH, [...workflows.values()]);
    const body = (document.paths[JOB_SUBMISSION_PATH]!.post as { requestBody: { content: { 'application/json': { schema: { oneOf: Array<{ properties: Record<string, { const?: string; required?: string[] }>; required: string[] }> } } } } })
      .requestBody.content['application/json'].schema;
    const docReview = body.oneOf.find((alternative) => alternative.properties.type?.const === 'doc_review');
    expect(body.oneOf.map((alternative) => alternative.properties.type?.const).sort()).toEqual([...workflows.keys()].sort());
    expect(docReview?.properties.input?.required).toEqual(['question', 'documents']);
    expect(docReview?.required).toEqual(expect.arrayContaining(['type', 'input']));
    // The catalog's own document is left as it was.
    expect(JSON.stringify(base.paths[JOB_SUBMISSION_PATH])).not.toContain('oneOf');
  });
});
