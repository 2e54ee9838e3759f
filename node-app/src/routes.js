'use strict'

// The route table of contract/README.md. Per method: the handler, whether the route is paged
// (limit/offset), and the request-body schema for POST and PUT. Method order is the Allow order.

const { schemas } = require('./validation/fields')

function routes(db) {
  const health = require('./handlers/health')(db)
  const regions = require('./handlers/regions')(db)
  const categories = require('./handlers/categories')(db)
  const items = require('./handlers/items')(db)
  const bids = require('./handlers/bids')(db)
  const users = require('./handlers/users')(db)

  return [
    { path: '/health', methods: { GET: { handler: health.health } } },
    { path: '/ready', methods: { GET: { handler: health.ready } } },
    { path: '/regions', methods: { GET: { handler: regions.list } } },
    { path: '/categories', methods: { GET: { handler: categories.list } } },
    { path: '/categories/{id}/items', methods: { GET: { handler: categories.listItems, paged: true } } },
    { path: '/items', methods: { POST: { handler: items.create, body: schemas.itemCreate } } },
    {
      path: '/items/{id}',
      methods: {
        GET: { handler: items.get },
        PUT: { handler: items.update, body: schemas.itemUpdate },
        DELETE: { handler: items.remove },
      },
    },
    {
      path: '/items/{id}/bids',
      methods: {
        GET: { handler: bids.list, paged: true },
        POST: { handler: bids.place, body: schemas.bidCreate },
      },
    },
    { path: '/users', methods: { POST: { handler: users.create, body: schemas.userCreate } } },
    { path: '/users/{id}', methods: { GET: { handler: users.get } } },
  ]
}

module.exports = { routes }
