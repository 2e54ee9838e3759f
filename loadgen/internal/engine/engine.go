// Package engine runs the load: the open model's schedule or the closed model's users, the warm-up
// then the measurement window, the live progress lines and the per-request trace.
package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"bidbench/loadgen/internal/client"
	"bidbench/loadgen/internal/config"
	"bidbench/loadgen/internal/mix"
	"bidbench/loadgen/internal/pace"
	"bidbench/loadgen/internal/tally"
)

// Version is the driver's version, written into every summary.
const Version = "0.1.0"

// earlySlack lets the scheduler send a request up to this long before it is due. Go's timers wake
// at millisecond granularity when the process is idle, so aiming a little early keeps sends from
// being late; an early request's latency is counted from its actual send, so nothing is hidden.
const earlySlack = time.Millisecond

// Engine is one driver run.
type Engine struct {
	s        *config.Settings
	builder  *mix.Builder
	pools    []*client.Pool
	openIDs  []int64
	start    time.Time
	measure  time.Time // start of the measurement window
	inflight atomic.Int64
	maxIn    atomic.Int64
	sent     atomic.Int64
	wg       sync.WaitGroup

	mu        sync.Mutex
	tally     *tally.Tally
	done      int64
	live      *hdrhistogram.Histogram
	livePhase mix.Phase
	lateWarm  int64
	frozen    bool

	trace   *bufio.Writer
	traceMu sync.Mutex

	ladder     *ladder
	progressMu sync.Mutex
	progressTo io.Writer
}

// New prepares a run: the request builder and one connection pool per target.
func New(s *config.Settings) (*Engine, error) {
	runTag := strconv.FormatInt(time.Now().UnixMilli()%60466176, 36)
	b, err := mix.NewBuilder(s.Mix, s.InvalidShare, s.Scale, s.Seed, len(s.Targets), s.PayloadBytes, runTag)
	if err != nil {
		return nil, &config.Error{Name: "BB_PAYLOAD_BYTES", Value: strconv.Itoa(s.PayloadBytes), Want: err.Error()}
	}
	e := &Engine{s: s, builder: b, live: tally.NewHist(), livePhase: mix.Warm}
	for _, t := range s.Targets {
		p, err := client.NewPool(t, s.IdleTimeout)
		if err != nil {
			return nil, &config.Error{Name: "BB_TARGETS", Value: t, Want: err.Error()}
		}
		e.pools = append(e.pools, p)
	}
	names := make([]string, len(b.Types))
	for i, k := range b.Types {
		names[i] = k.String()
	}
	e.tally = tally.New(names)
	if len(s.Steps) > 0 {
		e.ladder = newLadder(s.Steps, s.StepDuration, names)
	}
	return e, nil
}

// Setup probes the first target and, for mixes with bids, fetches the open items.
func (e *Engine) Setup() error {
	path := "/categories"
	if e.s.Mix == "bare" {
		// The bare mix measures the driver against any server, seeded or not: /health is all it needs.
		path = "/health"
	}
	if err := probe(e.pools[0], e.s.Targets[0], path, e.s.Timeout, e.s.Plan == 0); err != nil {
		return err
	}
	if e.builder.UsesOpenItem {
		e.openIDs = openItems(e.pools[0], e.s.SetupPages, e.s.Timeout)
		e.builder.SetOpenItems(e.openIDs)
	}
	return nil
}

// Plan returns the first n requests of the measurement, without sending them.
func (e *Engine) Plan(n int) []map[string]any {
	plan := make([]map[string]any, 0, n)
	for i := range n {
		req, _ := e.builder.Build(mix.Measure, uint64(i))
		var body any
		if req.Body != nil {
			body = string(req.Body)
		}
		plan = append(plan, map[string]any{
			"i": i, "type": req.Kind.String(), "method": req.Method,
			"url": e.s.Targets[req.Target] + req.Path, "body": body,
		})
	}
	return plan
}

