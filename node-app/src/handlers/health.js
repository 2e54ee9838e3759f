'use strict'

// GET /health never touches the database; GET /ready runs `ready` (SELECT 1).

const HEALTHY = Object.freeze({ status: 'ok' })
const READY = Object.freeze({ status: 'ready' })

module.exports = (db) => ({
  health: async () => ({ status: 200, body: HEALTHY }),

  ready: async (request) => {
    await db.withSession(request.timer, (session) => session.query(db.sql.ready))
    return { status: 200, body: READY }
  },
})
