import 'reflect-metadata';
import { RequestMethod, type DynamicModule, type Type } from '@nestjs/common';
import { METHOD_METADATA, MODULE_METADATA, PATH_METADATA } from '@nestjs/common/constants';

export interface DeclaredRoute {
  method: string;
  path: string;
}

type ModuleRef = Type | DynamicModule | Promise<DynamicModule>;

const join = (...parts: string[]) => `/${parts.map((p) => p.replace(/^\/+|\/+$/g, '')).filter((p) => p.length > 0).join('/')}`;

function controllersOf(module: ModuleRef, seen: Set<unknown>): Type[] {
  if (module instanceof Promise || seen.has(module)) return [];
  seen.add(module);
  const isDynamic = typeof module === 'object' && 'module' in module;
  const cls = isDynamic ? module.module : module;
  const metadata = (key: string): unknown[] => (Reflect.getMetadata(key, cls) as unknown[] | undefined) ?? [];
  const controllers = [...metadata(MODULE_METADATA.CONTROLLERS), ...(isDynamic ? (module.controllers ?? []) : [])] as Type[];
  const imports = [...metadata(MODULE_METADATA.IMPORTS), ...(isDynamic ? (module.imports ?? []) : [])] as ModuleRef[];
  return [...controllers, ...imports.flatMap((imported) => controllersOf(imported, seen))];
}

/**
 * The routes Nest registers for a module tree, read from the controllers' decorators — the
 * same metadata Nest's router explorer reads when it mounts them.
 */
export function declaredRoutes(root: ModuleRef): DeclaredRoute[] {
  const routes: DeclaredRoute[] = [];
  for (const controller of new Set(controllersOf(root, new Set()))) {
    const prefixes = [Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined].flat().map((p) => p ?? '');
    const prototype = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const handler = prototype[name];
      if (name === 'constructor' || typeof handler !== 'function') continue;
      const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
      const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      if (method === undefined || paths === undefined) continue;
      for (const prefix of prefixes) for (const path of [paths].flat()) routes.push({ method: RequestMethod[method].toLowerCase(), path: join(prefix, path) });
    }
  }
  return routes;
}
