'use strict'

// The hostile-input list (issue 4, docs/design.md §2.4): every request here must get exactly the contract's 4xx.
// A case with `db` passes validation and reaches the database: against a live database it must get
// db.status/db.message; with the database down, 503 "database unavailable" (which proves validation let
// it through, as it should).

const JSON_TYPE = { 'Content-Type': 'application/json' }
const post = (path, body, headers = JSON_TYPE) => ({ method: 'POST', path, headers, body })
const bytes = (...parts) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))))

const NEST_33 = `{"nickname":${'['.repeat(32)}${']'.repeat(32)},"region_id":1}` // object + 32 arrays = 33
const NEST_32 = `{"nickname":${'['.repeat(31)}${']'.repeat(31)},"region_id":1}` // 32 containers: valid JSON
const NO_SUCH = 2147483647 // a valid id that no seeded table reaches

const SELLER_404 = { status: 404, message: 'seller or category not found' }

const item = (overrides) =>
  JSON.stringify({
    seller_id: 1,
    category_id: 1,
    title: 'hostile',
    description: '',
    initial_price_cents: 100,
    duration_seconds: 3600,
    ...overrides,
  })

// A body of exactly `size` bytes: valid JSON padded with spaces.
const padded = (text, size) => text + ' '.repeat(size - Buffer.byteLength(text))