// Run sends the load until the schedule ends or ctx is cancelled, and returns the summary; partial
// is true when ctx was cancelled first.
func (e *Engine) Run(ctx context.Context) *tally.Summary {
	if e.s.TracePath != "" {
		e.openTrace()
	}
	e.start = time.Now()
	if !e.s.StartAt.IsZero() && sleepUntil(ctx, e.s.StartAt) {
		e.start = e.s.StartAt
	}
	e.measure = e.start.Add(e.s.Warmup)
	stopProgress := e.startProgress()
	load, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	stopWatching := func(bool) {}
	if e.ladder != nil {
		stopWatching = e.watchSteps(stopLoad, e.writeProgress)
	}
	var schedule *pace.Schedule
	if e.s.Model == "open" {
		schedule = e.schedule()
		e.runOpen(load, schedule)
	} else {
		e.runClosed(load)
	}
	partial := ctx.Err() != nil
	drain := e.s.Timeout + 2*time.Second
	if partial {
		drain = 2 * time.Second
	}
	e.waitInflight(drain)
	stopWatching(partial)
	e.mu.Lock()
	e.frozen = true
	e.mu.Unlock()
	stopProgress()
	e.closeTrace()
	for _, p := range e.pools {
		p.Close()
	}
	return e.summarize(schedule, partial)
}

func (e *Engine) waitInflight(limit time.Duration) {
	finished := make(chan struct{})
	go func() {
		e.wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(limit):
	}
}

// schedule is the open model's profile: the warm-up (a ramp to the rate, then held), then the
// measurement (the rate held, or the stages).
func (e *Engine) schedule() *pace.Schedule {
	s := e.s
	var segs []pace.Segment
	if s.Warmup > 0 {
		if s.WarmupRamp > 0 {
			ramp := min(max(time.Duration(math.Round(s.Warmup.Seconds()*s.WarmupRamp))*time.Second, time.Second), s.Warmup)
			segs = append(segs, pace.Segment{Length: ramp, From: s.WarmupFrom, To: s.Rate})
			segs = append(segs, pace.Segment{Length: s.Warmup - ramp, From: s.Rate, To: s.Rate})
		} else {
			segs = append(segs, pace.Segment{Length: s.Warmup, From: s.Rate, To: s.Rate})
		}
	}
	switch {
	case len(s.Steps) > 0:
		for _, rate := range s.Steps {
			segs = append(segs, pace.Segment{Length: s.StepDuration, From: rate, To: rate})
		}
	case len(s.Stages) == 0:
		segs = append(segs, pace.Segment{Length: s.Duration, From: s.Rate, To: s.Rate})
	default:
		from := s.Rate
		for _, st := range s.Stages {
			segs = append(segs, pace.Segment{Length: st.Duration, From: from, To: st.Target})
			from = st.Target
		}
	}
	// Warm-up segments shorter than a whole profile still end exactly at the window's start.
	return pace.New(segs...).Shifted(e.s.Phase)
}

// sleepUntil waits for the wall-clock time at, or until ctx ends (false).
func sleepUntil(ctx context.Context, at time.Time) bool {
	timer := time.NewTimer(time.Until(at))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func (e *Engine) runOpen(ctx context.Context, schedule *pace.Schedule) {
	sem := make(chan struct{}, e.s.MaxConns)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var phaseIndex [2]uint64
	for n := uint64(0); ; n++ {
		due, ok := schedule.Due(n)
		if !ok || ctx.Err() != nil {
			return
		}
		intended := e.start.Add(due)
		if wait := time.Until(intended) - earlySlack; wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		phase, slot := mix.Measure, 1
		if due < e.s.Warmup {
			phase, slot = mix.Warm, 0
		}
		i := phaseIndex[slot]
		phaseIndex[slot]++
		e.wg.Add(1)
		go e.openRequest(ctx, sem, phase, i, intended)
	}
}

// openRequest sends request i once a connection is free. A request still waiting for one when the load
// ends (a ladder's stop rule, an interrupt) is never sent: sending it would only prolong an overload
// already judged, and the drain after a stopped ladder took seconds of late sends.
func (e *Engine) openRequest(ctx context.Context, sem chan struct{}, phase mix.Phase, i uint64, intended time.Time) {
	defer e.wg.Done()
	step := e.owe(phase, intended)
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-sem }()
	sent := time.Now()
	late := sent.Sub(intended) > e.s.LateBound
	// An early send is timed from when it left, a late one from when it was due.
	from := intended
	if sent.Before(intended) {
		from = sent
	}
	e.send(phase, i, step, from, sent, late)
}

