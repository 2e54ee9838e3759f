'use strict'

// NODE_WORKERS=N ≥ 1: a node:cluster primary with N workers sharing the port (the primary accepts and
// hands connections out round-robin). The primary serves nothing and has no pool; each worker is a full
// serving process with DB_POOL_SIZE connections, so the cluster may open N × DB_POOL_SIZE of them.

const cluster = require('node:cluster')

const WORKER_STOP_TIMEOUT_MS = 15_000

function runPrimary(config, logger, onReady) {
  const wanted = config.nodeWorkers
  let announced = false
  let stopping = false
  let failed = false
  const listening = new Set()

  const fork = () => cluster.fork()

  cluster.on('listening', (worker, address) => {
    logger.debug(`worker ${worker.id} (pid ${worker.process.pid}) listening on port ${address.port}`)
    // Ready (and the one start-up line) once every worker listens; only then do the workers serve, so no
    // request is answered before the line is written. A replacement worker is opened at once.
    listening.add(worker.id)
    if (announced) {
      worker.send({ bidbench: 'open' })
    } else if (listening.size === wanted) {
      announced = true
      onReady(address.port)
      for (const w of Object.values(cluster.workers)) w.send({ bidbench: 'open' })
    }
  })

  cluster.on('exit', (worker, code, signal) => {
    const how = signal ? `signal ${signal}` : `code ${code}`
    // A worker exits 0 only after a SIGTERM. The harness signals the whole process group, so a worker can
    // finish its drain before the primary has handled its own SIGTERM: that is a stop, not a crash.
    if (stopping || code === 0) {
      if (code !== 0) failed = true
      if (Object.keys(cluster.workers).length === 0) {
        logger.info('all workers stopped')
        process.exit(failed ? 1 : 0)
      }
      return
    }
    if (!announced) {
      // A worker that cannot even start (bad port, missing pg-native) will not do better when forked again.
      logger.error(`worker ${worker.id} exited with ${how} before listening; stopping`)
      stopping = true
      for (const other of Object.values(cluster.workers)) other.process.kill('SIGTERM')
      process.exitCode = 1
      if (Object.keys(cluster.workers).length === 0) process.exit(1)
      failed = true
      return
    }
    logger.warn(`worker ${worker.id} (pid ${worker.process.pid}) exited with ${how}; starting a replacement`)
    fork()
  })

  // SIGTERM: forward to every worker (each drains its own requests and closes its pool), exit when all
  // have. The harness may signal the whole process group as well; workers ignore the second signal.
  const shutdown = (signal) => {
    if (stopping) return
    stopping = true
    logger.info(`${signal}: stopping ${Object.keys(cluster.workers).length} workers`)
    for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGTERM')
    const force = setTimeout(() => {
      logger.warn(`workers still running after ${WORKER_STOP_TIMEOUT_MS} ms; killing them`)
      for (const worker of Object.values(cluster.workers)) worker.process.kill('SIGKILL')
      process.exit(1)
    }, WORKER_STOP_TIMEOUT_MS)
    force.unref()
    if (Object.keys(cluster.workers).length === 0) process.exit(0)
  }
  process.on('SIGTERM', () => shutdown('SIGTERM'))
  process.on('SIGINT', () => shutdown('SIGINT'))

  for (let i = 0; i < wanted; i++) fork()
}

module.exports = { runPrimary }
