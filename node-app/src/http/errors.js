'use strict'

// Every error the service can answer with (contract/README.md, Error table). Handlers and validators
// throw an HttpError; the server turns it into {"error":{"code":...,"message":...}}. Anything else
// that reaches the server is a bug and becomes 500 "internal error".

class HttpError extends Error {
  constructor(status, code, message, headers) {
    super(message)
    this.status = status
    this.code = code
    this.headers = headers
  }
}

const LIMIT_BYTES = 65536

const badRequest = (message) => new HttpError(400, 'bad_request', message)
const notFound = (message) => new HttpError(404, 'not_found', message)
const conflict = (message) => new HttpError(409, 'conflict', message)

// Errors without a variable part are built once: they are thrown on hot paths (404s, 409s under load).
const errors = {
  routeNotFound: notFound('route not found'),
  itemNotFound: notFound('item not found'),
  categoryNotFound: notFound('category not found'),
  userNotFound: notFound('user not found'),
  sellerOrCategoryNotFound: notFound('seller or category not found'),
  bidderNotFound: notFound('bidder not found'),
  regionNotFound: notFound('region not found'),
  auctionEnded: conflict('auction has ended'),
  nicknameTaken: conflict('nickname already taken'),
  // Step 0 (contract "Request syntax"): a request line, method, target or header the contract does not serve.
  badSyntax: badRequest('bad request'),
  requestTimeout: new HttpError(408, 'request_timeout', 'request timed out'),
  expectationFailed: new HttpError(417, 'expectation_failed', 'expectation failed'),
  payloadTooLarge: new HttpError(413, 'payload_too_large', `request body exceeds ${LIMIT_BYTES} bytes`),
  unsupportedMediaType: new HttpError(415, 'unsupported_media_type', 'content type must be application/json'),
  notUtf8: badRequest('request body is not valid UTF-8'),
  notJson: badRequest('request body is not valid JSON'),
  notObject: badRequest('request body must be a JSON object'),
  unknownFields: badRequest('request body has unknown fields'),
  invalidPathId: badRequest('invalid path parameter: id'),
  invalidLimit: badRequest('invalid query parameter: limit'),
  invalidOffset: badRequest('invalid query parameter: offset'),
  dbUnavailable: new HttpError(503, 'db_unavailable', 'database unavailable'),
  internal: new HttpError(500, 'internal_error', 'internal error'),
}

const missingField = (name) => badRequest(`missing field: ${name}`)
const invalidField = (name) => badRequest(`invalid field: ${name}`)
const bidTooLow = (minimumCents) => conflict(`bid must be at least ${minimumCents} cents`)
const methodNotAllowed = (allow) => new HttpError(405, 'method_not_allowed', 'method not allowed', { Allow: allow })

module.exports = { HttpError, LIMIT_BYTES, errors, missingField, invalidField, bidTooLow, methodNotAllowed }
