package venue

import "time"

type mktState struct{}

type liveCandles struct{}

func (l *liveCandles) add(st *instState, price, q int64, side Side, now int64) {}
func (l *liveCandles) roll(st *instState, now int64)                           {}

type liveStats struct{}

type simulator struct{}

func newSimulator(v *Venue, seed int64) *simulator { return &simulator{} }
func (s *simulator) init(now time.Time)            {}
func (s *simulator) step(now time.Time)            {}

type history struct{}

func newHistory(v *Venue, seed int64, days int) *history { return &history{} }

// Candle is an OHLCV bar.
type Candle struct{}
