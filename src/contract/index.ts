// The one source of shapes shared by the coordinator, the worker and the CLI.
export * from './definition.js'
export * from './reasons.js'
export * from './repo-url.js'
export * from './report.js'
export * from './requirements.js'
