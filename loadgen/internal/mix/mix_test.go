package mix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

var fixedNow = time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.UTC)

func newBuilder(t *testing.T, mixName string, invalidShare float64, scale, seed, nTargets, payloadBytes int) *Builder {
	t.Helper()
	b, err := NewBuilder(mixName, invalidShare, scale, seed, nTargets, payloadBytes, "tag")
	if err != nil {
		t.Fatalf("NewBuilder(%s): %v", mixName, err)
	}
	b.Now = func() time.Time { return fixedNow }
	return b
}

func TestMix32(t *testing.T) {
	// Values of the JavaScript mix32 of the first driver's script (bidbench.js, node -e), so the hash is the same.
	for _, c := range []struct{ in, want uint32 }{
		{0, 0}, {1, 0x86d2fa73}, {42, 0x28082ac6}, {0xffffffff, 0x99b5e683}, {0x9e3779b9, 0x64625032},
	} {
		if got := Mix32(c.in); got != c.want {
			t.Errorf("Mix32(%#x) = %#x, want %#x", c.in, got, c.want)
		}
	}
}

func TestTypeSharesFollowTheWeights(t *testing.T) {
	const n = 100_000
	for _, invalidShare := range []float64{0, 0.2} {
		for name, weights := range Mixes {
			t.Run(fmt.Sprintf("%s/invalid=%g", name, invalidShare), func(t *testing.T) {
				b := newBuilder(t, name, invalidShare, 1, 42, 1, 1024)
				counts := map[Kind]int{}
				for i := range uint64(n) {
					req, typ := b.Build(Measure, i)
					if b.Types[typ] != req.Kind {
						t.Fatalf("request %d: type index %d is %v, request is %v", i, typ, b.Types[typ], req.Kind)
					}
					counts[req.Kind]++
				}
				sum := 0
				for _, w := range weights {
					sum += w.Weight
				}
				want := map[Kind]float64{}
				for _, w := range weights {
					want[w.Kind] += (1 - invalidShare) * float64(w.Weight) / float64(sum)
				}
				if invalidShare > 0 {
					for _, w := range InvalidMix {
						want[w.Kind] += invalidShare / float64(len(InvalidMix))
					}
				}
				for kind, share := range want {
					got := float64(counts[kind]) / n
					if math.Abs(got-share) > 0.004 {
						t.Errorf("%v: share %.4f, want %.4f", kind, got, share)
					}
				}
				for kind, c := range counts {
					if _, ok := want[kind]; !ok {
						t.Errorf("%v is not in the mix but was built %d times", kind, c)
					}
				}
				invalid := 0
				for kind := range ExpectedStatus {
					invalid += counts[kind]
				}
				if got := float64(invalid) / n; math.Abs(got-invalidShare) > 0.004 {
					t.Errorf("invalid share %.4f, want %g", got, invalidShare)
				}
			})
		}
	}
}

func TestInvalidShareOfOneIsAllInvalid(t *testing.T) {
	b := newBuilder(t, "browse", 1, 1, 42, 1, 1024)
	for i := range uint64(10_000) {
		if req, _ := b.Build(Measure, i); ExpectedStatus[req.Kind] == 0 {
			t.Fatalf("request %d is %v with BB_INVALID_SHARE=1", i, req.Kind)
		}
	}
}

// idIn reports whether text is a decimal integer in lo..hi.
func idIn(text string, lo, hi uint64) bool {
	v, err := strconv.ParseUint(text, 10, 64)
	return err == nil && v >= lo && v <= hi && strconv.FormatUint(v, 10) == text
}