const cases = [
  // --- malformed JSON
  ['truncated JSON', post('/users', '{"nickname":'), 400, 'request body is not valid JSON'],
  ['trailing comma', post('/users', '{"nickname":"abc","region_id":1,}'), 400, 'request body is not valid JSON'],
  ['trailing garbage', post('/users', '{"nickname":"abc","region_id":1} x'), 400, 'request body is not valid JSON'],
  ['two values', post('/users', '{} {}'), 400, 'request body is not valid JSON'],
  ['single quotes', post('/users', "{'nickname':'abc'}"), 400, 'request body is not valid JSON'],
  ['comment', post('/users', '{/* c */"nickname":"abc","region_id":1}'), 400, 'request body is not valid JSON'],
  ['NaN literal', post('/users', '{"nickname":"abc","region_id":NaN}'), 400, 'request body is not valid JSON'],
  ['hex number', post('/users', '{"nickname":"abc","region_id":0x1}'), 400, 'request body is not valid JSON'],
  ['leading zero', post('/users', '{"nickname":"abc","region_id":01}'), 400, 'request body is not valid JSON'],
  ['raw control char in string', post('/users', '{"nickname":"a\tb","region_id":1}'), 400, 'request body is not valid JSON'],
  ['empty body', post('/users', ''), 400, 'request body is not valid JSON'],
  ['whitespace only', post('/users', ' \n'), 400, 'request body is not valid JSON'],
  ['UTF-8 BOM', post('/users', bytes([0xef, 0xbb, 0xbf], '{"nickname":"abc","region_id":1}')), 400, 'request body is not valid JSON'],
  ['nesting 33 deep', post('/users', NEST_33), 400, 'request body is not valid JSON'],
  ['nesting 10000 deep', post('/users', '['.repeat(10000) + ']'.repeat(10000)), 400, 'request body is not valid JSON'],
  ['nesting 32 deep is valid JSON', post('/users', NEST_32), 400, 'invalid field: nickname'],
  ['lone high surrogate', post('/users', '{"nickname":"\\ud800","region_id":1}'), 400, 'request body is not valid JSON'],
  ['lone low surrogate', post('/users', '{"nickname":"\\uDC00","region_id":1}'), 400, 'request body is not valid JSON'],
  ['reversed surrogate pair', post('/users', '{"nickname":"\\udc00\\ud800","region_id":1}'), 400, 'request body is not valid JSON'],
  ['lone surrogate in a key', post('/users', '{"\\ud800":1}'), 400, 'request body is not valid JSON'],
  ['lone surrogate in an overwritten duplicate', post('/users', '{"nickname":"\\ud800","nickname":"abc","region_id":1}'), 400, 'request body is not valid JSON'],
  ['escaped backslash before u is text', post('/users', '{"nickname":"\\\\ud800","region_id":1}'), 400, 'invalid field: nickname'],
  ['paired surrogates are fine', post('/items', item({ seller_id: NO_SUCH }).replace('"hostile"', '"\\ud83d\\ude00"')), null, null, SELLER_404],
  // --- invalid UTF-8 (checked before JSON)
  ['invalid UTF-8 byte', post('/users', bytes('{"nickname":"', [0xff], '","region_id":1}')), 400, 'request body is not valid UTF-8'],
  ['overlong UTF-8', post('/users', bytes('{"nickname":"', [0xc0, 0xaf], '","region_id":1}')), 400, 'request body is not valid UTF-8'],
  ['UTF-8 encoded surrogate', post('/users', bytes('{"nickname":"', [0xed, 0xa0, 0x80], '","region_id":1}')), 400, 'request body is not valid UTF-8'],
  ['truncated UTF-8', post('/users', bytes('{"nickname":"abc","region_id":1}', [0xe2, 0x82])), 400, 'request body is not valid UTF-8'],
  ['invalid UTF-8 in invalid JSON', post('/users', bytes([0xff], '{')), 400, 'request body is not valid UTF-8'],
  // --- not an object
  ['array body', post('/users', '[]'), 400, 'request body must be a JSON object'],
  ['null body', post('/users', 'null'), 400, 'request body must be a JSON object'],
  ['string body', post('/users', '"abc"'), 400, 'request body must be a JSON object'],
  ['number body', post('/users', '5'), 400, 'request body must be a JSON object'],
  // --- unknown and missing fields
  ['unknown field', post('/users', '{"nickname":"abc","region_id":1,"admin":true}'), 400, 'request body has unknown fields'],
  ['unknown field before a bad one', post('/users', '{"nickname":5,"x":1}'), 400, 'request body has unknown fields'],
  ['__proto__ is unknown', post('/users', '{"nickname":"abc","region_id":1,"__proto__":{}}'), 400, 'request body has unknown fields'],
  ['missing first field', post('/users', '{"region_id":1}'), 400, 'missing field: nickname'],
  ['missing second field', post('/users', '{"nickname":"abc"}'), 400, 'missing field: region_id'],
  ['empty object', post('/items', '{}'), 400, 'missing field: seller_id'],
  ['missing beats later invalid', post('/items', '{"category_id":"x"}'), 400, 'missing field: seller_id'],
  ['invalid beats later missing', post('/items', '{"seller_id":"x"}'), 400, 'invalid field: seller_id'],
  // --- wrong types
  ['null is invalid, not absent', post('/users', '{"nickname":null,"region_id":1}'), 400, 'invalid field: nickname'],
  ['number as string', post('/users', '{"nickname":"abc","region_id":"1"}'), 400, 'invalid field: region_id'],
  ['boolean id', post('/users', '{"nickname":"abc","region_id":true}'), 400, 'invalid field: region_id'],
  ['array id', post('/users', '{"nickname":"abc","region_id":[1]}'), 400, 'invalid field: region_id'],
  ['object title on PUT', { method: 'PUT', path: '/items/1', headers: JSON_TYPE, body: '{"title":{},"description":""}' }, 400, 'invalid field: title'],
  ['number nickname', post('/users', '{"nickname":12345,"region_id":1}'), 400, 'invalid field: nickname'],
  ['nickname too short', post('/users', '{"nickname":"ab","region_id":1}'), 400, 'invalid field: nickname'],
  ['nickname too long', post('/users', `{"nickname":"${'a'.repeat(33)}","region_id":1}`), 400, 'invalid field: nickname'],
  ['nickname with a dash', post('/users', '{"nickname":"a-b-c","region_id":1}'), 400, 'invalid field: nickname'],
  ['nickname with a newline', post('/users', '{"nickname":"abc\\n","region_id":1}'), 400, 'invalid field: nickname'],
  ['nickname with non-ASCII letter', post('/users', '{"nickname":"ab\u00e9","region_id":1}'), 400, 'invalid field: nickname'],
  ['empty title', post('/items', item({ title: '' })), 400, 'invalid field: title'],
  ['title of 201 code points', post('/items', item({ title: 'x'.repeat(201) })), 400, 'invalid field: title'],
  ['title of 200 astral code points', post('/items', item({ seller_id: NO_SUCH, title: '\u{1F600}'.repeat(200) })), null, null, SELLER_404],
  ['description of 10000 code points', post('/items', item({ seller_id: NO_SUCH, description: '\u00e9'.repeat(10000) })), null, null, SELLER_404],
  ['title of 201 astral code points', post('/items', item({ title: '\u{1F600}'.repeat(201) })), 400, 'invalid field: title'],
  ['description of 10001 code points', post('/items', item({ description: 'd'.repeat(10001) })), 400, 'invalid field: description'],
  ['NUL in title', post('/items', item({ title: 'a\u0000b' })), 400, 'invalid field: title'],
  ['NUL in description', post('/items', item({ description: '\u0000' })), 400, 'invalid field: description'],
  ['NUL in nickname', post('/users', '{"nickname":"abc\\u0000","region_id":1}'), 400, 'invalid field: nickname'],
  // --- numbers
  ['fractional id', post('/users', '{"nickname":"abc","region_id":1.5}'), 400, 'invalid field: region_id'],
  ['zero id', post('/users', '{"nickname":"abc","region_id":0}'), 400, 'invalid field: region_id'],
  ['negative id', post('/users', '{"nickname":"abc","region_id":-1}'), 400, 'invalid field: region_id'],
  ['id above int4', post('/users', '{"nickname":"abc","region_id":2147483648}'), 400, 'invalid field: region_id'],
  ['huge id', post('/users', '{"nickname":"abc","region_id":1e400}'), 400, 'invalid field: region_id'],
  ['huge negative id', post('/users', '{"nickname":"abc","region_id":-1e400}'), 400, 'invalid field: region_id'],
  ['id with 400 digits', post('/users', `{"nickname":"abc","region_id":${'9'.repeat(400)}}`), 400, 'invalid field: region_id'],
  ['cents above 1e11', post('/items', item({ initial_price_cents: 100000000001 })), 400, 'invalid field: initial_price_cents'],
  ['zero cents', post('/items', item({ initial_price_cents: 0 })), 400, 'invalid field: initial_price_cents'],
  ['duration below 60', post('/items', item({ duration_seconds: 59 })), 400, 'invalid field: duration_seconds'],
  ['duration above 30 days', post('/items', item({ duration_seconds: 2592001 })), 400, 'invalid field: duration_seconds'],
  ['bid amount 1e400', post('/items/1/bids', '{"bidder_id":1,"amount_cents":1e400}'), 400, 'invalid field: amount_cents'],
  ['bid amount as string', post('/items/1/bids', '{"bidder_id":1,"amount_cents":"100"}'), 400, 'invalid field: amount_cents'],
  ['integral spelled 1.0 and 1e0', post('/users', `{"nickname":"abc","region_id":${NO_SUCH}.0}`), null, null, { status: 404, message: 'region not found' }],
  ['cents exactly 1e11 as 1e11', post(`/items/${NO_SUCH}/bids`, '{"bidder_id":1e0,"amount_cents":1e11}'), null, null, { status: 404, message: 'item not found' }],
  // --- paging
  ['limit 0', { path: '/categories/1/items?limit=0' }, 400, 'invalid query parameter: limit'],
  ['limit 101', { path: '/categories/1/items?limit=101' }, 400, 'invalid query parameter: limit'],
  ['negative limit', { path: '/categories/1/items?limit=-1' }, 400, 'invalid query parameter: limit'],
  ['negative offset', { path: '/categories/1/items?offset=-1' }, 400, 'invalid query parameter: offset'],
  ['offset 10001', { path: '/items/1/bids?offset=10001' }, 400, 'invalid query parameter: offset'],
  ['huge offset', { path: '/items/1/bids?offset=99999999999999999999' }, 400, 'invalid query parameter: offset'],
  ['non-numeric limit', { path: '/items/1/bids?limit=ten' }, 400, 'invalid query parameter: limit'],
  ['fractional limit', { path: '/items/1/bids?limit=1.5' }, 400, 'invalid query parameter: limit'],
  ['plus-signed limit', { path: '/items/1/bids?limit=+5' }, 400, 'invalid query parameter: limit'],
  ['percent-encoded limit', { path: '/items/1/bids?limit=%31' }, 400, 'invalid query parameter: limit'],
  ['empty limit', { path: '/items/1/bids?limit=' }, 400, 'invalid query parameter: limit'],
  ['limit without =', { path: '/items/1/bids?limit' }, 400, 'invalid query parameter: limit'],
  ['repeated limit', { path: '/items/1/bids?limit=5&limit=5' }, 400, 'invalid query parameter: limit'],
  ['repeated offset', { path: '/items/1/bids?offset=0&offset=0' }, 400, 'invalid query parameter: offset'],
  ['limit checked before offset', { path: '/items/1/bids?offset=x&limit=x' }, 400, 'invalid query parameter: limit'],
  ['10-digit limit', { path: '/items/1/bids?limit=0000000001' }, 400, 'invalid query parameter: limit'],
  ['9-digit values are fine', { path: `/items/${NO_SUCH}/bids?limit=000000001&offset=000010000` }, null, null, { status: 404, message: 'item not found' }],
  ['other parameters are ignored', { path: `/items/${NO_SUCH}/bids?x=1&limitx=0&&=&LIMIT=0` }, null, null, { status: 404, message: 'item not found' }],
  ['paging ignored on other routes', { path: `/items/${NO_SUCH}?limit=0` }, null, null, { status: 404, message: 'item not found' }],
  // --- path ids
  ['non-numeric id', { path: '/items/abc' }, 400, 'invalid path parameter: id'],
  ['negative id in path', { path: '/items/-1' }, 400, 'invalid path parameter: id'],
  ['zero id in path', { path: '/users/0' }, 400, 'invalid path parameter: id'],
  ['id above int4 in path', { path: '/users/2147483648' }, 400, 'invalid path parameter: id'],
  ['11-digit id', { path: '/users/00000000001' }, 400, 'invalid path parameter: id'],
  ['fractional id in path', { path: '/items/1.0' }, 400, 'invalid path parameter: id'],
  ['percent-encoded id', { path: '/items/%31' }, 400, 'invalid path parameter: id'],
  ['bad id beats bad paging', { path: '/categories/x/items?limit=0' }, 400, 'invalid path parameter: id'],
  ['bad id on bids', { path: '/items/1e3/bids' }, 400, 'invalid path parameter: id'],
  ['10-digit id is fine', { path: `/users/${String(NO_SUCH).padStart(10, '0')}` }, null, null, { status: 404, message: 'user not found' }],
  // --- routes
  ['unknown route', { path: '/nope' }, 404, 'route not found'],
  ['trailing slash', { path: '/regions/' }, 404, 'route not found'],
  ['doubled slash', { path: '//regions' }, 404, 'route not found'],
  ['empty id segment', { path: '/items//bids' }, 404, 'route not found'],
  ['extra segment', { path: '/items/1/bids/2' }, 404, 'route not found'],
  ['case matters', { path: '/Regions' }, 404, 'route not found'],
  ['percent-encoded route', { path: '/%72egions' }, 404, 'route not found'],
  // An absolute-form target is routed on its path (contract step 0), so an unknown one is a 404.
  ['absolute-form target', { path: 'http://127.0.0.1/nope' }, 404, 'route not found'],
  ['absolute-form target, bad paging', { path: 'http://127.0.0.1/categories/1/items?limit=0' }, 400, 'invalid query parameter: limit'],
  ['fragment is raw: part of the limit value', { path: '/categories/1/items?limit=5#frag' }, 400, 'invalid query parameter: limit'],
  ['fragment is raw: part of the path', { path: '/health#x' }, 404, 'route not found'],
  ['asterisk-form target', { method: 'OPTIONS', path: '*' }, 400, 'bad request'],
  ['unknown expectation', { path: '/health', headers: { Expect: 'foo' } }, 417, 'expectation failed'],
  // --- methods
  ['PATCH an item', { method: 'PATCH', path: '/items/1' }, 405, 'method not allowed', null, 'GET, PUT, DELETE'],
  ['POST to /health', post('/health', '{}'), 405, 'method not allowed', null, 'GET'],
  ['DELETE a user', { method: 'DELETE', path: '/users/1' }, 405, 'method not allowed', null, 'GET'],
  ['GET /items', { path: '/items' }, 405, 'method not allowed', null, 'POST'],
  ['PUT bids', { method: 'PUT', path: '/items/1/bids' }, 405, 'method not allowed', null, 'GET, POST'],
  ['OPTIONS', { method: 'OPTIONS', path: '/users' }, 405, 'method not allowed', null, 'POST'],
  ['HEAD is not GET', { method: 'HEAD', path: '/health' }, 405, null, null, 'GET'],
  ['method before path id', { method: 'PATCH', path: '/items/abc' }, 405, 'method not allowed', null, 'GET, PUT, DELETE'],
  // --- content type
  ['no content type', post('/users', '{"nickname":"abc","region_id":1}', {}), 415, 'content type must be application/json'],
  ['text/plain', post('/users', '{"nickname":"abc","region_id":1}', { 'Content-Type': 'text/plain' }), 415, 'content type must be application/json'],
  ['form encoded', post('/users', 'nickname=abc', { 'Content-Type': 'application/x-www-form-urlencoded' }), 415, 'content type must be application/json'],
  ['application/jsonx', post('/users', '{}', { 'Content-Type': 'application/jsonx' }), 415, 'content type must be application/json'],
  ['vendor json', post('/users', '{}', { 'Content-Type': 'application/vnd.api+json' }), 415, 'content type must be application/json'],
  ['415 beats a bad body', post('/users', bytes([0xff]), { 'Content-Type': 'text/json' }), 415, 'content type must be application/json'],
  ['415 on PUT', { method: 'PUT', path: '/items/1', body: '{}' }, 415, 'content type must be application/json'],
  ['charset parameter is ignored', post('/users', '{"nickname":"abc"}', { 'Content-Type': 'application/json; charset=utf-8' }), 400, 'missing field: region_id'],
  ['case and spaces are ignored', post('/users', '{"nickname":"abc"}', { 'Content-Type': ' Application/JSON ;x=y' }), 400, 'missing field: region_id'],
  // --- body size
  ['declared body too large', { method: 'POST', path: '/users', headers: { ...JSON_TYPE, 'Content-Length': '65537' } }, 413, 'request body exceeds 65536 bytes'],
  ['declared beyond 2^64', { method: 'POST', path: '/users', headers: { ...JSON_TYPE, 'Content-Length': '99999999999999999999999' } }, 413, 'request body exceeds 65536 bytes'],
  ['declared 1 GB', { method: 'POST', path: '/users', headers: { ...JSON_TYPE, 'Content-Length': '1000000000' } }, 413, 'request body exceeds 65536 bytes'],
  ['413 beats 404', { method: 'GET', path: '/nope', headers: { 'Content-Length': '70000' } }, 413, 'request body exceeds 65536 bytes'],
  ['413 beats 405', { method: 'PATCH', path: '/items/1', headers: { 'Content-Length': '70000' } }, 413, 'request body exceeds 65536 bytes'],
  ['declared with Expect: 100-continue', { method: 'POST', path: '/users', headers: { ...JSON_TYPE, 'Content-Length': '65537', Expect: '100-continue' } }, 413, 'request body exceeds 65536 bytes'],
  ['sent body too large', post('/users', 'x'.repeat(65537)), 413, 'request body exceeds 65536 bytes'],
  ['chunked body too large', { method: 'POST', path: '/users', headers: JSON_TYPE, chunks: Array.from({ length: 9 }, () => Buffer.alloc(8192, 0x20)) }, 413, 'request body exceeds 65536 bytes'],
  ['chunked GET body too large', { method: 'GET', path: '/health', chunks: [Buffer.alloc(40000, 0x20), Buffer.alloc(40000, 0x20)] }, 413, 'request body exceeds 65536 bytes'],
  ['exactly 65536 bytes is fine', post('/users', padded(`{"nickname":"abc","region_id":${NO_SUCH}}`, 65536)), null, null, { status: 404, message: 'region not found' }],
  ['chunked 65536 bytes is fine', { method: 'POST', path: '/users', headers: JSON_TYPE, chunks: [Buffer.from(padded(`{"nickname":"abc","region_id":${NO_SUCH}}`, 32768)), Buffer.alloc(32768, 0x20)] }, null, null, { status: 404, message: 'region not found' }],
  ['GET body is read and ignored', { method: 'GET', path: '/health', body: 'not json' }, 200, null],
]

module.exports = cases.map(([name, request, status, message, db, allow]) => ({ name, request, status, message, db, allow }))
