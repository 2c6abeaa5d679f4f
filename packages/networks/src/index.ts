export * from './connector.js';
export { createConnectors, type TConnectorsConfig } from './connector-registry.js';
export { classifyHttpError, createHttpClient, truncateBody } from './http-client.js';
