// The request sequence of bidbench's first load script (bidbench.js, before loadgen/): its hash, salts, weight tables and
// build() for the given settings, in plain JavaScript. Usage: node first_driver_sequence.js '<json settings>'; prints a JSON
// array of {type, method, url, body} for requests 0..n-1. Kept verbatim where it decides anything.
'use strict';

const S = JSON.parse(process.argv[2]);
const MIXES = {
  browse: { list_categories: 10, list_category_items: 30, get_item: 35, list_item_bids: 15, get_user: 10 },
  bid: { place_bid: 80, get_item: 20 },
  mixed: {
    list_categories: 5, list_category_items: 25, get_item: 35, list_item_bids: 10, get_user: 10,
    place_bid: 9, create_user: 2, create_item: 2, update_item: 2,
  },
  payload: { payload: 1 },
};
const INVALID_MIX = { invalid_json: 1, invalid_route: 1, invalid_id: 1, invalid_paging: 1, invalid_content_type: 1 };
const N_USERS = 10000 * S.scale;
const N_ITEMS = 15000 * S.scale;
const VALID_TYPES = Object.keys(MIXES[S.mix]);
const TYPES = VALID_TYPES.concat(S.invalidShare > 0 ? Object.keys(INVALID_MIX) : []);

function weightTable(weights, offset) {
  const table = [];
  Object.keys(weights).forEach((t, k) => { for (let w = 0; w < weights[t]; w++) table.push(offset + k); });
  return table;
}
const VALID_TABLE = weightTable(MIXES[S.mix], 0);
const INVALID_TABLE = weightTable(INVALID_MIX, VALID_TYPES.length);
const INVALID_THRESHOLD = Math.floor(S.invalidShare * 4294967296);

function mix32(x) {
  x = Math.imul(x ^ (x >>> 16), 0x21f0aaad);
  x = Math.imul(x ^ (x >>> 15), 0x735a2d97);
  return (x ^ (x >>> 15)) >>> 0;
}
const SALT = S.phase === 'w' ? mix32(S.seed ^ 0x5bd1e995) : mix32(S.seed ^ 0x27d4eb2f);
const openItem = (r) => (S.open.length === 0 ? 1 + (r % N_ITEMS) : S.open[r % S.open.length]);
const amount = 200000 + Math.floor((S.nowMs - Date.UTC(2026, 0, 1)) / 4);
const PAYLOAD_CORE = '{"seller_id":1,"category_id":1,"title":"payload","description":"","initial_price_cents":1000,"duration_seconds":86400';

const out = [];
for (let i = 0; i < S.n; i++) {
  const h = mix32((i + SALT) | 0);
  const r1 = mix32(h ^ 0x9e3779b9);
  const r2 = mix32(h + 0x7f4a7c15);
  const b = S.targets[i % S.targets.length];
  const type = TYPES[h < INVALID_THRESHOLD ? INVALID_TABLE[r1 % INVALID_TABLE.length] : VALID_TABLE[r1 % VALID_TABLE.length]];
  let method = 'GET';
  let url;
  let body = null;
  switch (type) {
    case 'list_categories': url = `${b}/categories`; break;
    case 'list_category_items': url = `${b}/categories/${1 + (r2 % 20)}/items?limit=20&offset=${20 * ((r2 >>> 8) % 5)}`; break;
    case 'get_item': url = `${b}/items/${1 + (r2 % N_ITEMS)}`; break;
    case 'list_item_bids': url = `${b}/items/${1 + (r2 % N_ITEMS)}/bids`; break;
    case 'get_user': url = `${b}/users/${1 + (r2 % N_USERS)}`; break;
    case 'place_bid':
      method = 'POST';
      url = `${b}/items/${openItem(r2)}/bids`;
      body = `{"bidder_id":${1 + (mix32(r2) % N_USERS)},"amount_cents":${amount}}`;
      break;
    case 'create_user':
      method = 'POST';
      url = `${b}/users`;
      body = `{"nickname":"bb${S.runTag}${S.phase}${i.toString(36)}","region_id":${1 + (r2 % 20)}}`;
      break;
    case 'create_item':
      method = 'POST';
      url = `${b}/items`;
      body = `{"seller_id":${1 + (r2 % N_USERS)},"category_id":${1 + (mix32(r2) % 19)},"title":"bidbench item ${i}","description":"created by the bidbench load generator","initial_price_cents":${100 + (r2 % 10000)},"duration_seconds":604800}`;
      break;
    case 'update_item':
      method = 'PUT';
      url = `${b}/items/${1 + (r2 % N_ITEMS)}`;
      body = `{"title":"bidbench update ${i}","description":"updated by the bidbench load generator"}`;
      break;
    case 'payload':
      method = 'POST';
      url = `${b}/items`;
      body = PAYLOAD_CORE + ' '.repeat(S.payloadBytes - PAYLOAD_CORE.length - 1) + '}';
      break;
    case 'invalid_json': method = 'POST'; url = `${b}/items`; body = '{"seller_id":1,"category_id":'; break;
    case 'invalid_route': url = `${b}/no-such-route/${r2 % 1000}`; break;
    case 'invalid_id': url = `${b}/items/x${r2 % 1000}`; break;
    case 'invalid_paging': url = `${b}/categories/${1 + (r2 % 20)}/items?limit=0`; break;
    case 'invalid_content_type': method = 'POST'; url = `${b}/users`; body = '{"nickname":"plaintext","region_id":1}'; break;
    default: throw new Error(`no builder for ${type}`);
  }
  out.push({ type, method, url, body });
}
process.stdout.write(JSON.stringify(out));
