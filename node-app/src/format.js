'use strict'

// Rows to response objects. Each builder spells out the openapi.yaml `properties` order: JSON.stringify
// keeps insertion order for non-numeric keys, so the literal below is the wire order.
//
// Types arrive ready from node-postgres (see db/pool.js): int4 and int8 (cents, ≤ 1e11, exact in a
// double) as numbers, timestamptz(3) as a Date, which toISOString renders as UTC with exactly three
// millisecond digits and a Z: the contract's 2026-11-21T14:21:00.123Z.

const timestamp = (date) => date.toISOString()

const region = (row) => ({ id: row.id, name: row.name })

const category = (row) => ({ id: row.id, name: row.name })

const itemSummary = (row) => ({
  id: row.id,
  category_id: row.category_id,
  seller_id: row.seller_id,
  title: row.title,
  initial_price_cents: row.initial_price_cents,
  max_bid_cents: row.max_bid_cents,
  bid_count: row.bid_count,
  start_time: timestamp(row.start_time),
  end_time: timestamp(row.end_time),
})

const itemRecord = (row) => ({
  id: row.id,
  category_id: row.category_id,
  seller_id: row.seller_id,
  title: row.title,
  description: row.description,
  initial_price_cents: row.initial_price_cents,
  max_bid_cents: row.max_bid_cents,
  bid_count: row.bid_count,
  start_time: timestamp(row.start_time),
  end_time: timestamp(row.end_time),
})

const bid = (row) => ({
  id: row.id,
  item_id: row.item_id,
  bidder_id: row.bidder_id,
  amount_cents: row.amount_cents,
  created_at: timestamp(row.created_at),
})

// get_item selects the seller's nickname as u.nickname; the response calls it seller_nickname.
const itemDetail = (row, topBidRows) => ({
  id: row.id,
  category_id: row.category_id,
  seller_id: row.seller_id,
  seller_nickname: row.nickname,
  title: row.title,
  description: row.description,
  initial_price_cents: row.initial_price_cents,
  max_bid_cents: row.max_bid_cents,
  bid_count: row.bid_count,
  start_time: timestamp(row.start_time),
  end_time: timestamp(row.end_time),
  top_bids: topBidRows.map(bid),
})

const user = (row) => ({
  id: row.id,
  nickname: row.nickname,
  region_id: row.region_id,
  rating: row.rating,
  created_at: timestamp(row.created_at),
})

const itemPage = (rows, limit, offset) => ({ items: rows.map(itemSummary), limit, offset })
const bidPage = (rows, limit, offset) => ({ bids: rows.map(bid), limit, offset })
const deleted = (id) => ({ id, deleted: true })
const errorBody = (code, message) => ({ error: { code, message } })

module.exports = {
  timestamp,
  region,
  category,
  itemSummary,
  itemRecord,
  itemDetail,
  bid,
  user,
  itemPage,
  bidPage,
  deleted,
  errorBody,
}
