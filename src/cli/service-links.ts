// Kubernetes service links: a Service named `preflight` makes the kubelet set PREFLIGHT_PORT=tcp://IP:PORT
// (and PREFLIGHT_SERVICE_HOST, PREFLIGHT_PORT_8080_TCP…) in every pod of its namespace, unless the pod
// spec says `enableServiceLinks: false`. Such a value in a variable preflight reads is refused by name.
import type { Setting } from './args.js'
import { UsageError } from './errors.js'

const SERVICE_LINK = /^(tcp|udp|sctp):\/\/[^/\s]+:\d+$/

// Throws when `given` came from a variable and holds a service link's address; `wanted` says what belongs there.
export function refuseServiceLink(given: Setting | undefined, wanted: string): void {
  if (!given || given.name.startsWith('--') || !SERVICE_LINK.test(given.value)) return
  throw new UsageError(
    `${given.name} is "${given.value}", not ${wanted}: a Kubernetes service link (a Service's address, set in ` +
      'every pod of its namespace): set enableServiceLinks: false in the pod spec (deploy/kubernetes does)',
  )
}
