// Package config reads and checks the driver's settings: the BB_* environment variables that the
// harness, the Compose file and the Kubernetes Job pass (loadgen/README.md lists them).
package config

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Stage is one leg of an arrival-rate profile: the rate ramps linearly to Target over Duration.
type Stage struct {
	Duration time.Duration
	Target   float64
}

// Settings is everything one driver process needs to know.
type Settings struct {
	Targets      []string
	Mix          string
	Model        string // open or closed
	Rate         float64
	Users        int
	ThinkMS      float64
	ThinkDist    string // const or exp
	Warmup       time.Duration
	WarmupRamp   float64
	WarmupFrom   float64
	Duration     time.Duration
	Stages       []Stage
	InvalidShare float64
	PayloadBytes int
	Scale        int
	Seed         int
	Timeout      time.Duration
	SummaryPath  string
	ProgressPath string
	TracePath    string
	SetupPages   int
	Plan         int
	Shards       int
	ShardIndex   int
	LateBound    time.Duration
	MaxConns     int
	// A connection idle this long is closed (0: never). The default, 5 s, is under the keep-alive
	// timeouts of every app here (30 s for Jetty and node, 65 s for nginx), so no server expires a
	// batch of the driver's connections in the middle of a measurement.
	IdleTimeout time.Duration
	Procs       int
	// A ladder: the measurement is these rates, each held for StepDuration; it stops after StopAfter
	// consecutive steps whose p99 (from the intended send) passed StopP99 (0: never stops early).
	Steps        []float64
	StepDuration time.Duration
	StopP99      time.Duration
	StopAfter    int
	// Open model: the wall-clock time the schedule starts (zero: when the driver is ready), so that
	// drivers started apart share one clock; and how far into each arrival interval the requests fall,
	// as a share of the interval. Drivers given one StartAt and phases 0, 1/n, ... interleave their
	// requests evenly at every rate, instead of at whatever offset their start times happened to leave.
	StartAt time.Time
	Phase   float64
}

// Error is a setting that cannot be used; the driver exits with ExitBadSetting.
type Error struct {
	Name, Value, Want string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s=%q: %s", e.Name, e.Value, e.Want)
}

// Mixes lists the request mixes the driver knows (their weights are in package mix).
var Mixes = []string{"browse", "bid", "mixed", "payload", "bare"}

// Lookup returns an environment variable's value and whether it is set.
type Lookup func(name string) (string, bool)

type reader struct {
	get Lookup
	err error
}

func (r *reader) str(name, dflt string) string {
	if v, ok := r.get(name); ok && v != "" {
		return v
	}
	return dflt
}

func (r *reader) fail(name, value, want string) {
	if r.err == nil {
		r.err = &Error{name, value, want}
	}
}

func (r *reader) number(name string, dflt, lo, hi float64) float64 {
	raw := r.str(name, "")
	if raw == "" {
		return dflt
	}
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi {
		r.fail(name, raw, fmt.Sprintf("expected a number in %g..%g", lo, hi))
		return dflt
	}
	return v
}

func (r *reader) integer(name string, dflt, lo, hi int) int {
	raw := r.str(name, "")
	if raw == "" {
		return dflt
	}
	v, err := strconv.Atoi(raw)
	if err != nil || v < lo || v > hi {
		r.fail(name, raw, fmt.Sprintf("expected an integer in %d..%d", lo, hi))
		return dflt
	}
	return v
}

// ParseDuration takes Go durations ("500ms", "10s", "1m30s") and plain seconds ("2.5").
func ParseDuration(text string) (time.Duration, error) {
	if secs, err := strconv.ParseFloat(text, 64); err == nil {
		if secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) {
			return 0, fmt.Errorf("negative or not finite")
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(text)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("not a duration like 10s or 1m30s")
	}
	return d, nil
}

func (r *reader) duration(name, dflt string) time.Duration {
	raw := r.str(name, dflt)
	d, err := ParseDuration(raw)
	if err != nil {
		r.fail(name, raw, "expected a duration like 10s, 1m30s or 500ms")
	}
	return d
}

