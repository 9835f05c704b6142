package atrium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// StreamOptions tune a trace stream's resumption.
type StreamOptions struct {
	// LastEventID resumes after this event id (the Seq of the last event seen).
	LastEventID string
	// MaxReconnects in a row without receiving an event before giving up; default 5.
	MaxReconnects int
	// ReconnectDelay before reconnecting; a `retry:` field from the server replaces it. Default 1 s.
	ReconnectDelay time.Duration
}

// After these the server closes the stream; reconnecting would only wait for nothing.
var terminalTypes = map[string]bool{"step_complete": true, "timeout": true, "error": true}

// TraceStream iterates a workflow's trace events. A dropped connection (network error, 5xx, or
// the body ending early) is reopened with Last-Event-ID, so the server replays exactly what was
// missed and nothing twice.
type TraceStream struct {
	ctx         context.Context
	svc         *service
	path        string
	lastEventID string
	hasLast     bool
	maxRetries  int
	delay       time.Duration
	failures    int

	body    io.ReadCloser
	parser  sseParser
	pending []TraceEvent
	event   TraceEvent
	err     error
	done    bool
}

func newTraceStream(ctx context.Context, svc *service, path string, options StreamOptions) *TraceStream {
	s := &TraceStream{ctx: ctx, svc: svc, path: path, maxRetries: 5, delay: time.Second}
	if options.LastEventID != "" {
		s.lastEventID, s.hasLast = options.LastEventID, true
	}
	if options.MaxReconnects > 0 {
		s.maxRetries = options.MaxReconnects
	}
	if options.ReconnectDelay > 0 {
		s.delay = options.ReconnectDelay
	}
	return s
}

// Next advances to the next event; false at the end of the step or on an error (see Err).
func (s *TraceStream) Next() bool {
	for {
		if len(s.pending) > 0 {
			s.event, s.pending = s.pending[0], s.pending[1:]
			if terminalTypes[s.event.Type] {
				s.finish(nil)
			}
			return true
		}
		if s.done {
			return false
		}
		if s.body == nil {
			if fatal, err := s.open(); err != nil {
				if fatal || !s.retry() {
					s.finish(err)
					return false
				}
				continue
			}
		}
		chunk := make([]byte, 32*1024)
		n, err := s.body.Read(chunk)
		if n > 0 {
			if err := s.take(string(chunk[:n])); err != nil {
				s.finish(err)
				return false
			}
		}
		if err != nil {
			s.body.Close()
			s.body = nil
			if s.ctx.Err() != nil {
				s.finish(s.ctx.Err())
				return false
			}
			if err == io.EOF {
				err = errors.New("trace stream " + s.path + " ended before a terminal event")
			}
			if !s.retry() {
				s.finish(err)
				return false
			}
		}
	}
}

// Event is the event Next advanced to.
func (s *TraceStream) Event() TraceEvent { return s.event }

// Err is why the stream stopped early; nil after a terminal event.
func (s *TraceStream) Err() error { return s.err }

// LastEventID is the id to resume after, e.g. in a later process.
func (s *TraceStream) LastEventID() string { return s.lastEventID }

// Close stops following the stream.
func (s *TraceStream) Close() error {
	s.finish(s.err)
	return nil
}

func (s *TraceStream) finish(err error) {
	s.done, s.err = true, err
	if s.body != nil {
		s.body.Close()
		s.body = nil
	}
}

// open connects; fatal for answers a retry cannot change (4xx).
func (s *TraceStream) open() (fatal bool, err error) {
	req, err := s.svc.request(s.ctx, "GET", s.path, nil, nil)
	if err != nil {
		return true, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if s.hasLast {
		req.Header.Set("Last-Event-ID", s.lastEventID)
	}
	res, err := s.svc.http.Do(req)
	if err != nil {
		return s.ctx.Err() != nil, err
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode < 500, newError(res.StatusCode, raw)
	}
	s.body, s.parser = res.Body, sseParser{}
	return false, nil
}

func (s *TraceStream) take(text string) error {
	for _, message := range s.parser.feed(text) {
		if message.hasID {
			s.lastEventID, s.hasLast = message.id, true
		}
		s.failures = 0
		var event TraceEvent
		if err := json.Unmarshal([]byte(message.data), &event); err != nil {
			return fmt.Errorf("trace event: %w", err)
		}
		s.pending = append(s.pending, event)
	}
	if s.parser.retryMs > 0 {
		s.delay = time.Duration(s.parser.retryMs) * time.Millisecond
	}
	return nil
}

// retry waits before the next attempt; false once the reconnects are used up.
func (s *TraceStream) retry() bool {
	s.failures++
	if s.failures > s.maxRetries {
		return false
	}
	timer := time.NewTimer(s.delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}
