package events

import (
	"fmt"
	"math"
)

// Role is what an event is used for.
type Role int8

const (
	Train Role = iota
	Val
	Test
)

// Split gives every event of every user a role: Split[u][i] is the role of
// l.Users[u].Events[i]. Every split here is per user and chronological: a
// user's validation events follow its training events and precede its
// test events, so no target is predicted from its own future.
type Split [][]Role

// Split rules.
const (
	// LeaveOneOut: a user's last event is test, the one before validation,
	// the rest training (users with fewer than 3 events: all training).
	LeaveOneOut = "leave-one-out"
	// LastFraction: a user's last ⌈test·n⌉ events are test, the ⌈val·n⌉
	// before them validation (users with fewer than 3 events: training).
	LastFraction = "last-fraction"
)

// SplitRule names a rule and its fractions (LastFraction only).
type SplitRule struct {
	Rule string  `json:"rule"`
	Val  float64 `json:"val,omitempty"`
	Test float64 `json:"test,omitempty"`
}

// Apply splits l by the rule.
func (s SplitRule) Apply(l *Log) (Split, error) {
	last := func(n int) (nVal, nTest int) { return 1, 1 }
	switch s.Rule {
	case LeaveOneOut:
	case LastFraction:
		if !(s.Val > 0 && s.Test > 0 && s.Val+s.Test < 1) {
			return nil, fmt.Errorf("split %s: val %v and test %v must be positive with a sum below 1", s.Rule, s.Val, s.Test)
		}
		last = func(n int) (int, int) {
			return int(math.Ceil(s.Val * float64(n))), int(math.Ceil(s.Test * float64(n)))
		}
	default:
		return nil, fmt.Errorf("split rule %q: want %s or %s", s.Rule, LeaveOneOut, LastFraction)
	}
	sp := make(Split, len(l.Users))
	for u, usr := range l.Users {
		n := len(usr.Events)
		sp[u] = make([]Role, n)
		if n < 3 {
			continue
		}
		nVal, nTest := last(n)
		nTest = min(nTest, n-2) // at least one training and one validation event
		nVal = min(nVal, n-1-nTest)
		for i := n - nTest - nVal; i < n; i++ {
			sp[u][i] = Val
			if i >= n-nTest {
				sp[u][i] = Test
			}
		}
	}
	return sp, nil
}

// Count is the number of events with role r.
func (s Split) Count(r Role) int {
	n := 0
	for _, u := range s {
		for _, x := range u {
			if x == r {
				n++
			}
		}
	}
	return n
}

// Window is a run of one user's consecutive events fed to a causal model
// as tokens: events [Start, End) of l.Users[User]. Targets are the events
// scored in it, ascending; target j is read from the output of token
// j − Shift (see Windows).
type Window struct {
	User, Start, End int
	Targets          []int
}

// Windows covers every event of role want with windows of at most maxLen
// tokens, each target scored in exactly one window. shift says which
// token's output predicts target j: 0 when the target event is itself an
// input token (pointwise ranking: its item is known, its outcome is not),
// 1 when the previous event's output predicts it (next-item prediction;
// a user's first event is then never a target).
//
// A target's context is the tokens before its output token in its window.
// Each target gets at least min(minContext, tokens before it) of them, at
// most maxLen − 1: windows start minContext tokens before their first
// target, and are extended backwards when they would end short. With
// minContext 0 the windows of a run of targets do not overlap (training);
// with maxLen/2 every target sees at least half a window of history
// (evaluation, at twice the cost).
func Windows(l *Log, sp Split, want Role, shift, maxLen, minContext int) []Window {
	if maxLen < 1 || minContext < 0 || minContext >= maxLen || shift < 0 || shift > 1 {
		panic(fmt.Sprintf("events: Windows(shift %d, maxLen %d, minContext %d)", shift, maxLen, minContext))
	}
	var out []Window
	var tok []int
	for u, roles := range sp {
		tok = tok[:0]
		for j, r := range roles {
			if r == want && j-shift >= 0 {
				tok = append(tok, j-shift)
			}
		}
		for i := 0; i < len(tok); {
			s := max(0, tok[i]-minContext)
			e := min(s+maxLen, tok[len(tok)-1]+1)
			s = max(0, e-maxLen)
			w := Window{User: u, Start: s, End: e}
			for ; i < len(tok) && tok[i] < e; i++ {
				w.Targets = append(w.Targets, tok[i]+shift)
			}
			out = append(out, w)
		}
	}
	return out
}