// ParseStages reads "10s:100,1s:400,60s:400": each leg ramps linearly to its rate over its duration.
func ParseStages(text string) ([]Stage, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var stages []Stage
	for _, part := range strings.Split(text, ",") {
		dur, rate, ok := strings.Cut(strings.TrimSpace(part), ":")
		d, errD := ParseDuration(dur)
		target, errR := strconv.ParseFloat(rate, 64)
		if !ok || errD != nil || errR != nil || target < 0 || math.IsInf(target, 0) || math.IsNaN(target) {
			return nil, fmt.Errorf("%q is not DURATION:RATE", part)
		}
		stages = append(stages, Stage{d, target})
	}
	return stages, nil
}

// ParseRates reads a ladder's rates, "100,150,225": each above 0 req/s.
func ParseRates(text string) ([]float64, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var rates []float64
	for _, part := range strings.Split(text, ",") {
		rate, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || !(rate > 0) || math.IsInf(rate, 0) {
			return nil, fmt.Errorf("%q is not a rate above 0 req/s", part)
		}
		rates = append(rates, rate)
	}
	return rates, nil
}

func checkTarget(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("not an http://host:port base URL")
	}
	if u.Port() == "" {
		u.Host += ":80"
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// FromEnv reads and checks every setting. The first bad one is returned as an *Error.
func FromEnv(get Lookup) (*Settings, error) {
	r := &reader{get: get}
	s := &Settings{}
	for _, t := range strings.Split(r.str("BB_TARGETS", "http://127.0.0.1:8080"), ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		base, err := checkTarget(t)
		if err != nil {
			r.fail("BB_TARGETS", t, err.Error())
		}
		s.Targets = append(s.Targets, base)
	}
	if len(s.Targets) == 0 {
		r.fail("BB_TARGETS", "", "at least one base URL is needed")
	}
	s.Mix = r.str("BB_MIX", "browse")
	known := false
	for _, m := range Mixes {
		known = known || m == s.Mix
	}
	if !known {
		r.fail("BB_MIX", s.Mix, "expected one of "+strings.Join(Mixes, ", "))
	}
	s.Model = r.str("BB_MODEL", "open")
	if s.Model != "open" && s.Model != "closed" {
		r.fail("BB_MODEL", s.Model, "expected open or closed")
	}
	if raw := r.str("BB_RATE", ""); raw != "" {
		if v, err := strconv.ParseFloat(raw, 64); err == nil && v <= 0 {
			r.fail("BB_RATE", raw, "the arrival rate must be above 0 req/s")
		}
	}
	s.Rate = r.number("BB_RATE", 100, 1e-9, 1e7)
	s.Users = r.integer("BB_USERS", 10, 1, 1_000_000)
	s.ThinkMS = r.number("BB_THINK_MS", 0, 0, 3.6e6)
	s.ThinkDist = r.str("BB_THINK_DIST", "const")
	if s.ThinkDist != "const" && s.ThinkDist != "exp" {
		r.fail("BB_THINK_DIST", s.ThinkDist, "expected const or exp")
	}
	s.Warmup = r.duration("BB_WARMUP", "10s")
	s.WarmupRamp = r.number("BB_WARMUP_RAMP", 0.5, 0, 1)
	s.Duration = r.duration("BB_DURATION", "20s")
	s.InvalidShare = r.number("BB_INVALID_SHARE", 0, 0, 1)
	s.PayloadBytes = r.integer("BB_PAYLOAD_BYTES", 1024, 1, 1<<26)
	s.Scale = r.integer("BB_SCALE", 1, 1, 100_000)
	s.Seed = r.integer("BB_SEED", 42, 0, math.MaxInt32)
	s.Timeout = r.duration("BB_TIMEOUT", "10s")
	s.SummaryPath = r.str("BB_SUMMARY", "")
	s.ProgressPath = r.str("BB_PROGRESS", "")
	s.TracePath = r.str("BB_TRACE", "")
	if s.TracePath == "0" {
		s.TracePath = ""
	}
	s.SetupPages = r.integer("BB_SETUP_PAGES", 3, 0, 100)
	s.Plan = r.integer("BB_PLAN", 0, 0, 1_000_000)
	s.Shards = r.integer("BB_SHARDS", 1, 1, 10_000)
	s.ShardIndex = r.integer("BB_SHARD_INDEX", r.integer("JOB_COMPLETION_INDEX", 0, 0, 9_999), 0, 9_999)
	s.LateBound = time.Duration(r.number("BB_LATE_BOUND_MS", 50, 1, 600_000) * float64(time.Millisecond))
	s.MaxConns = r.integer("BB_MAX_CONNS", 5000, 1, 1_000_000)
	s.IdleTimeout = r.duration("BB_IDLE_TIMEOUT", "5s")
	s.Procs = r.integer("BB_PROCS", 0, 0, 1024)
	stages, err := ParseStages(r.str("BB_STAGES", ""))
	if err != nil {
		r.fail("BB_STAGES", r.str("BB_STAGES", ""), err.Error())
	}
	s.Stages = stages
	steps, err := ParseRates(r.str("BB_STEPS", ""))
	if err != nil {
		r.fail("BB_STEPS", r.str("BB_STEPS", ""), err.Error())
	}
	s.Steps = steps
	s.StepDuration = r.duration("BB_STEP_DURATION", "5s")
	s.StopP99 = time.Duration(r.number("BB_STOP_P99_MS", 0, 0, 600_000) * float64(time.Millisecond))
	s.StopAfter = r.integer("BB_STOP_AFTER", 2, 1, 1000)
	if len(s.Steps) > 0 {
		s.Rate = s.Steps[0]
	}
	s.WarmupFrom = r.number("BB_WARMUP_FROM", s.Rate/10, 0, 1e7)
	if at := r.number("BB_START_AT", 0, 1, 1e11); at > 0 {
		// To the microsecond: a float64 of Unix seconds carries no more.
		s.StartAt = time.UnixMicro(int64(math.Round(at * 1e6)))
	}
	s.Phase = r.number("BB_PHASE", 0, 0, 1)
	if s.Phase >= 1 {
		r.fail("BB_PHASE", r.str("BB_PHASE", ""), "expected a share of an interval, at least 0 and below 1")
	}
	if r.err != nil {
		return nil, r.err
	}
	if s.Duration <= 0 && len(s.Stages) == 0 {
		return nil, &Error{"BB_DURATION", r.str("BB_DURATION", ""), "the measurement must last more than 0s"}
	}
	if s.Timeout <= 0 {
		return nil, &Error{"BB_TIMEOUT", r.str("BB_TIMEOUT", ""), "the request timeout must be above 0s"}
	}
	if s.ShardIndex >= s.Shards {
		return nil, &Error{"BB_SHARD_INDEX", strconv.Itoa(s.ShardIndex), fmt.Sprintf("must be below BB_SHARDS=%d", s.Shards)}
	}
	if len(s.Steps) > 0 {
		if s.Model != "open" || len(s.Stages) > 0 {
			return nil, &Error{"BB_STEPS", r.str("BB_STEPS", ""), "a ladder needs the open model and no BB_STAGES"}
		}
		if s.StepDuration <= 0 {
			return nil, &Error{"BB_STEP_DURATION", r.str("BB_STEP_DURATION", ""), "a step must last more than 0s"}
		}
		s.Duration = time.Duration(len(s.Steps)) * s.StepDuration
	}
	if len(s.Stages) > 0 {
		var total time.Duration
		for _, st := range s.Stages {
			total += st.Duration
		}
		s.Duration = total
	}
	s.applyShard()
	return s, nil
}

// applyShard gives shard i of N its part of the load: 1/N of the rate (or of the users) and seed+i,
// so N processes together offer the configured total with distinct request sequences.
func (s *Settings) applyShard() {
	if s.Shards <= 1 {
		return
	}
	n := float64(s.Shards)
	s.Rate /= n
	s.WarmupFrom /= n
	for k := range s.Stages {
		s.Stages[k].Target /= n
	}
	for k := range s.Steps {
		s.Steps[k] /= n
	}
	users := s.Users / s.Shards
	if s.ShardIndex < s.Users%s.Shards {
		users++
	}
	s.Users = max(users, 1)
	s.Seed += s.ShardIndex
}
