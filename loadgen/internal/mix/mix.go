// Package mix builds the requests of each mix. Request i of a phase is a pure function of the seed,
// the mix, the invalid share, the scale, the open-item list and i: an integer hash of i, not a
// random stream, so the sequence is the same whichever goroutine sends it. Bid amounts and new
// nicknames are the only time-derived parts.
package mix

import (
	"fmt"
	"strconv"
	"time"
)

// Kind is a request type.
type Kind int

const (
	ListCategories Kind = iota
	ListCategoryItems
	GetItem
	ListItemBids
	GetUser
	PlaceBid
	CreateUser
	CreateItem
	UpdateItem
	Payload
	InvalidJSON
	InvalidRoute
	InvalidID
	InvalidPaging
	InvalidContentType
	Health
)

var kindNames = [...]string{
	"list_categories", "list_category_items", "get_item", "list_item_bids", "get_user", "place_bid",
	"create_user", "create_item", "update_item", "payload", "invalid_json", "invalid_route", "invalid_id",
	"invalid_paging", "invalid_content_type", "health",
}

func (k Kind) String() string { return kindNames[k] }

// Weighted is one request type with its integer weight in a mix (its share is weight / sum).
type Weighted struct {
	Kind   Kind
	Weight int
}

// Mixes: browse is read-only (RUBiS browsing), bid is write-heavy, mixed is 85 % reads and 15 % writes
// (RUBiS bidding), payload posts items of an exact body size.
var Mixes = map[string][]Weighted{
	"browse": {{ListCategories, 10}, {ListCategoryItems, 30}, {GetItem, 35}, {ListItemBids, 15}, {GetUser, 10}},
	"bid":    {{PlaceBid, 80}, {GetItem, 20}},
	"mixed": {
		{ListCategories, 5}, {ListCategoryItems, 25}, {GetItem, 35}, {ListItemBids, 10}, {GetUser, 10},
		{PlaceBid, 9}, {CreateUser, 2}, {CreateItem, 2}, {UpdateItem, 2},
	},
	"payload": {{Payload, 1}},
	// bare is GET /health alone: what the driver itself costs, against any target that answers it.
	"bare": {{Health, 1}},
}

// InvalidMix replaces a share of requests with deliberately invalid ones, equally weighted.
var InvalidMix = []Weighted{{InvalidJSON, 1}, {InvalidRoute, 1}, {InvalidID, 1}, {InvalidPaging, 1}, {InvalidContentType, 1}}

// ExpectedStatus is what the contract answers to each invalid request type.
var ExpectedStatus = map[Kind]int{InvalidJSON: 400, InvalidRoute: 404, InvalidID: 400, InvalidPaging: 400, InvalidContentType: 415}

// Seeded data ranges (harness/db/generator.py): users 1..10000*S, items 1..15000*S, categories 1..20
// (20 has no open items), regions 1..20.
const (
	usersPerScale  = 10000
	itemsPerScale  = 15000
	categories     = 20
	openCategories = 19
	regions        = 20
	// BodyLimit is the contract's largest accepted body.
	BodyLimit = 65536
)

// Bid amounts grow with the wall clock, a quarter cent per ms since 2026-01-01, from 200000 cents
// (above every seeded maximum): a bid normally beats the item's maximum, also on a database earlier
// runs bid on, and amounts stay below the contract's 1e11 until 2038.
var bidEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const payloadCore = `{"seller_id":1,"category_id":1,"title":"payload","description":"","initial_price_cents":1000,"duration_seconds":86400`

// MinPayloadBytes is the smallest valid payload body.
const MinPayloadBytes = len(payloadCore) + 1

// Phase salts keep the warm-up's request sequence apart from the measurement's.
const (
	warmSaltKey    = 0x5bd1e995
	measureSaltKey = 0x27d4eb2f
)

// Mix32 is a 32-bit integer hash (the same bit operations as the JavaScript Math.imul version the
// first driver used, so a seed names the same sequence).
func Mix32(x uint32) uint32 {
	x = (x ^ (x >> 16)) * 0x21f0aaad
	x = (x ^ (x >> 15)) * 0x735a2d97
	return x ^ (x >> 15)
}

// Request is one built request. Path is relative to its target's base URL.
type Request struct {
	Kind        Kind
	Target      int
	Method      string
	Path        string
	Body        []byte
	ContentType string
}

// Phase names the warm-up ('w') or the measurement ('m').
type Phase byte

const (
	Warm    Phase = 'w'
	Measure Phase = 'm'
)

// Builder turns (phase, i) into a request.
type Builder struct {
	Types        []Kind // valid types in mix order, then the invalid ones
	valid        []int  // weight tables: indexes into Types
	invalid      []int
	threshold    uint64 // requests whose hash is below it are invalid
	nTargets     int
	nUsers       uint32
	nItems       uint32
	openItems    []int64
	runTag       string
	payload      []byte
	warmSalt     uint32
	measureSalt  uint32
	Now          func() time.Time
	UsesOpenItem bool
}

