'use strict'

// One serving process: pool, router, HTTP server, graceful shutdown. Run directly (NODE_WORKERS=0) or as
// a cluster worker; either way it is one instance with its own pool of DB_POOL_SIZE connections.

const { createPool } = require('./db/pool')
const { Database } = require('./db/database')
const queries = require('./db/queries')
const { Router } = require('./http/router')
const { createServer } = require('./http/server')
const { routes } = require('./routes')

const DRAIN_TIMEOUT_MS = 10_000
// The accept backlog, as nginx's `listen ... backlog=4096` and Jetty's accept queue in the other apps (the
// kernel caps it at net.core.somaxconn); Node's default is 511. The load driver opens up to 5000
// connections against an overloaded instance, and a full queue drops handshakes until the SYN retransmit.
const LISTEN_BACKLOG = 4096
// If the pool still will not close (a statement stuck on a dead server), stop waiting after this.
const POOL_END_TIMEOUT_MS = 5_000

// gated: hold requests until server.open() (a cluster worker, opened by the primary).
function startServer(config, logger, onListening, { gated = false } = {}) {
  // The pool connects lazily: the app starts while the database is down, and /ready says 503 until it is up.
  const pool = createPool(config, logger)
  const db = new Database(pool, queries.build({ unsorted: config.unfairUnsorted, perField: config.unfairPerField }), logger)
  const server = createServer({
    router: new Router(routes(db)),
    logger,
    serverTimingEnabled: config.serverTiming,
    gated,
  })

  server.on('error', (err) => {
    logger.error(`cannot listen on ${config.host}:${config.port}: ${err.message}`)
    process.exit(1)
  })
  server.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG }, () =>
    onListening(server.address().port)
  )

  // SIGTERM: stop accepting, let in-flight requests finish (up to 10 s), close the pool, exit 0.
  let stopping = false
  const shutdown = (signal) => {
    if (stopping) return
    stopping = true
    logger.info(`${signal}: draining in-flight requests`)
    server.draining = true
    const force = setTimeout(() => {
      logger.warn(`requests still in flight after ${DRAIN_TIMEOUT_MS} ms; closing their connections`)
      server.closeAllConnections()
    }, DRAIN_TIMEOUT_MS)
    force.unref()
    server.close(() => {
      clearTimeout(force)
      const stuck = setTimeout(() => {
        logger.warn('database pool did not close in time; exiting anyway')
        process.exit(0)
      }, POOL_END_TIMEOUT_MS)
      stuck.unref()
      pool.end().then(
        () => {
          logger.info('stopped')
          process.exit(0)
        },
        (err) => {
          logger.warn(`closing the database pool failed: ${err.message}`)
          process.exit(0)
        },
      )
    })
    // Keep-alive connections with no request in flight would otherwise hold server.close() open.
    server.closeIdleConnections()
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))

  return { server, pool }
}

module.exports = { startServer }
