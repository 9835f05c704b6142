from atrium.sse import SseMessage, SseParser


def test_messages_complete_across_arbitrary_chunks() -> None:
    text = 'retry: 250\n: keep-alive\nid: 1\ndata: {"a":\ndata: 1}\n\nid: 2\nevent: x\ndata: two\r\n\r\n'
    parser = SseParser()
    messages = []
    for i in range(0, len(text), 3):
        messages += parser.feed(text[i : i + 3])
    assert messages == [SseMessage('{"a":\n1}', "1"), SseMessage("two", "2", "x")]
    assert parser.retry_ms == 250


def test_the_id_carries_over_and_a_blank_block_dispatches_nothing() -> None:
    parser = SseParser()
    assert parser.feed("id: 7\n\n") == []
    assert parser.feed("data:x\n\n") == [SseMessage("x", "7")]