// NewBuilder prepares the weight tables of a mix. runTag keeps new nicknames unique across runs.
func NewBuilder(mixName string, invalidShare float64, scale, seed, nTargets, payloadBytes int, runTag string) (*Builder, error) {
	weights, ok := Mixes[mixName]
	if !ok {
		return nil, fmt.Errorf("unknown mix %q", mixName)
	}
	b := &Builder{
		nTargets: nTargets, nUsers: uint32(usersPerScale * scale), nItems: uint32(itemsPerScale * scale),
		runTag: runTag, Now: time.Now,
		warmSalt: Mix32(uint32(seed) ^ warmSaltKey), measureSalt: Mix32(uint32(seed) ^ measureSaltKey),
		threshold: uint64(invalidShare * 4294967296),
	}
	for _, w := range weights {
		for range w.Weight {
			b.valid = append(b.valid, len(b.Types))
		}
		b.Types = append(b.Types, w.Kind)
		b.UsesOpenItem = b.UsesOpenItem || w.Kind == PlaceBid
	}
	if invalidShare > 0 {
		for _, w := range InvalidMix {
			for range w.Weight {
				b.invalid = append(b.invalid, len(b.Types))
			}
			b.Types = append(b.Types, w.Kind)
		}
	}
	if mixName == "payload" {
		if payloadBytes < MinPayloadBytes {
			return nil, fmt.Errorf("the smallest valid payload body is %d bytes", MinPayloadBytes)
		}
		body := make([]byte, 0, payloadBytes)
		body = append(body, payloadCore...)
		for len(body) < payloadBytes-1 {
			body = append(body, ' ')
		}
		b.payload = append(body, '}')
	}
	return b, nil
}

// SetOpenItems gives the ids of open auctions that bids go to (sorted ascending).
func (b *Builder) SetOpenItems(ids []int64) { b.openItems = ids }

// TypeIndex is a request kind's position in Types (the key of per-type statistics).
func (b *Builder) TypeIndex(k Kind) int {
	for i, t := range b.Types {
		if t == k {
			return i
		}
	}
	return -1
}

func (b *Builder) openItem(r uint32) int64 {
	if len(b.openItems) == 0 {
		return 1 + int64(r%b.nItems)
	}
	return b.openItems[int(r%uint32(len(b.openItems)))]
}

// Build returns request i of the phase and the index of its type in Types.
func (b *Builder) Build(phase Phase, i uint64) (Request, int) {
	salt := b.measureSalt
	if phase == Warm {
		salt = b.warmSalt
	}
	h := Mix32(uint32(i) + salt)
	r1 := Mix32(h ^ 0x9e3779b9)
	r2 := Mix32(h + 0x7f4a7c15)
	var t int
	if uint64(h) < b.threshold {
		t = b.invalid[int(r1%uint32(len(b.invalid)))]
	} else {
		t = b.valid[int(r1%uint32(len(b.valid)))]
	}
	req := Request{Kind: b.Types[t], Target: int(i % uint64(b.nTargets)), Method: "GET"}
	is := strconv.FormatUint(i, 10)
	switch req.Kind {
	case ListCategories:
		req.Path = "/categories"
	case ListCategoryItems:
		req.Path = "/categories/" + u32(1+r2%categories) + "/items?limit=20&offset=" + u32(20*((r2>>8)%5))
	case GetItem:
		req.Path = "/items/" + u32(1+r2%b.nItems)
	case ListItemBids:
		req.Path = "/items/" + u32(1+r2%b.nItems) + "/bids"
	case GetUser:
		req.Path = "/users/" + u32(1+r2%b.nUsers)
	case PlaceBid:
		amount := 200000 + b.Now().Sub(bidEpoch).Milliseconds()/4
		req.Method, req.ContentType = "POST", "application/json"
		req.Path = "/items/" + strconv.FormatInt(b.openItem(r2), 10) + "/bids"
		req.Body = []byte(`{"bidder_id":` + u32(1+Mix32(r2)%b.nUsers) + `,"amount_cents":` + strconv.FormatInt(amount, 10) + `}`)
	case CreateUser:
		req.Method, req.ContentType, req.Path = "POST", "application/json", "/users"
		req.Body = []byte(`{"nickname":"bb` + b.runTag + string(phase) + strconv.FormatUint(i, 36) + `","region_id":` + u32(1+r2%regions) + `}`)
	case CreateItem:
		req.Method, req.ContentType, req.Path = "POST", "application/json", "/items"
		req.Body = []byte(`{"seller_id":` + u32(1+r2%b.nUsers) + `,"category_id":` + u32(1+Mix32(r2)%openCategories) +
			`,"title":"bidbench item ` + is + `","description":"created by the bidbench load generator","initial_price_cents":` +
			u32(100+r2%10000) + `,"duration_seconds":604800}`)
	case UpdateItem:
		req.Method, req.ContentType = "PUT", "application/json"
		req.Path = "/items/" + u32(1+r2%b.nItems)
		req.Body = []byte(`{"title":"bidbench update ` + is + `","description":"updated by the bidbench load generator"}`)
	case Payload:
		req.Method, req.ContentType, req.Path, req.Body = "POST", "application/json", "/items", b.payload
	case InvalidJSON:
		req.Method, req.ContentType, req.Path = "POST", "application/json", "/items"
		req.Body = []byte(`{"seller_id":1,"category_id":`)
	case InvalidRoute:
		req.Path = "/no-such-route/" + u32(r2%1000)
	case InvalidID:
		req.Path = "/items/x" + u32(r2%1000)
	case InvalidPaging:
		req.Path = "/categories/" + u32(1+r2%categories) + "/items?limit=0"
	case InvalidContentType:
		req.Method, req.ContentType, req.Path = "POST", "text/plain", "/users"
		req.Body = []byte(`{"nickname":"plaintext","region_id":1}`)
	case Health:
		req.Path = "/health"
	}
	return req, t
}

func u32(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

// Salt is a phase's hash salt (the closed model's think times draw from it too).
func (b *Builder) Salt(phase Phase) uint32 {
	if phase == Warm {
		return b.warmSalt
	}
	return b.measureSalt
}
