import { Controller, Get, Header } from '@nestjs/common';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi-document';
import { ROUTES } from './route-catalog';

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

/** `GET /openapi.json` (generated once from the route catalog) and `GET /docs`, the page that renders it. */
@Controller()
export class OpenApiController {
  private readonly document: OpenApiDocument = buildOpenApiDocument(ROUTES, '1');

  @Get('openapi.json')
  openApi(): OpenApiDocument {
    return this.document;
  }

  @Get('docs')
  @Header('content-type', 'text/html; charset=utf-8')
  docs(): string {
    return DOCS_PAGE;
  }
}
