package atrium

import (
	"reflect"
	"testing"
)

func TestSSEMessagesCompleteAcrossArbitraryChunks(t *testing.T) {
	text := "retry: 250\n: keep-alive\nid: 1\ndata: {\"a\":\ndata: 1}\n\nid: 2\nevent: x\ndata: two\r\n\r\n"
	var parser sseParser
	var messages []sseMessage
	for i := 0; i < len(text); i += 3 {
		end := i + 3
		if end > len(text) {
			end = len(text)
		}
		messages = append(messages, parser.feed(text[i:end])...)
	}
	want := []sseMessage{{data: "{\"a\":\n1}", id: "1", hasID: true}, {data: "two", id: "2", hasID: true, event: "x"}}
	if !reflect.DeepEqual(messages, want) || parser.retryMs != 250 {
		t.Fatalf("%#v retry %d", messages, parser.retryMs)
	}
}
