import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastifyServerFactory } from 'fastify';

/** A route the HTTP server answers itself, before fastify sees the request. */
export interface RouteBelowFastify {
  accepts(request: IncomingMessage): boolean;
  serve(request: IncomingMessage, response: ServerResponse): void;
}

/**
 * fastify's HTTP server, with routes mounted below fastify: the server's request event offers
 * each request to them first and hands the rest to fastify. Everything else about the server
 * (client errors, listen, close, keep-alive) stays fastify's. The server is made as fastify
 * makes its own (node:http, its keep-alive, request and connection timeouts).
 */
export class RoutesBelowFastify {
  private readonly routes: RouteBelowFastify[] = [];

  mount(route: RouteBelowFastify): void {
    this.routes.push(route);
  }

  readonly serverFactory: FastifyServerFactory = (fastifyHandler, options) => {
    const server: Server = createServer((request, response) => {
      for (const route of this.routes) {
        if (route.accepts(request)) {
          route.serve(request, response);
          return;
        }
      }
      fastifyHandler(request, response);
    });
    const timeouts = options as { keepAliveTimeout?: number; requestTimeout?: number; connectionTimeout?: number };
    if (timeouts.keepAliveTimeout !== undefined) server.keepAliveTimeout = timeouts.keepAliveTimeout;
    if (timeouts.requestTimeout !== undefined) server.requestTimeout = timeouts.requestTimeout;
    server.setTimeout(timeouts.connectionTimeout ?? 0);
    return server;
  };
}
