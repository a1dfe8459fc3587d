package compat

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

var tagCycle = []string{"TagA", "TagB", "TagC"}

func callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), sendTimeout)
}

// checkSendResult asserts a SEND_OK result for one single (non-batch) message.
func checkSendResult(t *testing.T, i int, topic string, res *primitive.SendResult, err error) bool {
	t.Helper()
	if err != nil {
		t.Errorf("send #%d: %v", i, err)
		return false
	}
	if res.Status != primitive.SendOK {
		t.Errorf("send #%d: status %v, want SendOK", i, res.Status)
		return false
	}
	if res.MsgID == "" || res.OffsetMsgID == "" {
		t.Errorf("send #%d: empty MsgID %q / OffsetMsgID %q", i, res.MsgID, res.OffsetMsgID)
	}
	if res.MessageQueue == nil || res.MessageQueue.Topic != topic || res.QueueOffset < 0 {
		t.Errorf("send #%d: bad queue/offset in result %v", i, res)
	}
	return true
}

// Scenario 1: SendSync with tags and keys, consumed by a clustering push consumer
// (half sent before the consumer starts, half while it is long-polling).
func TestSendSyncPushConsumeClustering(t *testing.T) {
	namesrv(t)
	t.Parallel()
	topic, group := names("Sync")
	p := newProducer(t, group+"_P")

	const total = 100
	want := make([]expected, 0, total)
	type qo struct {
		q int
		o int64
	}
	seen := map[qo]int{}
	offsets := map[string]qo{}
	send := func(from, to int) {
		for i := from; i < to; i++ {
			tag := tagCycle[i%len(tagCycle)]
			keys := []string{fmt.Sprintf("key-%d", i), fmt.Sprintf("biz-%d", i%7)}
			body := []byte(fmt.Sprintf("sync-%s-%03d", runID(), i))
			m := primitive.NewMessage(topic, body).WithTag(tag).WithKeys(keys)
			ctx, cancel := callCtx()
			res, err := p.SendSync(ctx, m)
			cancel()
			if !checkSendResult(t, i, topic, res, err) {
				t.FailNow()
			}
			k := qo{res.MessageQueue.QueueId, res.QueueOffset}
			if j, dup := seen[k]; dup {
				t.Errorf("send #%d and #%d got the same queue %d / offset %d", j, i, k.q, k.o)
			}
			seen[k] = i
			offsets[string(body)] = k
			want = append(want, expected{body: body, tag: tag, keys: strings.Join(keys, " "), msgID: res.MsgID})
		}
	}
	send(0, total/2)

	col := newCollector()
	startPushConsumer(t, topic, group, col, pushOpts{selector: consumer.MessageSelector{}, model: consumer.Clustering})
	send(total/2, total)

	if !col.waitFor(t, total, consumeTimeout) {
		t.Errorf("only %d of %d messages consumed within %s", col.count(), total, consumeTimeout)
	}
	got := col.settle(500 * time.Millisecond)
	checkReceived(t, want, got, topic)
	for body, k := range offsets {
		if m, ok := got[body]; ok && (m.Queue == nil || m.Queue.QueueId != k.q || m.QueueOffset != k.o) {
			t.Errorf("%s: consumed at queue %v offset %d, SendResult said queue %d offset %d", body, m.Queue, m.QueueOffset, k.q, k.o)
		}
	}
	if col.dups > 0 {
		t.Logf("note: %d duplicate deliveries", col.dups)
	}
}

// Scenario 2: SendAsync, every callback reports SendOK, all consumed.
func TestSendAsyncConsume(t *testing.T) {
	namesrv(t)
	t.Parallel()
	topic, group := names("Async")
	p := newProducer(t, group+"_P")

	const total = 50
	var (
		mu   sync.Mutex
		want []expected
		wg   sync.WaitGroup
		errs []string
	)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < total; i++ {
		tag := tagCycle[i%len(tagCycle)]
		body := []byte(fmt.Sprintf("async-%s-%03d", runID(), i))
		key := fmt.Sprintf("akey-%d", i)
		m := primitive.NewMessage(topic, body).WithTag(tag).WithKeys([]string{key})
		var once sync.Once
		wg.Add(1)
		err := p.SendAsync(ctx, func(_ context.Context, res *primitive.SendResult, err error) {
			once.Do(func() {
				defer wg.Done()
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					errs = append(errs, fmt.Sprintf("%s: %v", body, err))
				case res == nil || res.Status != primitive.SendOK:
					errs = append(errs, fmt.Sprintf("%s: result %v", body, res))
				default:
					want = append(want, expected{body: body, tag: tag, keys: key, msgID: res.MsgID})
				}
			})
		}, m)
		if err != nil {
			wg.Done()
			t.Fatalf("SendAsync #%d returned error: %v", i, err)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("not all SendAsync callbacks fired within 30s")
	}
	if len(errs) > 0 {
		t.Fatalf("%d async sends failed, e.g. %s", len(errs), errs[0])
	}

	col := newCollector()
	startPushConsumer(t, topic, group, col, pushOpts{model: consumer.Clustering})
	if !col.waitFor(t, total, consumeTimeout) {
		t.Errorf("only %d of %d messages consumed within %s", col.count(), total, consumeTimeout)
	}
	checkReceived(t, want, col.settle(500*time.Millisecond), topic)
}

