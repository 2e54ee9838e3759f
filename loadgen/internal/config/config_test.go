package config

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func env(vars map[string]string) Lookup {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestDefaults(t *testing.T) {
	s, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := &Settings{
		Targets: []string{"http://127.0.0.1:8080"}, Mix: "browse", Model: "open", Rate: 100, Users: 10,
		ThinkDist: "const", Warmup: 10 * time.Second, WarmupRamp: 0.5, WarmupFrom: 10, Duration: 20 * time.Second,
		PayloadBytes: 1024, Scale: 1, Seed: 42, Timeout: 10 * time.Second, SetupPages: 3, Shards: 1,
		LateBound: 50 * time.Millisecond, MaxConns: 5000, IdleTimeout: 5 * time.Second,
		StepDuration: 5 * time.Second, StopAfter: 2,
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", s, want)
	}
}

func TestSettingsAreRead(t *testing.T) {
	s, err := FromEnv(env(map[string]string{
		"BB_TARGETS": " http://127.0.0.1:9000/ ,http://localhost,, http://10.0.0.1:81/api", "BB_MIX": "payload",
		"BB_MODEL": "closed", "BB_USERS": "7", "BB_THINK_MS": "12.5", "BB_THINK_DIST": "exp", "BB_WARMUP": "1m30s",
		"BB_DURATION": "2.5", "BB_INVALID_SHARE": "0.25", "BB_PAYLOAD_BYTES": "70000", "BB_SCALE": "3",
		"BB_SEED": "0", "BB_TIMEOUT": "500ms", "BB_LATE_BOUND_MS": "2.5", "BB_MAX_CONNS": "4", "BB_PLAN": "9",
		"BB_TRACE": "0",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://127.0.0.1:9000", "http://localhost:80", "http://10.0.0.1:81/api"}; !reflect.DeepEqual(s.Targets, want) {
		t.Errorf("targets %q, want %q", s.Targets, want)
	}
	if s.Mix != "payload" || s.Model != "closed" || s.Users != 7 || s.ThinkMS != 12.5 || s.ThinkDist != "exp" ||
		s.Warmup != 90*time.Second || s.Duration != 2500*time.Millisecond || s.InvalidShare != 0.25 ||
		s.PayloadBytes != 70000 || s.Scale != 3 || s.Seed != 0 || s.Timeout != 500*time.Millisecond ||
		s.LateBound != 2500*time.Microsecond || s.MaxConns != 4 || s.Plan != 9 || s.TracePath != "" {
		t.Errorf("settings %+v", s)
	}
}

func TestStagesSetTheDuration(t *testing.T) {
	s, err := FromEnv(env(map[string]string{"BB_STAGES": "10s:100, 1s:400,500ms:0", "BB_DURATION": "99s"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []Stage{{10 * time.Second, 100}, {time.Second, 400}, {500 * time.Millisecond, 0}}
	if !reflect.DeepEqual(s.Stages, want) || s.Duration != 11500*time.Millisecond {
		t.Errorf("stages %v over %v, want %v over 11.5s", s.Stages, s.Duration, want)
	}
	// With stages, BB_DURATION=0 is fine: the stages are the measurement.
	if _, err := FromEnv(env(map[string]string{"BB_STAGES": "1s:10", "BB_DURATION": "0s"})); err != nil {
		t.Errorf("stages with BB_DURATION=0s: %v", err)
	}
}

func TestBadSettings(t *testing.T) {
	cases := []struct {
		vars map[string]string
		name string
	}{
		{map[string]string{"BB_MIX": "shopping"}, "BB_MIX"},
		{map[string]string{"BB_RATE": "0"}, "BB_RATE"},
		{map[string]string{"BB_RATE": "-5"}, "BB_RATE"},
		{map[string]string{"BB_RATE": "fast"}, "BB_RATE"},
		{map[string]string{"BB_RATE": "NaN"}, "BB_RATE"},
		{map[string]string{"BB_RATE": "+Inf"}, "BB_RATE"},
		{map[string]string{"BB_TARGETS": "127.0.0.1:8080"}, "BB_TARGETS"},
		{map[string]string{"BB_TARGETS": "https://127.0.0.1:8443"}, "BB_TARGETS"},
		{map[string]string{"BB_TARGETS": "http://"}, "BB_TARGETS"},
		{map[string]string{"BB_TARGETS": "http://127.0.0.1:8080/?x=1"}, "BB_TARGETS"},
		{map[string]string{"BB_TARGETS": "http://127.0.0.1:8080,ftp://h"}, "BB_TARGETS"},
		{map[string]string{"BB_TARGETS": " , "}, "BB_TARGETS"},
		{map[string]string{"BB_DURATION": "10 seconds"}, "BB_DURATION"},
		{map[string]string{"BB_DURATION": "-1s"}, "BB_DURATION"},
		{map[string]string{"BB_DURATION": "0s"}, "BB_DURATION"},
		{map[string]string{"BB_WARMUP": "soon"}, "BB_WARMUP"},
		{map[string]string{"BB_WARMUP": "-2"}, "BB_WARMUP"},
		{map[string]string{"BB_TIMEOUT": "0"}, "BB_TIMEOUT"},
		{map[string]string{"BB_STAGES": "10s"}, "BB_STAGES"},
		{map[string]string{"BB_STAGES": "10s:100,"}, "BB_STAGES"},
		{map[string]string{"BB_STAGES": "10s:lots"}, "BB_STAGES"},
		{map[string]string{"BB_STEPS": "100,0"}, "BB_STEPS"},
		{map[string]string{"BB_STEPS": "100,fast"}, "BB_STEPS"},
		{map[string]string{"BB_STEPS": "100", "BB_MODEL": "closed"}, "BB_STEPS"},
		{map[string]string{"BB_STEPS": "100", "BB_STAGES": "1s:10"}, "BB_STEPS"},
		{map[string]string{"BB_PHASE": "1"}, "BB_PHASE"},
		{map[string]string{"BB_PHASE": "-0.25"}, "BB_PHASE"},
		{map[string]string{"BB_START_AT": "tomorrow"}, "BB_START_AT"},
		{map[string]string{"BB_START_AT": "0"}, "BB_START_AT"},
		{map[string]string{"BB_STEPS": "100", "BB_STEP_DURATION": "0s"}, "BB_STEP_DURATION"},
		{map[string]string{"BB_STOP_P99_MS": "-1"}, "BB_STOP_P99_MS"},
		{map[string]string{"BB_STOP_AFTER": "0"}, "BB_STOP_AFTER"},
		{map[string]string{"BB_STAGES": "ten:100"}, "BB_STAGES"},
		{map[string]string{"BB_STAGES": "10s:-1"}, "BB_STAGES"},
		{map[string]string{"BB_MODEL": "half-open"}, "BB_MODEL"},
		{map[string]string{"BB_THINK_DIST": "normal"}, "BB_THINK_DIST"},
		{map[string]string{"BB_USERS": "0"}, "BB_USERS"},
		{map[string]string{"BB_USERS": "2.5"}, "BB_USERS"},
		{map[string]string{"BB_INVALID_SHARE": "1.01"}, "BB_INVALID_SHARE"},
		{map[string]string{"BB_PAYLOAD_BYTES": "0"}, "BB_PAYLOAD_BYTES"},
		{map[string]string{"BB_SCALE": "0"}, "BB_SCALE"},
		{map[string]string{"BB_SEED": "-1"}, "BB_SEED"},
		{map[string]string{"BB_SEED": "2147483648"}, "BB_SEED"},
		{map[string]string{"BB_WARMUP_RAMP": "2"}, "BB_WARMUP_RAMP"},
		{map[string]string{"BB_MAX_CONNS": "0"}, "BB_MAX_CONNS"},
		{map[string]string{"BB_LATE_BOUND_MS": "0"}, "BB_LATE_BOUND_MS"},
		{map[string]string{"BB_SHARDS": "0"}, "BB_SHARDS"},
		{map[string]string{"BB_SHARDS": "2", "BB_SHARD_INDEX": "2"}, "BB_SHARD_INDEX"},
		{map[string]string{"BB_SHARD_INDEX": "1"}, "BB_SHARD_INDEX"},
		{map[string]string{"BB_SHARDS": "3", "JOB_COMPLETION_INDEX": "3"}, "BB_SHARD_INDEX"},
		{map[string]string{"JOB_COMPLETION_INDEX": "x"}, "JOB_COMPLETION_INDEX"},
		// The first bad setting is the one reported.
		{map[string]string{"BB_TARGETS": "nope", "BB_MIX": "nope"}, "BB_TARGETS"},
	}
	for _, c := range cases {
		s, err := FromEnv(env(c.vars))
		var bad *Error
		if !errors.As(err, &bad) {
			t.Errorf("%v: got %+v, %v; want an *Error", c.vars, s, err)
			continue
		}
		if bad.Name != c.name || bad.Want == "" {
			t.Errorf("%v: error names %s (%q), want %s", c.vars, bad.Name, bad.Error(), c.name)
		}
		if s != nil {
			t.Errorf("%v: settings returned with the error", c.vars)
		}
	}
}

func TestShardsSplitTheLoad(t *testing.T) {
	base := map[string]string{
		"BB_RATE": "300", "BB_USERS": "10", "BB_SEED": "42", "BB_SHARDS": "3", "BB_STAGES": "1s:600,2s:30",
	}
	var rate, users float64
	for i, wantUsers := range []int{4, 3, 3} {
		vars := map[string]string{"JOB_COMPLETION_INDEX": string(rune('0' + i))}
		for k, v := range base {
			vars[k] = v
		}
		s, err := FromEnv(env(vars))
		if err != nil {
			t.Fatal(err)
		}
		if s.ShardIndex != i || s.Rate != 100 || s.WarmupFrom != 10 || s.Users != wantUsers || s.Seed != 42+i {
			t.Errorf("shard %d: index %d, rate %g, warm-up from %g, users %d, seed %d", i, s.ShardIndex, s.Rate, s.WarmupFrom, s.Users, s.Seed)
		}
		if want := []Stage{{time.Second, 200}, {2 * time.Second, 10}}; !reflect.DeepEqual(s.Stages, want) {
			t.Errorf("shard %d: stages %v, want %v", i, s.Stages, want)
		}
		rate += s.Rate
		users += float64(s.Users)
	}
	if rate != 300 || users != 10 {
		t.Errorf("the shards together offer %g req/s and %g users, want 300 and 10", rate, users)
	}
	// BB_SHARD_INDEX wins over JOB_COMPLETION_INDEX; every shard has at least one user.
	s, err := FromEnv(env(map[string]string{"BB_SHARDS": "4", "BB_SHARD_INDEX": "3", "JOB_COMPLETION_INDEX": "0", "BB_USERS": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.ShardIndex != 3 || s.Users != 1 || s.Seed != 45 {
		t.Errorf("index %d, users %d, seed %d", s.ShardIndex, s.Users, s.Seed)
	}
}

func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"10s", 10 * time.Second, true}, {"1m30s", 90 * time.Second, true}, {"500ms", 500 * time.Millisecond, true},
		{"2.5", 2500 * time.Millisecond, true}, {"0", 0, true}, {"", 0, false}, {"-1s", 0, false}, {"5 s", 0, false},
		{"Inf", 0, false},
	} {
		got, err := ParseDuration(c.in)
		if (err == nil) != c.ok || c.ok && got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestStepsMakeTheMeasurement(t *testing.T) {
	s, err := FromEnv(env(map[string]string{"BB_STEPS": "100, 150,225", "BB_STEP_DURATION": "4s", "BB_RATE": "7"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.Duration != 12*time.Second || s.Rate != 100 || len(s.Steps) != 3 || s.Steps[2] != 225 {
		t.Errorf("steps %v over %v at first rate %g; want 3 steps, 12s, 100", s.Steps, s.Duration, s.Rate)
	}
}

func TestStartAtAndPhaseAreRead(t *testing.T) {
	s, err := FromEnv(env(map[string]string{"BB_START_AT": "1795900000.25", "BB_PHASE": "0.5"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Unix(1795900000, 250_000_000); !s.StartAt.Equal(want) || s.Phase != 0.5 {
		t.Fatalf("start %v, phase %v; want %v, 0.5", s.StartAt, s.Phase, want)
	}
	s, err = FromEnv(env(nil))
	if err != nil || !s.StartAt.IsZero() || s.Phase != 0 {
		t.Fatalf("defaults: start %v, phase %v, %v", s.StartAt, s.Phase, err)
	}
}
