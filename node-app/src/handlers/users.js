'use strict'

// GET /users/{id} and POST /users.

const format = require('../format')
const { errors } = require('../http/errors')

const FOREIGN_KEY_VIOLATION = '23503'
const UNIQUE_VIOLATION = '23505'

module.exports = (db) => ({
  get: async (request) => {
    const rows = await db.withSession(request.timer, (session) => session.query(db.sql.get_user, [request.id]))
    if (rows.length === 0) throw errors.userNotFound
    return { status: 200, body: format.user(rows[0]) }
  },

  create: async (request) => {
    const { nickname, region_id: regionId } = request.body
    const rows = await db.withSession(request.timer, async (session) => {
      try {
        return await session.query(db.sql.create_user, [nickname, regionId])
      } catch (err) {
        if (err.code === UNIQUE_VIOLATION) throw errors.nicknameTaken
        if (err.code === FOREIGN_KEY_VIOLATION) throw errors.regionNotFound
        throw err
      }
    })
    return { status: 201, body: format.user(rows[0]) }
  },
})