func (e *Engine) runClosed(ctx context.Context) {
	end := e.measure.Add(e.s.Duration)
	var counters [2]atomic.Uint64
	for range e.s.Users {
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			timer := time.NewTimer(time.Hour)
			defer timer.Stop()
			for ctx.Err() == nil {
				now := time.Now()
				if !now.Before(end) {
					return
				}
				phase, slot := mix.Measure, 1
				if now.Before(e.measure) {
					phase, slot = mix.Warm, 0
				}
				i := counters[slot].Add(1) - 1
				e.send(phase, i, e.owe(phase, now), now, now, false)
				if think := e.thinkTime(phase, i); think > 0 {
					timer.Reset(think)
					select {
					case <-ctx.Done():
						return
					case <-timer.C:
					}
				}
			}
		}()
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(end)):
	}
}

// thinkTime is the closed model's pause after request i: constant, or negative-exponential with
// the configured mean, drawn from the request's hash so it is reproducible.
func (e *Engine) thinkTime(phase mix.Phase, i uint64) time.Duration {
	if e.s.ThinkMS <= 0 {
		return 0
	}
	mean := e.s.ThinkMS * float64(time.Millisecond)
	if e.s.ThinkDist == "const" {
		return time.Duration(mean)
	}
	u := (float64(mix.Mix32(uint32(i)^e.builder.Salt(phase)+0x632be5ab)) + 0.5) / 4294967296
	return time.Duration(-math.Log(u) * mean)
}

var bidID = regexp.MustCompile(`^\{"id":(\d+)`)

// owe counts a measured request against its ladder step (by when it is due) as soon as it is due, not
// when it is sent: one still waiting for a connection when the stop rule looks is unanswered, and an
// overloaded step whose requests all queued read as empty and passed. It returns the step, -1 for none.
func (e *Engine) owe(phase mix.Phase, due time.Time) int {
	if phase != mix.Measure || e.ladder == nil {
		return -1
	}
	step := e.ladder.step(e.measure, due)
	if step >= 0 {
		e.mu.Lock()
		e.ladder.pending[step]++
		e.mu.Unlock()
	}
	return step
}

// step is the request's ladder step (from owe); from is when its latency runs.
func (e *Engine) send(phase mix.Phase, i uint64, step int, from, sent time.Time, late bool) {
	req, typ := e.builder.Build(phase, i)
	now := e.inflight.Add(1)
	for {
		peak := e.maxIn.Load()
		if now <= peak || e.maxIn.CompareAndSwap(peak, now) {
			break
		}
	}
	e.sent.Add(1)
	wantBody := e.trace != nil && req.Kind == mix.PlaceBid
	res := e.pools[req.Target].Do(req.Method, req.Path, req.ContentType, req.Body, "", sent.Add(e.s.Timeout), wantBody)
	end := time.Now()
	e.inflight.Add(-1)
	db, app := int64(-1), int64(-1)
	if e.s.Mix != "bare" {
		db, app = serverTiming(res.ServerTiming)
	}
	outcome := tally.Outcome{
		Type: typ, Status: res.Status, ErrorClass: string(res.Err), Intended: end.Sub(from), Sent: end.Sub(sent),
		DBMicros: db, AppMicros: app,
	}
	e.mu.Lock()
	if !e.frozen {
		e.done++
		if phase == mix.Warm {
			e.tally.RecordWarm(res.Status, outcome.Intended)
			if late {
				e.lateWarm++
			}
		} else {
			e.tally.RecordMeasure(outcome)
			if late {
				e.tally.LateSends++
			}
			if step >= 0 {
				e.ladder.pending[step]--
				e.ladder.tallies[step].RecordMeasure(outcome)
				if late {
					e.ladder.tallies[step].LateSends++
				}
			}
		}
		if e.ladder != nil {
			if k := e.ladder.step(e.measure, end); k >= 0 && res.Err == client.OK {
				e.ladder.finished[k]++
			}
		}
		if phase != e.livePhase {
			e.live.Reset()
			e.livePhase = phase
		}
		_ = e.live.RecordValue(max(outcome.Intended.Microseconds(), 1))
	}
	e.mu.Unlock()
	if e.trace != nil {
		bid := "-"
		if res.Status == 201 && req.Kind == mix.PlaceBid {
			if m := bidID.FindSubmatch(res.Body); m != nil {
				bid = string(m[1])
			}
		}
		class := string(res.Err)
		if class == "" {
			class = "-"
		}
		e.traceMu.Lock()
		fmt.Fprintf(e.trace, "bbt %c %d %.3f %d %s %s %d %s\n", phase, end.UnixMilli(),
			float64(outcome.Intended.Microseconds())/1000, res.Status, class, req.Kind, req.Target, bid)
		e.traceMu.Unlock()
	}
}

