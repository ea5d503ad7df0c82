#!/usr/bin/env node
// Entry point of the `preflight` CLI: runs the built CLI (`npm run build`, run by `npm install` via `prepare`).
import { main } from '../dist/src/cli/bin.js'

process.exitCode = await main(process.argv.slice(2), { ownsProcess: true })
