import { Controller, Get, Header, Inject } from '@nestjs/common';
import { WorkflowCatalog } from '@switchyard/orchestration';
import { buildOpenApiDocument, withWorkflowSubmissions, type OpenApiDocument } from './openapi-document';
import { JOB_SUBMISSION_PATH, ROUTES } from './route-catalog';

/** Swagger UI from the `swagger-ui-dist` package, served locally under /docs/assets/ (see static-assets.ts). */
const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Switchyard API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs-init.js"></script>
</body>
</html>
`;

export const DOCS_INIT_SCRIPT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });\n`;

/**
 * `GET /openapi.json` (generated once from the route catalog, with the job submission narrowed
 * to the workflows loaded now) and `GET /docs`, the page that renders it.
 */
@Controller()
export class OpenApiController {
  private readonly document: OpenApiDocument = buildOpenApiDocument(ROUTES, '1');
  private served: { workflows: unknown; document: OpenApiDocument } | undefined;

  constructor(@Inject(WorkflowCatalog) private readonly catalog: WorkflowCatalog) {}

  @Get('openapi.json')
  openApi(): OpenApiDocument {
    // The catalog swaps its map on a reload: rebuild only then.
    const workflows = this.catalog.workflows;
    if (this.served?.workflows !== workflows) {
      const described = [...workflows.values()].sort((a, b) => a.type.localeCompare(b.type));
      this.served = { workflows, document: withWorkflowSubmissions(this.document, JOB_SUBMISSION_PATH, described) };
    }
    return this.served.document;
  }

  @Get('docs')
  @Header('content-type', 'text/html; charset=utf-8')
  docs(): string {
    return DOCS_PAGE;
  }
}
