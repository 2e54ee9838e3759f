'use strict'

// Entry point: `node src/main.js`. Reads the configuration, then runs one serving process
// (NODE_WORKERS=0), or a cluster primary that forks NODE_WORKERS serving workers running this same file.

const cluster = require('node:cluster')
const { load, ConfigError } = require('./config')
const { createLogger } = require('./logger')

let config
try {
  config = load()
} catch (err) {
  if (!(err instanceof ConfigError)) throw err
  process.stderr.write(`bidbench node-app: ${err.message}\n`)
  process.exit(2)
}

const clustered = config.nodeWorkers > 0
const logger = createLogger(config.logLevel, { tag: clustered ? (cluster.isPrimary ? 'primary' : `worker-${cluster.worker.id}`) : '' })

// A bug that leaves a promise rejected must be visible, but must not take the whole instance down with
// the requests it is serving; every request path already catches its own errors.
process.on('unhandledRejection', (err) => logger.error(`unhandled rejection: ${err && err.stack ? err.stack : err}`))

const { printStartupLine, warnUnfair } = require('./startup')

if (clustered && cluster.isPrimary) {
  // Fail fast, in the primary, on a driver that cannot load, instead of letting every worker die.
  if (config.pgNative) {
    try {
      require('./db/pool').poolClass(true)
    } catch (err) {
      logger.error(err.message)
      process.exit(1)
    }
  }
  warnUnfair(config, logger)
  require('./cluster').runPrimary(config, logger, (port) => printStartupLine(config, port))
} else {
  if (!clustered) warnUnfair(config, logger)
  // Alone, the process prints its start-up line in the listen callback, before it can handle any request.
  // As a worker it holds requests until the primary's word that the line is out (cluster.js).
  const onListening = (port) => {
    if (!clustered) printStartupLine(config, port)
  }
  let started
  try {
    started = require('./app').startServer(config, logger, onListening, { gated: clustered })
  } catch (err) {
    logger.error(err.message)
    process.exit(1)
  }
  if (clustered) {
    process.on('message', (message) => {
      if (message && message.bidbench === 'open') started.server.open()
    })
  }
}
