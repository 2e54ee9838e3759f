package engine

import (
	"encoding/json"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"bidbench/loadgen/internal/tally"
)

// stepGrace is how long after a step's schedule ends the stop rule waits for its last responses; a
// request still unanswered then counts as slower than the threshold.
const stepGrace = time.Second

// ladder keeps one tally per step of a ladder (BB_STEPS): each step is a measurement window of its own.
type ladder struct {
	rates   []float64
	length  time.Duration
	tallies []*tally.Tally
	pending []int64
	// finished counts the responses that arrived within each step's window, whenever they were due: the
	// rate the target completed at, which past saturation is below the rate of requests due.
	finished []int64
	live     []bool // the stop rule's verdict: overloaded when it looked
	done     int    // steps the stop rule has looked at
	stopped  string
}

func newLadder(rates []float64, length time.Duration, types []string) *ladder {
	l := &ladder{
		rates: rates, length: length, pending: make([]int64, len(rates)), finished: make([]int64, len(rates)),
		live: make([]bool, len(rates)),
	}
	for range rates {
		l.tallies = append(l.tallies, tally.New(types))
	}
	return l
}

// step is the ladder step a request belongs to, by its due (or send) time; -1 outside the steps.
func (l *ladder) step(measure, at time.Time) int {
	if l == nil || at.Before(measure) {
		return -1
	}
	k := int(at.Sub(measure) / l.length)
	if k >= len(l.rates) {
		return -1
	}
	return k
}

// watchSteps applies the stop rule as each step ends: after StopAfter consecutive steps whose p99
// passed StopP99 (or with more than 1 % of their requests unanswered), the ladder stops. Each step's
// live verdict also goes to the progress file, so the harness can show it.
func (e *Engine) watchSteps(stop func(), progress func(map[string]any)) (wait func(interrupted bool)) {
	l := e.ladder
	quit := make(chan struct{})
	var cut atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		consecutive := 0
		for k := range l.rates {
			end := e.measure.Add(time.Duration(k+1) * l.length)
			timer.Reset(time.Until(end.Add(stepGrace)))
			select {
			case <-quit:
				// The load is over and every answer is in. After an interrupt only the steps that ran
				// to their end are judged; otherwise the last step's window closes first.
				if wait := time.Until(end); wait > 0 {
					if cut.Load() {
						return
					}
					time.Sleep(wait)
				}
			case <-timer.C:
			}
			e.mu.Lock()
			t := l.tallies[k]
			h := t.Overall(func(tt *tally.Type) *hdrhistogram.Histogram { return tt.Latency })
			answered := h.TotalCount()
			unanswered := l.pending[k]
			p99 := time.Duration(h.ValueAtQuantile(99)) * time.Microsecond
			overloaded := e.s.StopP99 > 0 &&
				(p99 > e.s.StopP99 || float64(unanswered) > 0.01*float64(answered+unanswered))
			l.live[k] = overloaded
			l.done = k + 1
			if overloaded {
				consecutive++
			} else {
				consecutive = 0
			}
			stopNow := consecutive >= e.s.StopAfter && k+1 < len(l.rates)
			if stopNow {
				l.stopped = "overloaded"
			}
			e.mu.Unlock()
			progress(map[string]any{
				"step": k, "rate": l.rates[k], "answered": answered, "unanswered": unanswered,
				"p99_ms": math.Round(float64(p99.Microseconds())) / 1000, "overloaded": overloaded,
			})
			if stopNow {
				stop()
				return
			}
		}
	}()
	return func(interrupted bool) {
		cut.Store(interrupted)
		close(quit)
		wg.Wait()
	}
}

// StepSummary is one ladder step: the window's figures without per-type detail or histograms.
type StepSummary struct {
	Index      int     `json:"index"`
	Rate       float64 `json:"rate"`
	StartUnix  float64 `json:"start_unix"`
	EndUnix    float64 `json:"end_unix"`
	Overloaded bool    `json:"overloaded_live"`
	Finished   int64   `json:"finished_in_window"`
	*tally.Summary
}

// MarshalJSON flattens the step's summary beside its index, rate and window.
func (s StepSummary) MarshalJSON() ([]byte, error) {
	inner, err := json.Marshal(s.Summary)
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := json.Unmarshal(inner, &fields); err != nil {
		return nil, err
	}
	for _, drop := range []string{"settings", "open_items", "per_type", "warmup", "plan", "partial", "shards",
		"started_at_unix", "measure_start_unix", "test_run_duration_s"} {
		delete(fields, drop)
	}
	fields["index"], fields["rate"], fields["start_unix"], fields["end_unix"] = s.Index, s.Rate, s.StartUnix, s.EndUnix
	fields["overloaded_live"] = s.Overloaded
	fields["finished_in_window"] = s.Finished
	return json.Marshal(fields)
}

// stepSummaries are the steps the ladder finished (a step cut short by the stop is left out).
func (e *Engine) stepSummaries() ([]StepSummary, map[string]any) {
	l := e.ladder
	var out []StepSummary
	for k := 0; k < l.done; k++ {
		start := e.measure.Add(time.Duration(k) * l.length)
		rate := l.rates[k]
		s := tally.Summarize(l.tallies[k], tally.Meta{WindowS: l.length.Seconds(), OfferedRPS: &rate})
		out = append(out, StepSummary{
			Index: k, Rate: rate, StartUnix: unix(start), EndUnix: unix(start.Add(l.length)),
			Overloaded: l.live[k], Finished: l.finished[k], Summary: s,
		})
	}
	stopped := l.stopped
	if stopped == "" {
		stopped = "all steps done"
		if l.done < len(l.rates) {
			stopped = "interrupted"
		}
	}
	return out, map[string]any{
		"rates": l.rates, "step_s": l.length.Seconds(), "completed_steps": l.done, "stopped": stopped,
		"stop_p99_ms": float64(e.s.StopP99.Microseconds()) / 1000, "stop_after": e.s.StopAfter,
	}
}
