package compat

import (
	"fmt"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// Scenario 8: two BROADCASTING consumers of one group (different InstanceName) both get
// every message. Offsets of broadcasting consumers are kept locally (see main_test.go).
func TestBroadcastingTwoConsumers(t *testing.T) {
	namesrv(t)
	t.Parallel()
	topic, group := names("Bcast")
	p := newProducer(t, group+"_P")

	const total = 40
	var want []expected
	send := func(from, to int) {
		for i := from; i < to; i++ {
			body := []byte(fmt.Sprintf("bcast-%s-%03d", runID(), i))
			tag := tagCycle[i%len(tagCycle)]
			ctx, cancel := callCtx()
			res, err := p.SendSync(ctx, primitive.NewMessage(topic, body).WithTag(tag).WithKeys([]string{fmt.Sprint("bk", i)}))
			cancel()
			if !checkSendResult(t, i, topic, res, err) {
				t.FailNow()
			}
			want = append(want, expected{body: body, tag: tag, keys: fmt.Sprint("bk", i), msgID: res.MsgID})
		}
	}
	send(0, total/2)

	cols := []*collector{newCollector(), newCollector()}
	for i, col := range cols {
		startPushConsumer(t, topic, group, col, pushOpts{model: consumer.BroadCasting, instance: nextInstance(fmt.Sprint("bc", i))})
	}
	send(total/2, total)

	for i, col := range cols {
		if !col.waitFor(t, total, consumeTimeout) {
			t.Errorf("broadcast consumer %d got only %d of %d", i, col.count(), total)
		}
	}
	time.Sleep(500 * time.Millisecond)
	for i, col := range cols {
		t.Logf("consumer %d: %d distinct, %d deliveries", i, col.count(), col.total)
		checkReceived(t, want, col.snapshot(), topic)
	}
}
