// The OpenAPI document's frame: the contract's schemas under their names (components a generated client
// turns into named types), the security schemes, the tags, and the document's own routes.
import { zodToOpenAPIRegistry } from '@asteasolutions/zod-to-openapi'
import type { OpenAPIHono } from '@hono/zod-openapi'
import type { z } from 'zod'
import * as contract from '../../contract/index.js'

// Named here, not in src/contract: the contract stays plain zod (no OpenAPI extension to load in the
// CLI, and the JSON Schemas in schemas/ keep their shape). Query and path objects are not named: the
// document spells them out as parameters.
const NAMES = [
  'AgentSpec',
  'Baseline',
  'CheckResult',
  'ClaimRequest',
  'ClaimResponse',
  'CompleteRequest',
  'CompleteResponse',
  'Completion',
  'ContextRequires',
  'CreateDispatchRequest',
  'CreateWebhookRequest',
  'DeliveryPage',
  'DeliveryView',
  'DispatchCreated',
  'DispatchEvent',
  'DispatchItem',
  'DispatchPage',
  'DispatchStatus',
  'DispatchView',
  'EndingsPage',
  'ErrorEnvelope',
  'EventRecorded',
  'EventRequest',
  'FailedRequirement',
  'GitRequirements',
  'Health',
  'HeartbeatRequest',
  'HeartbeatResponse',
  'Lease',
  'PreflightDecision',
  'PreflightReport',
  'PreflightRequest',
  'PreflightView',
  'ReportItem',
  'ReportPage',
  'SubagentDefinition',
  'SubagentRegistered',
  'SubagentVersionView',
  'SummaryItem',
  'SummaryPage',
  'TokenPage',
  'TokenView',
  'WebhookCreated',
  'WebhookList',
  'WebhookView',
  'WorkerInfo',
  'Workspace',
] as const satisfies readonly (keyof typeof contract)[]

export const COMPONENTS: Record<string, z.ZodType> = Object.fromEntries(
  // biome-ignore lint/performance/noDynamicNamespaceImportAccess: the coordinator is not bundled; every name is a schema it loads anyway
  NAMES.map((name) => [name, contract[name] as z.ZodType]),
)

// Gives each schema its name for the document generator (its own registry, keyed by the schema
// object: zod's global registry and the JSON Schemas are untouched). Naming twice is harmless.
export function nameComponents(): void {
  for (const [name, schema] of Object.entries(COMPONENTS)) {
    const meta = zodToOpenAPIRegistry.get(schema)
    zodToOpenAPIRegistry.add(schema, { ...meta, _internal: { ...meta?._internal, refId: name } })
  }
}

const TAGS = [
  { name: 'subagents', description: 'Definitions an orchestrator registers, versioned by hash' },
  { name: 'dispatches', description: 'Queue, follow and cancel dispatches (orchestrator, operator)' },
  { name: 'worker', description: 'Claim, and the fenced writes of the attempt that holds the lease' },
  { name: 'reports', description: 'Preflight reports and per-requirement figures (operator)' },
  { name: 'tokens', description: 'Bearer tokens: list and revoke (admin)' },
  { name: 'webhooks', description: 'Alert webhooks and their delivery log (admin)' },
  { name: 'health', description: 'Liveness, readiness, metrics and this document (no token)' },
]

// Registers the security schemes and the routes of the document itself; returns the document's frame.
export function describeApi<E extends object>(app: OpenAPIHono<E & { Variables: object }>) {
  nameComponents()
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'a token of the role the operation names (`preflight token create --role …`)',
  })
  app.openAPIRegistry.registerComponent('securitySchemes', 'metrics', {
    type: 'http',
    scheme: 'bearer',
    description: 'PREFLIGHT_METRICS_TOKEN, when it is set',
  })
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/openapi.json',
    tags: ['health'],
    operationId: 'getOpenApiDocument',
    summary: 'This document, OpenAPI 3.1 (no token)',
    security: [],
    responses: { 200: { description: 'the document', content: { 'application/json': { schema: {} } } } },
  })
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/docs',
    tags: ['health'],
    operationId: 'getApiReference',
    summary: 'The API reference page, rendered from this document (no token)',
    security: [],
    responses: { 200: { description: 'an HTML page', content: { 'text/html': { schema: {} } } } },
  })
  return {
    openapi: '3.1.0',
    info: {
      title: 'preflight coordinator',
      version: '1',
      description: 'Dispatches of coding-agent jobs, verified by workers before the agent runs.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    // relative: the coordinator that served this document, behind whatever host and port reached it
    servers: [{ url: '/', description: 'this coordinator' }],
    tags: TAGS,
  }
}