func TestRequestsFollowTheRules(t *testing.T) {
	var (
		categoryItems = regexp.MustCompile(`^/categories/(\d+)/items\?limit=20&offset=(\d+)$`)
		item          = regexp.MustCompile(`^/items/(\d+)$`)
		itemBids      = regexp.MustCompile(`^/items/(\d+)/bids$`)
		user          = regexp.MustCompile(`^/users/(\d+)$`)
		noRoute       = regexp.MustCompile(`^/no-such-route/(\d+)$`)
		badID         = regexp.MustCompile(`^/items/x(\d+)$`)
		badPaging     = regexp.MustCompile(`^/categories/(\d+)/items\?limit=0$`)
		nickname      = regexp.MustCompile(`^bbtag[mw][0-9a-z]+$`)
	)
	for _, scale := range []int{1, 3} {
		users, items := uint64(10000*scale), uint64(15000*scale)
		b := newBuilder(t, "mixed", 0.3, scale, 7, 3, 1024)
		seen := map[Kind]bool{}
		for i := range uint64(20_000) {
			req, _ := b.Build(Measure, i)
			seen[req.Kind] = true
			fail := func(why string) {
				t.Helper()
				t.Fatalf("scale %d, request %d (%v): %s %s %s: %s", scale, i, req.Kind, req.Method, req.Path, req.Body, why)
			}
			if req.Target != int(i%3) {
				fail(fmt.Sprintf("target %d, want round-robin %d", req.Target, i%3))
			}
			wantMethod := map[Kind]string{PlaceBid: "POST", CreateUser: "POST", CreateItem: "POST", UpdateItem: "PUT",
				InvalidJSON: "POST", InvalidContentType: "POST"}[req.Kind]
			if wantMethod == "" {
				wantMethod = "GET"
			}
			if req.Method != wantMethod {
				fail("method, want " + wantMethod)
			}
			if (req.Method == "GET") != (req.Body == nil) {
				fail("a GET has no body and the others have one")
			}
			if req.Body != nil {
				wantCT := "application/json"
				if req.Kind == InvalidContentType {
					wantCT = "text/plain"
				}
				if req.ContentType != wantCT {
					fail("content type " + req.ContentType)
				}
				if json.Valid(req.Body) == (req.Kind == InvalidJSON) {
					fail("body validity")
				}
			}
			var body map[string]any
			if req.Body != nil && req.Kind != InvalidJSON {
				dec := json.NewDecoder(bytes.NewReader(req.Body))
				dec.UseNumber()
				if err := dec.Decode(&body); err != nil {
					fail(err.Error())
				}
			}
			num := func(key string, lo, hi uint64) {
				t.Helper()
				v, ok := body[key].(json.Number)
				if !ok || !idIn(v.String(), lo, hi) {
					fail(fmt.Sprintf("%s=%v not in %d..%d", key, body[key], lo, hi))
				}
			}
			switch req.Kind {
			case ListCategories:
				if req.Path != "/categories" {
					fail("path")
				}
			case ListCategoryItems:
				m := categoryItems.FindStringSubmatch(req.Path)
				if m == nil || !idIn(m[1], 1, 20) || !map[string]bool{"0": true, "20": true, "40": true, "60": true, "80": true}[m[2]] {
					fail("path")
				}
			case GetItem, UpdateItem:
				if m := item.FindStringSubmatch(req.Path); m == nil || !idIn(m[1], 1, items) {
					fail("path")
				}
			case ListItemBids, PlaceBid:
				if m := itemBids.FindStringSubmatch(req.Path); m == nil || !idIn(m[1], 1, items) {
					fail("path")
				}
			case GetUser:
				if m := user.FindStringSubmatch(req.Path); m == nil || !idIn(m[1], 1, users) {
					fail("path")
				}
			case CreateUser, InvalidContentType:
				if req.Path != "/users" {
					fail("path")
				}
			case CreateItem, InvalidJSON:
				if req.Path != "/items" {
					fail("path")
				}
			case InvalidRoute:
				if m := noRoute.FindStringSubmatch(req.Path); m == nil || !idIn(m[1], 0, 999) {
					fail("path")
				}
			case InvalidID:
				if m := badID.FindStringSubmatch(req.Path); m == nil || !idIn(m[1], 0, 999) {
					fail("path")
				}
			case InvalidPaging:
				if m := badPaging.FindStringSubmatch(req.Path); m == nil || !idIn(m[1], 1, 20) {
					fail("path")
				}
			default:
				fail("not in the mixed mix")
			}
			switch req.Kind {
			case PlaceBid:
				num("bidder_id", 1, users)
				// A quarter cent per ms since 2026-01-01.
				want := 200000 + fixedNow.Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).Milliseconds()/4
				if body["amount_cents"].(json.Number).String() != strconv.FormatInt(want, 10) {
					fail(fmt.Sprintf("amount, want %d", want))
				}
			case CreateUser:
				num("region_id", 1, 20)
				if nick, _ := body["nickname"].(string); !nickname.MatchString(nick) || nick != "bbtagm"+strconv.FormatUint(i, 36) {
					fail("nickname")
				}
			case CreateItem:
				num("seller_id", 1, users)
				num("category_id", 1, 19) // category 20 has no open items
				num("initial_price_cents", 100, 10099)
				num("duration_seconds", 604800, 604800)
				if body["title"] != "bidbench item "+strconv.FormatUint(i, 10) {
					fail("title")
				}
			case UpdateItem:
				if len(body) != 2 || body["title"] != "bidbench update "+strconv.FormatUint(i, 10) {
					fail("body")
				}
			}
		}
		if len(seen) != 14 {
			t.Errorf("scale %d: %d request types built, want the 9 of mixed and the 5 invalid ones", scale, len(seen))
		}
	}
}