// Scenario 3: SendOneWay (no response), all consumed.
func TestSendOneWayConsume(t *testing.T) {
	namesrv(t)
	t.Parallel()
	topic, group := names("OneWay")
	p := newProducer(t, group+"_P")

	const total = 30
	want := make([]expected, 0, total)
	for i := 0; i < total; i++ {
		tag := tagCycle[i%len(tagCycle)]
		body := []byte(fmt.Sprintf("oneway-%s-%03d", runID(), i))
		m := primitive.NewMessage(topic, body).WithTag(tag).WithKeys([]string{fmt.Sprintf("okey-%d", i)})
		ctx, cancel := callCtx()
		err := p.SendOneWay(ctx, m)
		cancel()
		if err != nil {
			t.Fatalf("SendOneWay #%d: %v", i, err)
		}
		// the client stamps UNIQ_KEY on the message before writing it
		want = append(want, expected{body: body, tag: tag, keys: fmt.Sprintf("okey-%d", i),
			msgID: m.GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex)})
	}

	col := newCollector()
	startPushConsumer(t, topic, group, col, pushOpts{model: consumer.Clustering})
	if !col.waitFor(t, total, consumeTimeout) {
		t.Errorf("only %d of %d messages consumed within %s", col.count(), total, consumeTimeout)
	}
	checkReceived(t, want, col.settle(500*time.Millisecond), topic)
}

// Scenario 4: producer.SendSync with several messages -> one SEND_BATCH_MESSAGE (320).
func TestSendBatchConsume(t *testing.T) {
	namesrv(t)
	t.Parallel()
	topic, group := names("Batch")
	p := newProducer(t, group+"_P")

	batches := []int{10, 5, 16}
	var want []expected
	type batchRes struct {
		q      int
		off    int64
		bodies []string
	}
	var results []batchRes
	n := 0
	for bi, size := range batches {
		msgs := make([]*primitive.Message, 0, size)
		br := batchRes{}
		for j := 0; j < size; j++ {
			tag := tagCycle[n%len(tagCycle)]
			body := []byte(fmt.Sprintf("batch-%s-%d-%02d", runID(), bi, j))
			keys := []string{fmt.Sprintf("bkey-%d-%d", bi, j)}
			props := map[string]string{"batchIndex": fmt.Sprint(bi), "pos": fmt.Sprint(j), "custom": "v-" + fmt.Sprint(n)}
			// WithProperties replaces the whole property map (tags and keys included), so it
			// goes first and gets its own copy
			m := primitive.NewMessage(topic, body)
			m.WithProperties(copyProps(props))
			m.WithTag(tag).WithKeys(keys)
			msgs = append(msgs, m)
			want = append(want, expected{body: body, tag: tag, keys: keys[0], props: props})
			br.bodies = append(br.bodies, string(body))
			n++
		}
		ctx, cancel := callCtx()
		res, err := p.SendSync(ctx, msgs...)
		cancel()
		if err != nil {
			t.Fatalf("batch %d SendSync: %v", bi, err)
		}
		if res.Status != primitive.SendOK {
			t.Fatalf("batch %d: status %v", bi, res.Status)
		}
		if res.OffsetMsgID == "" || res.MessageQueue == nil {
			t.Errorf("batch %d: incomplete result %v", bi, res)
		}
		if ids := strings.Split(res.OffsetMsgID, ","); len(ids) != size {
			t.Errorf("batch %d: OffsetMsgID holds %d ids, want %d (%q)", bi, len(ids), size, res.OffsetMsgID)
		}
		t.Logf("batch %d (%d msgs): queue %d offset %d msgID %q", bi, size, res.MessageQueue.QueueId, res.QueueOffset, res.MsgID)
		br.q, br.off = res.MessageQueue.QueueId, res.QueueOffset
		results = append(results, br)
	}

	col := newCollector()
	startPushConsumer(t, topic, group, col, pushOpts{model: consumer.Clustering})
	if !col.waitFor(t, n, consumeTimeout) {
		t.Errorf("only %d of %d batched messages consumed within %s", col.count(), n, consumeTimeout)
	}
	got := col.settle(500 * time.Millisecond)
	checkReceived(t, want, got, topic)
	// a batch lands in one queue at consecutive offsets starting at SendResult.QueueOffset
	for bi, br := range results {
		for j, b := range br.bodies {
			m, ok := got[b]
			if !ok {
				continue
			}
			if m.Queue.QueueId != br.q || m.QueueOffset != br.off+int64(j) {
				t.Errorf("batch %d msg %d: queue %d offset %d, want queue %d offset %d",
					bi, j, m.Queue.QueueId, m.QueueOffset, br.q, br.off+int64(j))
			}
		}
	}
}
