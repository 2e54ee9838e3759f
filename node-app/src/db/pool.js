'use strict'

// The connection pool: node-postgres's built-in pg.Pool, with either the JavaScript client or the
// libpq-based pg-native client (PG_NATIVE=1). Both share the pool, the query API and the type parsers.

const fs = require('node:fs')
const path = require('node:path')
const pg = require('pg')

const INT8_OID = 20

// int8 (bigint) columns arrive as strings by default because they can exceed 2^53. The only int8 columns
// here are cents, capped at 1e11 by the contract, so Number is exact. Overriding per pool (not globally
// with pg.types.setTypeParser) keeps the choice visible where the pool is made, and pg-native honours it.
const types = {
  getTypeParser(oid, format) {
    return oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)
  },
}

// Resolves the Pool class for the selected driver, or explains what is missing.
function poolClass(native) {
  if (!native) return pg.Pool
  let bindings
  try {
    bindings = pg.native // a lazy getter: requires pg-native and thus the compiled libpq addon
  } catch (err) {
    throw new Error(`PG_NATIVE=1 but pg-native failed to load: ${err.message}`)
  }
  if (!bindings) {
    throw new Error('PG_NATIVE=1 but pg-native is not installed; run `npm ci` with libpq-dev, python3, make and g++ present')
  }
  return bindings.Pool
}

function createPool(config, logger) {
  const Pool = poolClass(config.pgNative)
  const pool = new Pool({
    connectionString: config.databaseUrl,
    max: config.dbPoolSize,
    // Waiting longer than this for a connection (new or checked out) is "database unavailable" (503).
    connectionTimeoutMillis: 5000,
    // Keep connections open while idle, like HikariCP's fixed-size pool and PHP's persistent
    // connections: a benchmark pause must not turn into reconnects and re-prepared statements.
    idleTimeoutMillis: 0,
    application_name: 'bidbench-node',
    types,
  })
  // An idle client whose connection drops (database restart, network reset) is removed from the pool and
  // reported here. Without a listener the 'error' event would crash the process.
  pool.on('error', (err) => logger.warn(`idle database connection lost: ${err.message}`))
  // A checked-out client can also lose its connection between two statements of a request; pg emits that
  // as an 'error' event on the client. Remember it so the client is discarded on release.
  pool.on('connect', (client) => {
    client.on('error', (err) => {
      client.bidbenchBroken = err
    })
  })
  return pool
}

// Installed driver versions for the start-up line. pg-native's package.json is not in its "exports", so it
// is read from disk next to its entry point (resolving does not load the compiled addon).
function driverVersions() {
  const versions = { pg: require('pg/package.json').version, pg_native: null }
  try {
    const file = path.join(path.dirname(require.resolve('pg-native')), 'package.json')
    versions.pg_native = JSON.parse(fs.readFileSync(file, 'utf8')).version
  } catch {
    // not installed: PG_NATIVE=1 will fail with its own message
  }
  return versions
}

module.exports = { createPool, poolClass, driverVersions }
