// Builds the project's Dockerfile, unmodified, for both targets on the Node image run.sh names
// (NODE_IMAGE: the stand-in for node:24-bookworm-slim), and hands the image names to the tests.
import { resolve } from 'node:path'
import { GenericContainer } from 'testcontainers'
import type { TestProject } from 'vitest/node'

export interface Images {
  coordinator: string
  worker: string
  node: string
  postgres: string
}

declare module 'vitest' {
  export interface ProvidedContext {
    images: Images
  }
}

const ROOT = resolve(import.meta.dirname, '..', '..')

export default async function setup(project: TestProject) {
  const node = required('NODE_IMAGE')
  const postgres = required('POSTGRES_IMAGE')
  const images: Images = {
    coordinator: 'preflight-ci/coordinator:test',
    worker: 'preflight-ci/worker:test',
    node,
    postgres,
  }
  for (const target of ['coordinator', 'worker'] as const) {
    const started = Date.now()
    await GenericContainer.fromDockerfile(ROOT)
      .withBuildArgs({ NODE_IMAGE: node })
      .withTarget(target)
      .build(images[target], { deleteOnExit: false })
    console.log(
      `built ${images[target]} (target ${target}) in ${((Date.now() - started) / 1000).toFixed(0)} s`,
    )
  }
  project.provide('images', images)
}

function required(name: string): string {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set: run the container tests with npm run test:containers`)
  return value
}
