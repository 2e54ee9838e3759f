'use strict'

// The start-up line (contract/README.md): `bidbench-start {json}` on stdout, exactly once, when the app
// accepts connections. The harness stores the JSON in the run manifest, so it states every knob.

const { driverVersions } = require('./db/pool')
const { KEEP_ALIVE_TIMEOUT_MS } = require('./http/server')

function startupInfo(config, port) {
  const drivers = driverVersions()
  const processes = Math.max(config.nodeWorkers, 1)
  return {
    impl: 'node',
    host: config.host,
    port,
    db: config.dbDisplay,
    db_pool_size: config.dbPoolSize,
    log_level: config.logLevel,
    server_timing: config.serverTiming,
    node_workers: config.nodeWorkers,
    pg_native: config.pgNative,
    node_version: process.version,
    v8_version: process.versions.v8,
    pg_version: drivers.pg,
    pg_native_version: drivers.pg_native,
    // DB_POOL_SIZE is per serving process: a cluster of N workers opens up to N × DB_POOL_SIZE connections.
    db_connections_max: processes * config.dbPoolSize,
    db_connection_timeout_ms: 5000,
    keep_alive_timeout_ms: KEEP_ALIVE_TIMEOUT_MS,
    unfair_unsorted: config.unfairUnsorted,
    unfair_per_field: config.unfairPerField,
    pid: process.pid,
  }
}

function printStartupLine(config, port) {
  process.stdout.write(`bidbench-start ${JSON.stringify(startupInfo(config, port))}\n`)
}

function warnUnfair(config, logger) {
  const on = []
  if (config.unfairUnsorted) on.push('BIDBENCH_UNFAIR_UNSORTED=1: list queries run WITHOUT their ORDER BY.')
  if (config.unfairPerField) on.push('BIDBENCH_UNFAIR_PER_FIELD=1: GET /items/{id} reads each field with its own SELECT.')
  if (on.length === 0) return
  const bar = '!'.repeat(78)
  logger.warn(bar)
  for (const line of on) logger.warn(line)
  logger.warn('This is a deliberately unequal variant for negative controls; its numbers compare nothing.')
  logger.warn(bar)
}

module.exports = { startupInfo, printStartupLine, warnUnfair }