// serverTiming reads the contract's "db;dur=X, app;dur=Y" (µs each; -1 when absent).
func serverTiming(h string) (int64, int64) {
	return timingOf(h, "db;dur="), timingOf(h, "app;dur=")
}

func timingOf(h, key string) int64 {
	at := strings.Index(h, key)
	if at < 0 {
		return -1
	}
	rest := h[at+len(key):]
	end := strings.IndexAny(rest, ",; ")
	if end >= 0 {
		rest = rest[:end]
	}
	v, err := strconv.ParseFloat(rest, 64)
	if err != nil || v < 0 {
		return -1
	}
	return int64(math.Round(v * 1000))
}

func (e *Engine) openTrace() {
	var w io.Writer = os.Stderr
	if e.s.TracePath != "1" {
		f, err := os.Create(e.s.TracePath)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bidbench-load: BB_TRACE=%s: %v; tracing to stderr\n", e.s.TracePath, err)
		} else {
			w = f
		}
	}
	e.trace = bufio.NewWriterSize(w, 1<<16)
}

func (e *Engine) closeTrace() {
	if e.trace == nil {
		return
	}
	e.traceMu.Lock()
	defer e.traceMu.Unlock()
	e.trace.Flush()
}

// startProgress writes one JSON line per second to BB_PROGRESS (a file or a pipe the harness reads).
func (e *Engine) startProgress() func() {
	if e.s.ProgressPath == "" {
		return func() {}
	}
	f, err := os.OpenFile(e.s.ProgressPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bidbench-load: BB_PROGRESS=%s: %v; no progress lines\n", e.s.ProgressPath, err)
		return func() {}
	}
	e.progressMu.Lock()
	e.progressTo = f
	e.progressMu.Unlock()
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer func() {
			e.progressMu.Lock()
			e.progressTo = nil
			e.progressMu.Unlock()
			f.Close()
		}()
		ticker := time.NewTicker(time.Second)
		defer ticker.Stop()
		lastDone, lastT := int64(0), time.Now()
		write := func(final bool) {
			now := time.Now()
			e.mu.Lock()
			done, sys, late := e.done, int64(0), e.tally.LateSends
			for _, t := range e.tally.PerType {
				sys += t.SysErrors
			}
			var p99 any
			if e.live.TotalCount() > 0 {
				p99 = float64(e.live.ValueAtQuantile(99)) / 1000
			}
			e.mu.Unlock()
			phase := "warm"
			switch {
			case final:
				phase = "done"
			case !now.Before(e.measure.Add(e.s.Duration)):
				phase = "drain"
			case !now.Before(e.measure):
				phase = "measure"
			}
			rate := 0.0
			if dt := now.Sub(lastT).Seconds(); dt > 0 {
				rate = float64(done-lastDone) / dt
			}
			lastDone, lastT = done, now
			line, _ := json.Marshal(map[string]any{
				"t": math.Round(now.Sub(e.start).Seconds()*1000) / 1000, "phase": phase,
				"started_at_unix": unix(e.start), "measure_start_unix": unix(e.measure),
				"sent": e.sent.Load(), "completed": done, "rate": math.Round(rate*10) / 10, "sys_errors": sys,
				"late_sends": late, "inflight": e.inflight.Load(), "p99_ms": p99,
			})
			e.progressMu.Lock()
			f.Write(append(line, '\n'))
			e.progressMu.Unlock()
		}
		write(false)
		for {
			select {
			case <-stop:
				write(true)
				return
			case <-ticker.C:
				write(false)
			}
		}
	}()
	return func() {
		close(stop)
		<-finished
	}
}

// writeProgress adds one line of its own to the progress file (a ladder step's verdict).
func (e *Engine) writeProgress(fields map[string]any) {
	line, err := json.Marshal(fields)
	if err != nil {
		return
	}
	e.progressMu.Lock()
	defer e.progressMu.Unlock()
	if e.progressTo != nil {
		e.progressTo.Write(append(line, '\n'))
	}
}

func unix(t time.Time) float64 { return float64(t.UnixMicro()) / 1e6 }

