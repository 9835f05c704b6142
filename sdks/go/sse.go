package atrium

import "strings"

// sseMessage is one text/event-stream message.
type sseMessage struct {
	data, id, event string
	hasID           bool
}

// sseParser parses text/event-stream incrementally (the WHATWG EventSource rules): feed text in
// any chunking; each call returns the messages it completed.
type sseParser struct {
	buffer  string
	data    []string
	id      string
	hasID   bool
	event   string
	retryMs int
}

func (p *sseParser) feed(text string) []sseMessage {
	p.buffer += strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(text)
	var messages []sseMessage
	for {
		line, rest, found := strings.Cut(p.buffer, "\n")
		if !found {
			return messages
		}
		p.buffer = rest
		if message, ok := p.line(line); ok {
			messages = append(messages, message)
		}
	}
}

func (p *sseParser) line(line string) (sseMessage, bool) {
	if line == "" {
		if len(p.data) == 0 {
			p.event = ""
			return sseMessage{}, false
		}
		message := sseMessage{data: strings.Join(p.data, "\n"), id: p.id, hasID: p.hasID, event: p.event}
		p.data, p.event = nil, ""
		return message, true
	}
	if strings.HasPrefix(line, ":") {
		return sseMessage{}, false
	}
	name, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch name {
	case "data":
		p.data = append(p.data, value)
	case "id":
		if !strings.Contains(value, "\x00") {
			p.id, p.hasID = value, true
		}
	case "event":
		p.event = value
	case "retry":
		retry := 0
		for _, c := range value {
			if c < '0' || c > '9' {
				return sseMessage{}, false
			}
			retry = retry*10 + int(c-'0')
		}
		if value != "" {
			p.retryMs = retry
		}
	}
	return sseMessage{}, false
}
