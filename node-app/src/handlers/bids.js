'use strict'

// GET /items/{id}/bids and POST /items/{id}/bids.

const format = require('../format')
const { errors, bidTooLow } = require('../http/errors')

const FOREIGN_KEY_VIOLATION = '23503'

module.exports = (db) => ({
  list: async (request) => {
    const { id, limit, offset } = request
    const rows = await db.withSession(request.timer, async (session) => {
      const page = await session.query(db.sql.list_item_bids, [id, limit, offset])
      if (page.length === 0 && (await session.query(db.sql.item_exists, [id])).length === 0) {
        throw errors.itemNotFound
      }
      return page
    })
    return { status: 200, body: format.bidPage(rows, limit, offset) }
  },

  // One READ COMMITTED transaction (contract/queries.sql). lock_item_for_bid takes the item's row lock, so
  // concurrent bids on one item run one after another and max_bid_cents/bid_count never lose an update.
  place: async (request) => {
    const { id } = request
    const { bidder_id: bidderId, amount_cents: amount } = request.body
    const row = await db.withTransaction(request.timer, async (session) => {
      const locked = await session.query(db.sql.lock_item_for_bid, [id])
      if (locked.length === 0) throw errors.itemNotFound
      const item = locked[0]
      if (!item.open) throw errors.auctionEnded
      const minimum = Math.max(item.initial_price_cents, item.max_bid_cents + 1)
      if (amount < minimum) throw bidTooLow(minimum)
      let inserted
      try {
        inserted = await session.query(db.sql.insert_bid, [id, bidderId, amount])
      } catch (err) {
        if (err.code === FOREIGN_KEY_VIOLATION) throw errors.bidderNotFound
        throw err
      }
      await session.query(db.sql.raise_item_max_bid, [id, amount])
      return inserted[0]
    })
    return { status: 201, body: format.bid(row) }
  },
})
