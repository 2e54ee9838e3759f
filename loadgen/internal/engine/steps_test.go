package engine

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

func TestLadderStepsAreWindowsOfTheirOwn(t *testing.T) {
	tg := newTarget(t, nil)
	s := settings(t, map[string]string{
		"BB_TARGETS": tg.URL, "BB_STEPS": "50,100,200", "BB_STEP_DURATION": "1s", "BB_WARMUP": "0s",
	})
	summary := run(t, s, 20*time.Second)
	steps, ok := summary.Steps.([]StepSummary)
	if !ok || len(steps) != 3 {
		t.Fatalf("steps = %#v, want 3 step summaries", summary.Steps)
	}
	previous := int64(0)
	for k, want := range []int64{50, 100, 200} {
		if steps[k].Requests != want || steps[k].OK != want {
			t.Errorf("step %d at %g req/s: %d requests (%d ok), want %d", k, steps[k].Rate, steps[k].Requests, steps[k].OK, want)
		}
		// The target answers at once, so most answers arrive in their own step's window; a busy machine can
		// delay the answers to a step's last sends past its end, into the next window, and an answer at a
		// boundary can fall on either side of it.
		t.Logf("step %d: %d responses arrived in its window, %d sent", k, steps[k].Finished, want)
		if steps[k].Finished < want*8/10 || steps[k].Finished > want+previous+2 {
			t.Errorf("step %d: %d responses arrived in its window; want most of its %d and at most %d more",
				k, steps[k].Finished, want, previous+2)
		}
		previous = want
		if got := steps[k].EndUnix - steps[k].StartUnix; got < 0.999 || got > 1.001 {
			t.Errorf("step %d spans %g s, want 1", k, got)
		}
	}
	if summary.Requests != 350 || summary.Ladder["stopped"] != "all steps done" {
		t.Errorf("overall %d requests, stopped %v; want 350, all steps done", summary.Requests, summary.Ladder["stopped"])
	}
}

func TestLadderStopsAfterTwoOverloadedSteps(t *testing.T) {
	// The target slows down to 2 s a request from its 150th request on (step 2): steps 2 and 3 of six pass
	// the 1 s threshold, so the ladder stops during step 4 (the stop rule waits a second for a step's last
	// answers) and never sends step 5. A busy machine can stall a fast answer for a few hundred ms, which a
	// 150 ms threshold read as an overloaded step 1.
	tg, served := slowFrom(t, 150, 2*time.Second)
	s := settings(t, map[string]string{
		"BB_TARGETS": tg.URL, "BB_STEPS": "50,100,100,100,100,100", "BB_STEP_DURATION": "1s", "BB_WARMUP": "0s",
		"BB_STOP_P99_MS": "1000",
	})
	summary := run(t, s, 30*time.Second)
	steps := summary.Steps.([]StepSummary)
	if summary.Ladder["stopped"] != "overloaded" || len(steps) != 4 {
		t.Fatalf("stopped %v after %d steps, want overloaded after 4", summary.Ladder["stopped"], len(steps))
	}
	want := []bool{false, false, true, true}
	for k, step := range steps {
		if step.Overloaded != want[k] {
			t.Errorf("step %d overloaded=%v, want %v (p99 %v ms)", k, step.Overloaded, want[k], step.LatencyMS)
		}
	}
	if n := served.Load(); n > 550 {
		t.Errorf("the target served %d requests: the ladder went on after its stop", n)
	}
}

func TestAStoppedLadderSendsNothingThatWaitedForAConnection(t *testing.T) {
	// Two connections and a target that answers in 400 ms from its 100th request on: from step 1 the
	// requests queue for a connection, steps 1 and 2 are overloaded, and the ladder stops. The requests
	// still queued then are dropped, not sent late one connection at a time.
	tg, served := slowFrom(t, 100, 400*time.Millisecond)
	s := settings(t, map[string]string{
		"BB_TARGETS": tg.URL, "BB_STEPS": "100,100,100,100", "BB_STEP_DURATION": "1s", "BB_WARMUP": "0s",
		"BB_STOP_P99_MS": "150", "BB_MAX_CONNS": "2",
	})
	summary := run(t, s, 30*time.Second)
	if summary.Ladder["stopped"] != "overloaded" {
		t.Fatalf("stopped %v, want overloaded; steps %+v", summary.Ladder["stopped"], summary.Steps)
	}
	// Before the stop (3 s in) the two connections carry about 100 + 2 x 2 s / 0.4 s = 110 requests; the
	// 190 or so still queued would each have taken a connection for 400 ms more.
	if n := served.Load(); n > 130 {
		t.Errorf("the target served %d requests: queued requests were sent after the stop", n)
	}
	if summary.Requests > 130 {
		t.Errorf("%d requests sent, want the queued ones dropped at the stop", summary.Requests)
	}
}

// slowFrom is a target that answers at once until its nth request, then takes delay over each; served
// counts the requests it answered.
func slowFrom(t *testing.T, n int, delay time.Duration) (*target, *atomic.Int64) {
	t.Helper()
	served := new(atomic.Int64)
	tg := newTarget(t, func(i int, w http.ResponseWriter, r *http.Request) {
		if i >= n {
			time.Sleep(delay)
		}
		served.Add(1)
	})
	return tg, served
}
