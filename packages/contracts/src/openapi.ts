// The public API's description: the route registry and the OpenAPI document built from it.
export * from './route-registry';
export * from './openapi-document';