func (e *Engine) summarize(schedule *pace.Schedule, partial bool) *tally.Summary {
	s := e.s
	window := s.Duration.Seconds()
	elapsed := time.Since(e.start)
	if partial {
		window = math.Max(0, math.Min(window, (elapsed-s.Warmup).Seconds()))
	}
	expected := map[string]int{}
	invalid := map[string]bool{}
	for _, k := range e.builder.Types {
		if st, ok := mix.ExpectedStatus[k]; ok {
			expected[k.String()] = st
			invalid[k.String()] = true
		}
	}
	var offered *float64
	if s.Model == "open" && s.Duration > 0 {
		arrivals := schedule.Arrivals(s.Warmup+s.Duration) - schedule.Arrivals(s.Warmup)
		rate := math.Round(arrivals/s.Duration.Seconds()*1000) / 1000
		offered = &rate
	}
	source := "unused"
	if e.builder.UsesOpenItem {
		source = "range"
		if len(e.openIDs) > 0 {
			source = "setup"
		}
	}
	e.tally.MaxInflight = e.maxIn.Load()
	summary := tally.Summarize(e.tally, tally.Meta{
		DriverVersion: Version, Settings: e.settingsRecord(), Partial: partial, Shards: 1,
		OpenItems:     map[string]any{"count": len(e.openIDs), "source": source},
		StartedAtUnix: unix(e.start), MeasureStartUnix: unix(e.measure), WindowS: window,
		WarmupS: s.Warmup.Seconds(), OfferedRPS: offered, ExpectedStatus: expected, InvalidTypes: invalid,
		TestRunDurationS: elapsed.Seconds(),
	})
	if e.ladder != nil {
		steps, info := e.stepSummaries()
		summary.Steps, summary.Ladder = steps, info
	}
	return summary
}

// settingsRecord is the settings as the summary records them (null where the model does not use one).
func (e *Engine) settingsRecord() map[string]any {
	s := e.s
	open, closed := s.Model == "open", s.Model == "closed"
	weights := map[string]int{}
	for _, w := range mix.Mixes[s.Mix] {
		weights[w.Kind.String()] = w.Weight
	}
	orNil := func(use bool, v any) any {
		if use {
			return v
		}
		return nil
	}
	var invalidMix any
	if s.InvalidShare > 0 {
		m := map[string]int{}
		for _, w := range mix.InvalidMix {
			m[w.Kind.String()] = w.Weight
		}
		invalidMix = m
	}
	var stages any
	if len(s.Stages) > 0 {
		var legs []map[string]any
		for _, st := range s.Stages {
			legs = append(legs, map[string]any{"duration_s": st.Duration.Seconds(), "target": st.Target})
		}
		stages = legs
	}
	payload := s.Mix == "payload"
	return map[string]any{
		"targets": s.Targets, "mix": s.Mix, "mix_weights": weights, "model": s.Model,
		"rate": orNil(open, s.Rate), "users": orNil(closed, s.Users),
		"think_ms": orNil(closed, s.ThinkMS), "think_dist": orNil(closed, s.ThinkDist),
		"warmup_s": s.Warmup.Seconds(), "duration_s": s.Duration.Seconds(),
		"warmup_ramp":   orNil(open && s.Warmup > 0, s.WarmupRamp),
		"warmup_from":   orNil(open && s.Warmup > 0 && s.WarmupRamp > 0, s.WarmupFrom),
		"invalid_share": s.InvalidShare, "invalid_mix": invalidMix, "scale": s.Scale, "seed": s.Seed,
		"timeout_s": s.Timeout.Seconds(), "payload_bytes": orNil(payload, s.PayloadBytes),
		"payload_over_limit": orNil(payload, s.PayloadBytes > mix.BodyLimit),
		"late_bound_ms":      float64(s.LateBound.Microseconds()) / 1000, "max_conns": s.MaxConns,
		"idle_timeout_s": s.IdleTimeout.Seconds(),
		"setup_pages":    s.SetupPages, "stages": stages, "trace": s.TracePath != "",
		"shards": s.Shards, "shard_index": s.ShardIndex, "warmup_late_sends": e.lateWarm,
		"phase": orNil(open, s.Phase), "start_at_unix": orNil(!s.StartAt.IsZero(), unix(s.StartAt)),
	}
}