func TestPayloadBodyHasTheExactSize(t *testing.T) {
	for _, size := range []int{MinPayloadBytes, 1024, 2000, BodyLimit, BodyLimit + 1, 1 << 20} {
		b := newBuilder(t, "payload", 0, 1, 42, 1, size)
		req, _ := b.Build(Measure, 0)
		if req.Kind != Payload || req.Method != "POST" || req.Path != "/items" || req.ContentType != "application/json" {
			t.Fatalf("size %d: %v %s %s %s", size, req.Kind, req.Method, req.Path, req.ContentType)
		}
		if len(req.Body) != size {
			t.Errorf("size %d: body of %d bytes", size, len(req.Body))
		}
		var item struct {
			SellerID          int    `json:"seller_id"`
			CategoryID        int    `json:"category_id"`
			Title             string `json:"title"`
			Description       string `json:"description"`
			InitialPriceCents int    `json:"initial_price_cents"`
			DurationSeconds   int    `json:"duration_seconds"`
		}
		dec := json.NewDecoder(bytes.NewReader(req.Body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&item); err != nil || item.SellerID != 1 || item.CategoryID != 1 || item.DurationSeconds != 86400 {
			t.Errorf("size %d: not the payload item: %+v, %v", size, item, err)
		}
	}
	if _, err := NewBuilder("payload", 0, 1, 42, 1, MinPayloadBytes-1, "tag"); err == nil {
		t.Errorf("a %d-byte payload body was accepted; the smallest valid one is %d", MinPayloadBytes-1, MinPayloadBytes)
	}
	if _, err := NewBuilder("nope", 0, 1, 42, 1, 1024, "tag"); err == nil {
		t.Error("an unknown mix was accepted")
	}
}

func TestBidsGoToOpenItems(t *testing.T) {
	b := newBuilder(t, "bid", 0, 1, 42, 1, 1024)
	open := []int64{3, 17, 250, 4000, 14999}
	b.SetOpenItems(open)
	isOpen := map[string]bool{}
	for _, id := range open {
		isOpen[strconv.FormatInt(id, 10)] = true
	}
	used := map[string]bool{}
	bids := 0
	for i := range uint64(5000) {
		req, _ := b.Build(Measure, i)
		if req.Kind != PlaceBid {
			continue
		}
		bids++
		m := regexp.MustCompile(`^/items/(\d+)/bids$`).FindStringSubmatch(req.Path)
		if m == nil || !isOpen[m[1]] {
			t.Fatalf("request %d bids on %s, not an open item", i, req.Path)
		}
		used[m[1]] = true
	}
	if bids < 3500 || len(used) != len(open) {
		t.Errorf("%d bids over %d of the %d open items", bids, len(used), len(open))
	}
	if !b.UsesOpenItem || newBuilder(t, "browse", 0.5, 1, 42, 1, 1024).UsesOpenItem {
		t.Error("UsesOpenItem is true exactly for mixes with bids")
	}
}

// masked drops the time-derived parts: the bid amount and the run tag in new nicknames.
var timeDerived = regexp.MustCompile(`"amount_cents":\d+|"nickname":"bb[0-9a-z]*[mw]`)

func sequence(b *Builder, phase Phase, n int) []string {
	out := make([]string, n)
	for i := range n {
		req, typ := b.Build(phase, uint64(i))
		body := timeDerived.ReplaceAllString(string(req.Body), "")
		out[i] = fmt.Sprintf("%d %v %d %s %s %s %s", typ, req.Kind, req.Target, req.Method, req.Path, req.ContentType, body)
	}
	return out
}

func TestSeedNamesTheSequence(t *testing.T) {
	const n = 2000
	build := func(seed int, runTag string, now time.Time) *Builder {
		b, err := NewBuilder("mixed", 0.125, 1, seed, 2, 1024, runTag)
		if err != nil {
			t.Fatal(err)
		}
		b.Now = func() time.Time { return now }
		return b
	}
	a := build(42, "aaa", fixedNow)
	same := build(42, "zz9", fixedNow.Add(time.Hour))
	other := build(43, "aaa", fixedNow)
	first := sequence(a, Measure, n)
	if got := sequence(same, Measure, n); fmt.Sprint(got) != fmt.Sprint(first) {
		for i := range first {
			if got[i] != first[i] {
				t.Fatalf("seed 42 twice: request %d is %q, then %q", i, first[i], got[i])
			}
		}
	}
	differ := func(x, y []string) int {
		d := 0
		for i := range x {
			if x[i] != y[i] {
				d++
			}
		}
		return d
	}
	if d := differ(first, sequence(other, Measure, n)); d < n*9/10 {
		t.Errorf("seeds 42 and 43: only %d of %d requests differ", d, n)
	}
	if d := differ(first, sequence(a, Warm, n)); d < n*9/10 {
		t.Errorf("warm-up and measurement of seed 42: only %d of %d requests differ", d, n)
	}
	// Bodies differ only in their time-derived parts.
	req1, _ := a.Build(Measure, 5)
	req2, _ := a.Build(Measure, 5)
	if !bytes.Equal(req1.Body, req2.Body) || req1.Path != req2.Path {
		t.Error("one builder built request 5 twice differently")
	}
}

type firstDriverRequest struct {
	Type   string  `json:"type"`
	Method string  `json:"method"`
	URL    string  `json:"url"`
	Body   *string `json:"body"`
}

// TestSameSequenceAsTheFirstDriver runs the old script's request builder (testdata/first_driver_sequence.js,
// its JavaScript alone) under node and checks the Go builder makes the very same requests.
func TestSameSequenceAsTheFirstDriver(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed to compare the request sequence with the first driver's (install nodejs): %v", err)
	}
	const n = 200
	open := []int64{20, 39, 58, 77, 96, 115, 1234, 14999}
	targets := []string{"http://127.0.0.1:8080", "http://127.0.0.1:8081"}
	cases := []struct {
		name         string
		mix          string
		invalidShare float64
		scale, seed  int
		targets      int
		phase        Phase
		open         []int64
	}{
		{"mixed seed 42", "mixed", 0.125, 1, 42, 1, Measure, nil},
		{"browse seed 42", "browse", 0, 1, 42, 1, Measure, nil},
		{"browse seed 42 warm-up", "browse", 0, 1, 42, 1, Warm, nil},
		{"bid to open items", "bid", 0, 1, 42, 1, Measure, open},
		{"bid without open items", "bid", 0, 2, 42, 1, Measure, nil},
		{"mixed two targets scale 5", "mixed", 0.3, 5, 7, 2, Measure, nil},
		{"mixed warm-up seed 2^31-1", "mixed", 0.5, 1, math.MaxInt32, 2, Warm, open},
		{"payload", "payload", 0.1, 1, 42, 1, Measure, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t, c.mix, c.invalidShare, c.scale, c.seed, c.targets, 300)
			b.SetOpenItems(c.open)
			settings, _ := json.Marshal(map[string]any{
				"mix": c.mix, "invalidShare": c.invalidShare, "scale": c.scale, "seed": c.seed, "n": n,
				"targets": targets[:c.targets], "phase": string(c.phase), "open": append([]int64{}, c.open...),
				"nowMs": fixedNow.UnixMilli(), "runTag": "tag", "payloadBytes": 300,
			})
			cmd := exec.Command(node, filepath.Join("testdata", "first_driver_sequence.js"), string(settings))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			outText, err := cmd.Output()
			if err != nil {
				t.Fatalf("node testdata/first_driver_sequence.js: %v\n%s", err, stderr.String())
			}
			var want []firstDriverRequest
			if err := json.Unmarshal(outText, &want); err != nil || len(want) != n {
				t.Fatalf("node printed %d requests (%v)", len(want), err)
			}
			for i, w := range want {
				req, _ := b.Build(c.phase, uint64(i))
				got := firstDriverRequest{Type: req.Kind.String(), Method: req.Method, URL: targets[req.Target] + req.Path}
				if req.Body != nil {
					body := string(req.Body)
					got.Body = &body
				}
				if got.Type != w.Type || got.Method != w.Method || got.URL != w.URL || (got.Body == nil) != (w.Body == nil) ||
					got.Body != nil && *got.Body != *w.Body {
					t.Fatalf("request %d: Go builds %s %s %s %v, the first driver %s %s %s %v",
						i, got.Type, got.Method, got.URL, deref(got.Body), w.Type, w.Method, w.URL, deref(w.Body))
				}
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<no body>"
	}
	return *s
}
