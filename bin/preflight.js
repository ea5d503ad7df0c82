#!/usr/bin/env node
// Entry point of the `preflight` CLI: runs the compiled CLI (built by `npm install` via `prepare`).
import { main } from '../dist/src/cli/main.js'

process.exitCode = await main(process.argv.slice(2))
